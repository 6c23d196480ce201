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
