"""The book-wide figure style: figures are saved at twice their 100-dpi size for phones."""

import struct

import matplotlib.pyplot as plt
import pytest

from llmphys.plots import _style


def _png_size(png: bytes) -> tuple[int, int]:
    # PNG files start with an 8-byte signature and the IHDR chunk: width, height (big-endian).
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", png[16:24])


def test_save_dpi_is_twice_the_figure_dpi_so_a_phone_gets_two_pixels_per_css_pixel():
    assert 1.5 * _style.STYLE["figure.dpi"] == _style.SAVE_DPI
    assert _style.STYLE["savefig.dpi"] == _style.SAVE_DPI


@pytest.mark.filterwarnings("ignore:InlineBackend._print_figure_kwargs_changed:DeprecationWarning")
def test_inline_backend_saves_figures_at_save_dpi_with_the_figure_size_unchanged():
    IPython = pytest.importorskip("IPython")
    pytest.importorskip("matplotlib_inline")
    from matplotlib_inline.config import InlineBackend
    InteractiveShell = IPython.core.interactiveshell.InteractiveShell
    had_shell = InteractiveShell.initialized()
    shell = InteractiveShell.instance()   # a shell for this test only, as in a notebook kernel
    cfg = InlineBackend.instance(parent=shell)
    before = dict(cfg.print_figure_kwargs)
    try:
        assert _style.use_high_dpi_inline() is True
        assert cfg.print_figure_kwargs["dpi"] == _style.SAVE_DPI
        assert cfg.print_figure_kwargs["bbox_inches"] == "tight"  # kept, not replaced
        from IPython.core.pylabtools import print_figure
        with _style.style():
            fig, ax = plt.subplots()   # 6.4 x 3.8 in at figure.dpi = 100
        fig.subplots_adjust(0, 0, 1, 1)
        ax.set_axis_off()
        png = print_figure(fig, "png", bbox_inches=None, dpi=cfg.print_figure_kwargs["dpi"])
        # 6.4 in x 150 dpi = 960 px: 1.5 times the 640 px that the figure's own dpi gives, and
        # the figure still reports its 100-dpi size, so "<Figure size 640x380 ...>" is unchanged.
        assert _png_size(png) == (960, 570)
        assert repr(fig).startswith("<Figure size 640x380")
        plt.close(fig)
    finally:
        cfg.print_figure_kwargs = before
        if not had_shell:  # later tests must not find an IPython shell that we made
            InteractiveShell.clear_instance()


def test_outside_ipython_nothing_is_configured(monkeypatch):
    IPython = pytest.importorskip("IPython")
    monkeypatch.setattr(IPython, "get_ipython", lambda: None)
    assert _style.use_high_dpi_inline() is False


@pytest.mark.parametrize("dpi", [0, -100, float("nan")])
def test_a_non_positive_dpi_is_rejected(dpi):
    with pytest.raises(ValueError, match="dpi"):
        _style.use_high_dpi_inline(dpi)
