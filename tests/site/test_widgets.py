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


# Moves every control of one widget through every option inside the page, one control at a
# time from the stored setting and back, as a person would (a select: the option at index i,
# then the input and change events select_option fires; a range: the value, then the input
# event a drag fires), and reads the output after each move. One call per widget: a Playwright
# round trip per move cost most of this file's time.
_SWEEP = """(block) => {
    const controls = [...block.querySelectorAll('[data-control]')];
    const out = block.querySelector('.llmphys-explore-output');
    const move = (c, i) => {
        if (c.tagName === 'SELECT') {
            c.selectedIndex = i;
            c.dispatchEvent(new Event('input', {bubbles: true}));
            c.dispatchEvent(new Event('change', {bubbles: true}));
        } else {
            c.value = String(i);
            c.dispatchEvent(new Event('input', {bubbles: true}));
        }
    };
    const setting = controls.map(c => parseInt(c.value, 10));
    const first = out.textContent;
    const swept = controls.map((c, j) => {
        const n = c.tagName === 'SELECT' ? c.options.length : Number(c.max) + 1;
        const r = {enabled: !c.disabled,
                   visible: c.tagName !== 'SELECT' || c.checkVisibility(),
                   before: out.textContent, n: n, shown: []};
        for (let i = 0; i < n; i++) {
            if (i === setting[j]) continue;
            move(c, i);
            r.shown.push([i, out.textContent]);
        }
        move(c, setting[j]);
        r.after = out.textContent;
        return r;
    });
    return {setting: setting, first: first, swept: swept};
}"""


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
        r = block.evaluate(_SWEEP)
        setting = r["setting"]
        assert r["first"] == _expected(data, setting)
        assert len(r["swept"]) == len(data["shape"]), (chapter, b)
        for j, c in enumerate(r["swept"]):
            assert c["enabled"], f"{chapter}: control {j} is still disabled"
            assert c["visible"], f"{chapter}: control {j} cannot be seen to be chosen"
            assert c["n"] == data["shape"][j], (chapter, j, c["n"])
            before = c["before"]
            assert before == _expected(data, setting), (chapter, j)
            changed = False
            for i, shown in c["shown"]:
                trial = [*setting[:j], i, *setting[j + 1:]]
                assert shown == _expected(data, trial), (chapter, j, i)
                changed = changed or shown != before
            assert changed, f"{chapter}: moving control {j} never changes the output"
            assert c["after"] == before
