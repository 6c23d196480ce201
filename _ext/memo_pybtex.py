"""Sphinx extension: memoise pybtex's and sphinxcontrib-bibtex's plugin look-ups.

Every citation that sphinxcontrib-bibtex formats asks pybtex for its style, name style, label
style and backend through ``find_plugin``, and each ask calls ``importlib.metadata
.entry_points(group=..., name=...)``, which reads the metadata of every installed
distribution again. Profiling ``make book`` put about a quarter of the build in those reads.
The installed distributions do not change during a build, so the answer for a (group, name)
is looked up once. Plugins registered at run time are still found first: both libraries
consult their runtime registry before the entry points, and only the entry-point query is
cached here.
"""

from __future__ import annotations

import functools
from importlib.metadata import entry_points


@functools.cache
def _cached(group: str, name: str | None):
    return entry_points(group=group) if name is None else entry_points(group=group, name=name)


def _entry_points(*, group: str, name: str | None = None):
    return _cached(group, name)


def setup(app):
    import pybtex.plugin
    pybtex.plugin.entry_points = _entry_points
    try:
        import sphinxcontrib.bibtex.plugin as bibtex_plugin
    except ImportError:      # the bibtex extension is not installed: nothing else to patch
        pass
    else:
        bibtex_plugin.entry_points = _entry_points
    return {"parallel_read_safe": True, "parallel_write_safe": True}
