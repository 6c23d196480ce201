"""The reader edition (tools/reader_edition.py, reader/chapters/): up to date with the sources,
with every placeholder filled, every role and directive turned into plain Markdown, and every
solution folded. Running the notebooks is tests/bootstrap/test_reader_notebooks.py; that its
glossary links hit the built glossary is tests/site/test_built_pages.py."""

import json
import re
from pathlib import Path

import pytest
import reader_edition as re_ed

ROOT = Path(__file__).resolve().parents[1]

READER = ROOT / "reader" / "chapters"


@pytest.fixture(scope="module")
def index():
    return re_ed.build_index()


@pytest.fixture(scope="module")
def edition():
    return {p.name: json.loads(p.read_text(encoding="utf-8")) for p in READER.glob("*.ipynb")}


def _markdown(nb) -> str:
    return "\n\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")


def test_committed_edition_is_what_the_sources_give_now():
    stale = re_ed.stale_files()
    assert not stale, f"regenerate with `python tools/reader_edition.py` (or make refresh): {stale}"


def test_one_reader_notebook_per_chapter_notebook_in_the_toc(index, edition):
    assert sorted(edition) == sorted(Path(d).name + ".ipynb"
                                     for d in re_ed.chapter_notebooks(index))


def test_no_myst_markup_is_left(edition):
    for name, nb in edition.items():
        text = _markdown(nb)
        for raw in ("{glue", "{term}", "{cite", "{numref}", "{ref}", "{doc}", "{eq}",
                    "```{", ":::{", ":label:", ":class:"):
            assert raw not in text, (name, raw)
        assert not re.search(r"^\([a-z0-9-]+\)=$", text, re.M), name


def test_glue_values_are_the_stored_ones_formatted_as_the_site_does(edition):
    # H100 SXM ridge point: 989.4 TFLOP/s dense BF16 over 3.35 TB/s (NVIDIA H100 datasheet)
    # is 295.3 FLOP/byte; the chapter glues it with {glue:text}`h100_ridge:.1f`.
    assert "the ridge is 295.3 [FLOP]" in _markdown(edition["04_memory_wall.ipynb"])


def test_format_plain_text_agrees_with_myst_nb():
    from myst_nb.core.variables import format_plain_text as myst
    for text, fmt in (("0.0987", ".1%"), ("12345.678", ",.0f"), ("'H100 SXM'", ""),
                      ("3", "d"), ("2.5e-05", ".2e"), ("np.float64(1.5)", "")):
        assert re_ed.format_plain_text(text, fmt) == myst(text, fmt), (text, fmt)


def test_roles_become_links_to_the_site_and_author_year_text(index, edition):
    base = index.base
    text = _markdown(edition["06_economics.ipynb"])
    # references.bib: pope2023efficiently is Pope, Douglas, Chowdhery, ... (2023).
    assert f"[Pope et al. (2023)]({base}chapters/references.html)" in text
    assert f"]({base}chapters/glossary.html#term-token)" in text
    assert (f"[A tour of the hardware: cheap arithmetic, expensive bytes]"
            f"({base}chapters/hardware_tour.html)") in text


def test_exercises_carry_the_sites_numbers_and_every_solution_is_folded(index, edition):
    for name, nb in edition.items():
        doc = f"chapters/{name[:-6]}"
        labels = [i for i, (d, t, _) in index.items.items() if d == doc and t == "exercise"]
        text = _markdown(nb)
        for label_ in labels:
            number = index.items[label_][2]
            assert f'<a id="{label_}"></a>\n\n> **Exercise {number}**' in text, (name, label_)
        # Markdown of a solution sits in <details>; its code cells are folded in Colab and Lab.
        opened = len(re.findall(r"^<details>\n<summary>Solution to Exercise ", text, re.M))
        assert opened == text.count("\n</details>") and opened >= len(labels) // 2, name
        titles = text + "".join("".join(c["source"]) for c in nb["cells"])
        for label_ in labels:
            assert f"Solution to Exercise {index.items[label_][2]}" in titles, (name, label_)
        for cell in nb["cells"]:
            first = "".join(cell["source"]).split("\n", 1)[0]
            if cell["cell_type"] == "code" and first.startswith("#@title Solution to Exercise"):
                assert cell["metadata"]["cellView"] == "form"
                assert cell["metadata"]["jupyter"] == {"source_hidden": True,
                                                       "outputs_hidden": True}


def test_solution_code_cells_are_exactly_those_between_the_markers(edition):
    src = json.loads((ROOT / "chapters" / "04_memory_wall.ipynb").read_text(encoding="utf-8"))
    inside, expected = False, set()
    for cell in src["cells"]:
        text = "".join(cell["source"])
        if cell["cell_type"] == "markdown":
            marks = re.findall(r"```\{(solution-start|solution-end)\}", text)
            if marks:
                inside = marks[-1] == "solution-start"
        elif inside:
            expected.add(cell["id"])
    folded = {c["id"] for c in edition["04_memory_wall.ipynb"]["cells"]
              if "".join(c["source"]).startswith("#@title Solution to Exercise")}
    assert expected and folded == expected


def test_the_setup_cell_comes_first_and_is_the_chapters_bootstrap(edition):
    for name, nb in edition.items():
        src = json.loads((ROOT / "chapters" / name).read_text(encoding="utf-8"))
        boot = "".join(next(c for c in src["cells"] if c["cell_type"] == "code")["source"])
        first = next(c for c in nb["cells"] if c["cell_type"] == "code")
        title, body = "".join(first["source"]).split("\n", 1)
        assert title.startswith("#@title Setup") and body == boot, name
        assert all(c["outputs"] == [] for c in nb["cells"] if c["cell_type"] == "code")


def test_figures_get_their_site_number_and_caption_under_the_cell(index, edition):
    text = _markdown(edition["05_scaling_laws.ipynb"])
    figures = [i for i, (d, t, _) in index.items.items()
               if d == "chapters/05_scaling_laws" and t == "figure"]
    assert len(figures) >= 5
    for k, name in enumerate(figures, start=1):
        assert f'<a id="{name}"></a>\n\n**Fig. 5.{k}.** ' in text


def test_untranslatable_markup_is_an_error_naming_the_cell(index):
    ctx = re_ed.Context(index, "chapters/04_memory_wall", {"x": {"text/plain": "1.5"}},
                        where="chapters/04_memory_wall.ipynb cell 7")
    assert re_ed.markdown_cell(ctx, "a {glue:text}`x:.2f` b") == "a 1.50 b"
    with pytest.raises(re_ed.ReaderError, match=r"cell 7: role \{kbd\}"):
        re_ed.markdown_cell(ctx, "press {kbd}`Ctrl`")
    with pytest.raises(re_ed.ReaderError, match=r"cell 7: .*no glued value named 'missing'"):
        re_ed.markdown_cell(ctx, "{glue:text}`missing:.1f`")
    with pytest.raises(re_ed.ReaderError, match=r"cell 7: .*'nobody1999' is not in"):
        re_ed.markdown_cell(ctx, "{cite:p}`nobody1999`")
    with pytest.raises(re_ed.ReaderError, match=r"cell 7: directive \{youtube\}"):
        re_ed.markdown_cell(ctx, "```{youtube} abc\n```")
    with pytest.raises(re_ed.ReaderError, match="never closed"):
        re_ed.markdown_cell(ctx, "```{admonition} A\nbody")


def test_site_url_comes_from_the_config():
    assert re_ed.site_url({"html": {"baseurl": "https://example.org/book"}}) == \
        "https://example.org/book/"
    with pytest.raises(re_ed.ReaderError, match=r"html\.baseurl"):
        re_ed.site_url({"repository": {"url": "https://gitlab.com/a/b"}})


def test_command_line_check_reports_stale_files(tmp_path, capsys):
    assert re_ed.main(["--check", "--out", str(tmp_path)]) == 1
    assert "stale reader edition" in capsys.readouterr().err
    assert re_ed.main(["--out", str(tmp_path)]) == 0
    assert re_ed.main(["--check", "--out", str(tmp_path)]) == 0


def test_the_tools_doctests_pass():
    import doctest
    result = doctest.testmod(re_ed)
    assert result.attempted >= 6 and result.failed == 0
