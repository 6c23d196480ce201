"""Sphinx extension: every page ends with a link to discuss it (issue 20).

One configurable URL, ``discussion_url`` (``sphinx.config`` in ``_config.yml``), says where
readers ask questions and report errors: the project's issue tracker, a GitHub Discussions
category or a course forum. ``{page}`` in it becomes the page's title, URL-encoded, so a
GitHub new-issue link arrives with the page named; a URL without ``{page}`` is used as it is.
The reader and student editions put the same link in their first cell
(``tools/reader_edition.py`` reads the same key), and ``tests/site`` checks every built page.
"""

from urllib.parse import quote

from docutils import nodes

LINK_CLASS = "llmphys-discuss"


def discussion_href(url: str, title: str) -> str:
    """The link for one page: ``url`` with ``{page}`` replaced by the URL-encoded ``title``."""
    return url.replace("{page}", quote(title, safe="")) if "{page}" in url else url


def _add_link(app, pagename, templatename, context, doctree):
    url = app.config.discussion_url
    if not url or doctree is None or "body" not in context:
        return
    title = nodes.Text(context.get("title") or pagename).astext()
    title = title.replace("<", "").replace(">", "")
    href = discussion_href(url, title)
    context["body"] += (
        f'\n<p class="{LINK_CLASS}"><a href="{href}" rel="noopener">'
        "Questions, corrections or a better number? Discuss this page</a></p>\n")


def _check(app, config):
    url = config.discussion_url
    if not isinstance(url, str) or not url.startswith(("https://", "http://")):
        raise ValueError(f"discussion_url: an http(s) address, got {url!r}")


def setup(app):
    app.add_config_value("discussion_url", "", "html")
    app.connect("config-inited", _check)
    app.connect("html-page-context", _add_link)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
