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

Home: chapters/hardware_tour.ipynb.
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


# --- widget: one control panel for the kernel and for the static page ---------------------------
#
# In a kernel (Colab, JupyterLab) ``widget`` shows ipywidgets controls that call the library
# live. The static site has no kernel, so the same call also computes the output for every
# combination of the (discrete) controls and stores it as an HTML block; the page's own script
# (_assets/explore.js) switches between the stored outputs. Nothing is frozen: every setting a
# reader can pick on the page was computed by the library when the chapter was executed, and
# nbval re-checks all of them. The block is deterministic (no random model ids), so re-running
# a chapter does not change it unless a number changes.

MAX_SETTINGS = 2_000
"""Most combinations one ``widget`` may precompute (the page carries each output as text)."""

_SLIDER_MIN_OPTIONS = 7  # numeric controls with at least this many options become sliders


def _options(name: str, spec: Any) -> list[tuple[str, Any]]:
    """(label, value) pairs from a list of values or a {label: value} mapping."""
    if isinstance(spec, dict):
        pairs = [(str(k), v) for k, v in spec.items()]
    elif isinstance(spec, (list, tuple, range)):
        pairs = [
            (f"{v:,}" if isinstance(v, int) and not isinstance(v, bool) else str(v), v)
            for v in spec
        ]
    else:
        raise ValueError(
            f"{name}: a control is a list of values or a {{label: value}} dict, "
            f"got {type(spec).__name__}"
        )
    if not pairs:
        raise ValueError(f"{name}: a control needs at least one option")
    return pairs


def _run(fn: Any, kwargs: dict[str, Any]) -> str:
    """What ``fn(**kwargs)`` prints, plus its return value if it returns a string."""
    import contextlib
    import io

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        result = fn(**kwargs)
    text = buf.getvalue()
    if isinstance(result, str):
        text += result if result.endswith("\n") else result + "\n"
    return text


def explore_grid(fn: Any, controls: dict[str, Any]) -> dict[str, Any]:
    """Every output of ``fn`` over the product of the controls' options (a plain dict).

    Returns ``{"names", "labels", "values", "shape", "default", "texts", "index"}``: ``texts``
    holds each distinct output once and ``index`` maps each setting, in row-major order of the
    controls, to its text. The default setting is the function's own keyword defaults.
    """
    import inspect
    import itertools

    if not callable(fn):
        raise ValueError(f"fn: explore needs a function, got {type(fn).__name__}")
    if not controls:
        raise ValueError("controls: explore needs at least one control")
    params = inspect.signature(fn).parameters
    names, labels, values, default = [], [], [], []
    for name, spec in controls.items():
        if name not in params:
            raise ValueError(
                f"{name}: {fn.__name__}() has no parameter {name!r}; it takes {', '.join(params)}"
            )
        pairs = _options(name, spec)
        d = params[name].default
        opts = [v for _, v in pairs]
        if d is inspect.Parameter.empty or d not in opts:
            raise ValueError(
                f"{name}: the default of {fn.__name__}() ({d!r}) must be one of the options {opts}"
            )
        names.append(name)
        labels.append([lab for lab, _ in pairs])
        values.append(opts)
        default.append(opts.index(d))
    n = 1
    for v in values:
        n *= len(v)
    if n > MAX_SETTINGS:
        sizes = ", ".join(f"{k}: {len(v):,}" for k, v in zip(names, values, strict=True))
        raise ValueError(
            f"controls: {n:,} settings ({sizes}) is more than "
            f"MAX_SETTINGS = {MAX_SETTINGS:,}; offer fewer options"
        )
    texts: list[str] = []
    seen: dict[str, int] = {}
    index = []
    for combo in itertools.product(*values):
        text = _run(fn, dict(zip(names, combo, strict=True)))
        index.append(seen.setdefault(text, len(seen)))
        if index[-1] == len(texts):
            texts.append(text)
    return {
        "names": names,
        "labels": labels,
        "values": values,
        "shape": [len(v) for v in values],
        "default": default,
        "texts": texts,
        "index": index,
    }


def explore_html(grid: dict[str, Any], *, note: str) -> str:
    """The static page's block: disabled controls, the default output and the grid as JSON.

    The controls are disabled in the HTML itself; ``_assets/explore.js`` enables them once it
    has wired them to the stored outputs, so a page without the script offers no dead control.
    """
    import hashlib
    import html
    import json

    payload = json.dumps(
        {k: grid[k] for k in ("labels", "shape", "texts", "index")},
        separators=(",", ":"),
        ensure_ascii=False,
    )
    uid = "explore-" + hashlib.sha1(payload.encode()).hexdigest()[:10]
    rows = []
    for j, (name, labels, d) in enumerate(
        zip(grid["names"], grid["labels"], grid["default"], strict=True)
    ):
        if len(labels) >= _SLIDER_MIN_OPTIONS:
            control = (
                f'<input type="range" min="0" max="{len(labels) - 1}" step="1" '
                f'value="{d}" data-control="{j}" aria-label="{html.escape(name)}" disabled>'
                f'<output data-label-for="{j}">{html.escape(labels[d])}</output>'
            )
        else:
            opts = "".join(
                f'<option value="{i}"{" selected" if i == d else ""}>{html.escape(lab)}</option>'
                for i, lab in enumerate(labels)
            )
            control = (
                f'<select data-control="{j}" aria-label="{html.escape(name)}" disabled>'
                f"{opts}</select>"
            )
        rows.append(
            f'<label class="llmphys-explore-row"><span>{html.escape(name)}</span>{control}</label>'
        )
    k = 0
    for j, d in enumerate(grid["default"]):
        k = k * grid["shape"][j] + d
    out = html.escape(grid["texts"][grid["index"][k]])
    # "</" cannot appear inside a script element; JSON allows the escaped form.
    payload = payload.replace("</", "<\\/")
    return (
        f'<div class="llmphys-explore" id="{uid}">'
        f'<div class="llmphys-explore-controls">{"".join(rows)}</div>'
        f'<pre class="llmphys-explore-output">{out}</pre>'
        f'<p class="llmphys-explore-note">{html.escape(note)}</p>'
        f'<script type="application/json" class="llmphys-explore-data">{payload}</script>'
        "</div>"
    )


def widget(fn: Any, /, **controls: Any) -> None:
    """Show ``fn``'s printed output with a control per keyword: live in a kernel, precomputed
    for the static page (nothing returned).

    Each control is a list of values (or a ``{label: value}`` dict); ``fn``'s keyword defaults
    are the starting setting and must be among the options. Numeric controls with many options
    are sliders, the rest drop-down menus. All combinations are computed once here, at most
    ``MAX_SETTINGS`` of them, so the static page can switch between them without a kernel.
    """
    from IPython.display import display as ipy_display

    grid = explore_grid(fn, controls)
    n = len(grid["index"])
    note = (
        f"Every one of the {n:,} settings was computed by the library when this page was "
        "built; open the chapter in Colab or Jupyter to run the function itself."
    )
    bundle: dict[str, Any]  # a MIME bundle: strings, and a dict for the widget view
    bundle = {
        "text/plain": f"<widget {fn.__name__}: {', '.join(grid['names'])}; {n:,} settings>",
        "text/html": explore_html(grid, note=note),
    }
    box = _live_controls(fn, grid)
    if box is not None:
        bundle["application/vnd.jupyter.widget-view+json"] = {
            "version_major": 2,
            "version_minor": 0,
            "model_id": box.model_id,
        }
    ipy_display(bundle, raw=True)


def _live_controls(fn: Any, grid: dict[str, Any]) -> Any:
    """ipywidgets controls calling ``fn`` live, or None where ipywidgets is missing.

    Built by hand rather than with ``interact`` so that the first output is the precomputed
    default (set on the Output widget) instead of a print at display time, which a kernel
    without a front end would report as the cell's own output. Works with ipywidgets 7 and 8.
    """
    try:
        import ipywidgets as w
    except ImportError:
        return None
    widgets = []
    for name, labels, values, d in zip(
        grid["names"], grid["labels"], grid["values"], grid["default"], strict=True
    ):
        opts = list(zip(labels, values, strict=True))
        cls = w.SelectionSlider if len(opts) >= _SLIDER_MIN_OPTIONS else w.Dropdown
        widgets.append(
            cls(
                options=opts,
                value=opts[d][1],
                description=name,
                style={"description_width": "initial"},
            )
        )
    k = 0
    for j, d in enumerate(grid["default"]):
        k = k * grid["shape"][j] + d
    out = w.Output()
    out.outputs = (
        {"output_type": "stream", "name": "stdout", "text": grid["texts"][grid["index"][k]]},
    )

    def update(_change: Any = None) -> None:
        out.clear_output(wait=True)
        with out:
            print(_run(fn, {x.description: x.value for x in widgets}), end="")

    for x in widgets:
        x.observe(update, names="value")
    return w.VBox([*widgets, out])
