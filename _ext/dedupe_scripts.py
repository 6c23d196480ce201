"""Sphinx extension: drop duplicate <script> entries from each page.

With Jupyter Book 1, sphinx-thebe registers its inline configuration script twice,
so every page declares `const THEBE_JS_URL` twice and the browser reports a
SyntaxError. This keeps the first copy of each identical script.
"""


def _dedupe(app, pagename, templatename, context, doctree):
    seen, unique = set(), []
    for script in context.get("script_files", []):
        # The two copies differ only in filename None vs "" (both mean an inline script).
        name = getattr(script, "filename", script) or ""
        key = (str(name), tuple(sorted(getattr(script, "attributes", {}).items())))
        if key not in seen:
            seen.add(key)
            unique.append(script)
    if "script_files" in context:
        context["script_files"][:] = unique


def setup(app):
    app.connect("html-page-context", _dedupe, priority=100)  # early: the event stops at the first handler that returns a template
    return {"parallel_read_safe": True, "parallel_write_safe": True}
