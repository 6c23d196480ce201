"""Sphinx extension: a chapter page loads at most 3 MB (issue 13), without losing anything
a reader uses. Two things made up half of that budget:

* MathJax. sphinx-mathjax-offline serves MathJax 3 from ``_static`` and points every page
  at the combined ``tex-chtml.js`` (1.2 MB), which bundles the right-click menu
  (``ui/menu``, 430 kB). Here the pages load MathJax's ``startup.js`` loader instead,
  which fetches the TeX input (base and ams; ``autoload`` brings any other package a
  formula needs), the CHTML output and the assistive MathML that screen readers read:
  0.8 MB in all. The menu (zoom, "show math as TeX", accessibility settings) is left out.
* Font Awesome's JavaScript. pydata-sphinx-theme 0.16 writes
  ``<script src="_static/scripts/fontawesome.js">`` (1.5 MB) into every page's head "so
  that users can add custom icons"; the script turns each ``<i class="fa-...">`` into
  inline SVG, yet the theme's stylesheet already draws every icon the theme and
  sphinx-book-theme use from the web fonts it ships. This book adds no custom icon, so
  the tag is removed from each written page once the build has finished.

* The figures. Matplotlib writes full-colour PNGs; a chart has a few dozen colours plus the
  anti-aliasing between them, and a 256-colour palette (median cut) draws it indistinguishably
  at a quarter of the bytes. Each image in ``_images`` is re-encoded so once the build has
  finished, and kept only if smaller. The notebooks keep their full-colour outputs.

``tests/site`` checks the weight, that math typesets and that the icons still draw.
"""

import re
from pathlib import Path

MATHJAX_PATH = "mathjax/startup.js"
MATHJAX_LOAD = ["input/tex", "output/chtml", "a11y/assistive-mml"]
# pydata-sphinx-theme 0.16 writes <script src=...>, 0.17 <script defer src=...>.
FONTAWESOME_JS = re.compile(
    r'[ \t]*<script(?: defer)? src="[^"]*_static/scripts/fontawesome\.js[^"]*"></script>\n?')


def _lean_mathjax(app, config):
    # config-inited runs after every extension's setup(), so this wins over the
    # mathjax_path that sphinx-mathjax-offline sets in its own setup().
    config.mathjax_path = MATHJAX_PATH
    config.mathjax3_config = dict(config.mathjax3_config or {})
    config.mathjax3_config["loader"] = {"load": list(MATHJAX_LOAD)}


def _drop_fontawesome_js(app, exc):
    if exc is not None or app.builder.format != "html":
        return
    for page in Path(app.outdir).rglob("*.html"):
        text = page.read_text(encoding="utf-8")
        lean = FONTAWESOME_JS.sub("", text)
        if lean != text:
            page.write_text(lean, encoding="utf-8")


PALETTE_COLOURS = 256


def _palette_pngs(app, exc):
    """Re-encode every built PNG figure with a 256-colour palette where that is smaller."""
    if exc is not None or app.builder.format != "html":
        return
    import io

    from PIL import Image

    for path in (Path(app.outdir) / "_images").glob("*.png"):
        with Image.open(path) as im:
            if im.mode == "P":
                continue  # already a palette image (a rebuild over an earlier one)
            rgba = im.mode in ("RGBA", "LA") or "transparency" in im.info
            src = im.convert("RGBA" if rgba else "RGB")
        method = Image.Quantize.FASTOCTREE if rgba else Image.Quantize.MEDIANCUT
        buf = io.BytesIO()
        src.quantize(colors=PALETTE_COLOURS, method=method).save(buf, "PNG", optimize=True)
        if buf.tell() < path.stat().st_size:
            path.write_bytes(buf.getvalue())


def setup(app):
    app.connect("config-inited", _lean_mathjax, priority=900)
    app.connect("build-finished", _drop_fontawesome_js)
    app.connect("build-finished", _palette_pngs)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
