"""No control on a static page moves while its output stays: every widget computes its answer.

The static site has no kernel. Each chapter's widget is ``llmphys.book.widget``, which stores the
library's output for every setting of its controls; ``_assets/explore.js`` enables the controls
and switches between the stored outputs. In headless Chromium with every non-local request
blocked, this checks that on every page (a) each enabled form control belongs to such a widget,
and (b) moving each control of each widget changes the printed output to the one the library
computed for that setting.
"""

import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HTML = ROOT / "_build" / "html"
PAGES = sorted(p.relative_to(HTML).as_posix() for p in HTML.rglob("*.html")
               if not p.relative_to(HTML).as_posix().startswith(("_static", "_sources"))
               and 'http-equiv="Refresh"' not in p.read_text(encoding="utf-8")[:500])
CHAPTERS = sorted(p.stem for p in (ROOT / "chapters").glob("*.ipynb"))


def _controls_outside_widgets(page):
    return page.evaluate("""() => [...document.querySelectorAll(
        'article input, article select, article textarea')]
        .filter(e => !e.disabled && e.type !== 'hidden' && !e.closest('.llmphys-explore'))
        .map(e => e.outerHTML.slice(0, 120))""")


@pytest.mark.parametrize("path", PAGES)
def test_no_enabled_control_outside_a_widget(loaded_page, path):
    # The page's one load (tests/site/conftest.py), shared with test_site.py's checks of it.
    assert _controls_outside_widgets(loaded_page(path).page) == []


def _stored(block):
    data = json.loads(block.locator("script.llmphys-explore-data").text_content())
    return data


def _expected(data, setting):
    k = 0
    for j, i in enumerate(setting):
        k = k * data["shape"][j] + i
    return data["texts"][data["index"][k]]


def _move(control, i):
    if control.evaluate("e => e.tagName") == "SELECT":
        control.select_option(index=i)  # our option values are indices; labels can look alike
    else:  # a range input: set it as a drag would, then fire the event a drag fires
        control.evaluate("(e, i) => { e.value = String(i);"
                         " e.dispatchEvent(new Event('input', {bubbles: true})); }", i)


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_every_widget_control_changes_the_output_to_the_librarys(loaded_page, chapter):
    # On a phone's width (390 px); every control is put back where it was before the next.
    page = loaded_page(f"chapters/{chapter}.html", width=390).page
    blocks = page.locator(".llmphys-explore")
    assert blocks.count() >= 1, f"{chapter} has no widget"
    for b in range(blocks.count()):
        block = blocks.nth(b)
        block.wait_for(state="attached")
        page.wait_for_function("b => b.classList.contains('llmphys-explore-live')",
                               arg=block.element_handle(), timeout=10000)
        data = _stored(block)
        controls = block.locator("[data-control]")
        setting = [int(controls.nth(j).input_value()) for j in range(controls.count())]
        out = block.locator(".llmphys-explore-output")
        assert out.text_content() == _expected(data, setting)
        for j in range(controls.count()):
            c = controls.nth(j)
            assert c.is_enabled(), f"{chapter}: control {j} is still disabled"
            before = out.text_content()
            changed = False
            for i in range(data["shape"][j]):
                if i == setting[j]:
                    continue
                _move(c, i)
                trial = [*setting[:j], i, *setting[j + 1:]]
                shown = out.text_content()  # one read per move: each is a round trip
                assert shown == _expected(data, trial), (chapter, j, i)
                changed = changed or shown != before
            assert changed, f"{chapter}: moving control {j} never changes the output"
            _move(c, setting[j])
            assert out.text_content() == before
