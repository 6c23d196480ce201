"""llmphys.book.glue writes exactly what myst-nb's glue writes, so the site build reads it."""

import pytest
from IPython.core.interactiveshell import InteractiveShell
from IPython.utils.capture import capture_output

from llmphys import book


def _outputs(glue, *args, **kwargs):
    InteractiveShell.instance()
    with capture_output() as cap:
        glue(*args, **kwargs)
    return [(o.data, o.metadata) for o in cap.outputs]


@pytest.mark.parametrize("value", [3.25, "1,979", 42, [1, 2]])
@pytest.mark.parametrize("display", [True, False])
def test_glue_bundle_is_identical_to_myst_nb(value, display):
    myst_nb = pytest.importorskip("myst_nb")
    assert _outputs(book.glue, "x", value, display=display) == _outputs(
        myst_nb.glue, "x", value, display=display)


def test_glue_hidden_bundle_uses_the_papermill_prefix():
    ((data, meta),) = _outputs(book.glue, "ridge", 295, display=False)
    assert data == {"application/papermill.record/text/plain": "295"}
    assert meta["scrapbook"] == {"name": "ridge", "mime_prefix": book.GLUE_PREFIX}


@pytest.mark.parametrize("name", ["", None, 3])
def test_glue_rejects_a_name_that_is_not_a_string(name):
    with pytest.raises(ValueError, match="name"):
        book.glue(name, 1.0)


def _show(mode="bf16", batch=64):
    print(f"{mode} batch {batch}: {2 * batch if mode == 'bf16' else 4 * batch}")


def test_widget_grid_holds_every_setting_in_row_major_order():
    g = book.explore_grid(_show, {"mode": ["bf16", "fp8"], "batch": [1, 64, 4096]})
    assert g["shape"] == [2, 3] and g["default"] == [0, 1]
    assert g["labels"] == [["bf16", "fp8"], ["1", "64", "4,096"]]
    texts = [g["texts"][i] for i in g["index"]]
    assert texts == ["bf16 batch 1: 2\n", "bf16 batch 64: 128\n", "bf16 batch 4096: 8192\n",
                     "fp8 batch 1: 4\n", "fp8 batch 64: 256\n", "fp8 batch 4096: 16384\n"]


def test_widget_grid_stores_a_repeated_output_once():
    g = book.explore_grid(lambda x=0: print("same"), {"x": [0, 1, 2]})
    assert g["texts"] == ["same\n"] and g["index"] == [0, 0, 0]


@pytest.mark.parametrize("controls, match", [
    ({"nope": [1]}, "nope: _show.. has no parameter"),
    ({"batch": [1, 2]}, "batch: the default of _show.. .64. must be one of"),
    ({"batch": 64}, "batch: a control is a list"),
    ({"batch": []}, "batch: a control needs at least one option"),
    ({}, "controls: explore needs at least one control"),
])
def test_widget_names_the_bad_control(controls, match):
    with pytest.raises(ValueError, match=match):
        book.explore_grid(_show, controls)


def test_widget_refuses_more_settings_than_the_page_can_carry():
    many = list(range(book.MAX_SETTINGS + 1))
    with pytest.raises(ValueError, match=r"controls: 2,001 settings \(x: 2,001\)"):
        book.explore_grid(lambda x=0: None, {"x": many})


def test_widget_html_is_disabled_until_the_script_wires_it_and_shows_the_default():
    g = book.explore_grid(_show, {"mode": ["bf16", "fp8"], "batch": list(range(1, 65))})
    page = book.explore_html(g, note="n")
    assert page.count(" disabled") == 2  # a select and a range slider (64 options)
    assert '<input type="range" min="0" max="63" step="1" value="63"' in page
    assert '<pre class="llmphys-explore-output">bf16 batch 64: 128\n</pre>' in page
    assert book.explore_html(g, note="n") == page  # deterministic: nbval compares it


def test_widget_html_cannot_close_its_script_early():
    g = book.explore_grid(lambda s="a": print("</script><b>"), {"s": ["a"]})
    page = book.explore_html(g, note="n")
    payload = page.split('class="llmphys-explore-data">')[1]
    assert payload.count("</script>") == 1  # only the element's own end tag


@pytest.mark.filterwarnings("ignore:Widget.widgets is deprecated")
def test_widget_bundle_has_the_live_view_the_static_page_and_no_stray_print():
    pytest.importorskip("ipywidgets")
    InteractiveShell.instance()
    with capture_output() as cap:
        book.widget(_show, mode=["bf16", "fp8"], batch=[1, 64])
    assert cap.stdout == ""  # the first output is the stored default, not a print at display
    ((data, _),) = [(o.data, o.metadata) for o in cap.outputs]
    assert set(data) == {"text/plain", "text/html", "application/vnd.jupyter.widget-view+json"}
    assert data["text/plain"] == "<widget _show: mode, batch; 4 settings>"
    from ipywidgets import Widget
    box = Widget.widgets[data["application/vnd.jupyter.widget-view+json"]["model_id"]]
    assert box.children[-1].outputs[0]["text"] == "bf16 batch 64: 128\n"
    with capture_output() as live:
        box.children[1].value = 1  # moving the live control calls the function again
    assert live.stdout.endswith("\rbf16 batch 1: 2\n")  # after clear_output's erase codes
