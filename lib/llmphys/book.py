"""What a chapter notebook needs from the notebook it runs in: ``glue`` without myst-nb.

A chapter puts a computed number into its prose with ``glue(name, value)``, and the site build
(myst-nb) finds it in the cell's outputs. myst-nb is a build tool: Google Colab and a plain
JupyterLab do not have it, and importing it costs a few seconds per notebook (it pulls in
nbformat's JSON-schema machinery). This module writes the same output myst-nb's own
``myst_nb.glue`` writes, a display bundle whose metadata carries ``scrapbook: {name, mime_prefix}``,
with IPython alone, so a chapter runs anywhere IPython does.

The bundle format is myst-nb's (``myst_nb/ext/glue/__init__.py``, myst-nb 1.x):
with ``display=False`` every MIME key gets the prefix ``application/papermill.record/`` and
the front ends show nothing; with ``display=True`` the keys are plain and the value is shown.
``tests/test_book.py`` checks the two writers agree.
"""

from __future__ import annotations

from typing import Any

GLUE_PREFIX = "application/papermill.record/"


def glue(name: str, variable: Any, display: bool = True) -> None:
    """Store ``variable``'s display form under ``name`` for the site build (nothing returned).

    Same signature and default as ``myst_nb.glue``; chapters pass ``display=False``. Glue a
    rounded value or a formatted string, never a raw
    float64: the stored digits are compared on re-execution, and the last bits of a float
    differ between CPUs.
    """
    if not isinstance(name, str) or not name:
        raise ValueError(f"name: a glue name must be a non-empty string, got {name!r}")
    import IPython.core.formatters
    from IPython.display import display as ipy_display

    mimebundle, metadata = IPython.core.formatters.format_display_data(variable)
    prefix = "" if display else GLUE_PREFIX
    metadata["scrapbook"] = {"name": name, "mime_prefix": prefix}
    ipy_display({prefix + k: v for k, v in mimebundle.items()}, raw=True, metadata=metadata)
