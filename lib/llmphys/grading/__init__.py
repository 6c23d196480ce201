"""Autograding for the book's Implement exercises: one ``check_*`` function per exercise.

A student writes the function an exercise asks for and calls its check in the cell the
exercise provides::

    from llmphys import grading
    grading.check_kv_cache_bytes(kv_cache_bytes)

The check runs the student's function and the library's reference on seeded random cases and
edge cases, and returns a :class:`Feedback` that prints what matched and, when something did
not, the first failing case and the likely mistake. The checks live in one module per chapter
(``grading.tour``, ``grading.foundations``, ...) and are all importable from here; the shared
machinery is :func:`check_function` with its named tolerances :data:`RTOL` and
:data:`RATIO_RTOL`.

Home: chapters/hardware_tour.ipynb.
"""

from llmphys.grading._core import (
    RATIO_RTOL,
    RTOL,
    Case,
    Factor,
    Feedback,
    Mistake,
    check_function,
    common_factors,
)
from llmphys.grading.architecture import *  # noqa: F403
from llmphys.grading.architecture_depth import *  # noqa: F403
from llmphys.grading.data import *  # noqa: F403
from llmphys.grading.data_choices import *  # noqa: F403
from llmphys.grading.data_depth import *  # noqa: F403
from llmphys.grading.economics import *  # noqa: F403
from llmphys.grading.foundations import *  # noqa: F403
from llmphys.grading.memory_wall import *  # noqa: F403
from llmphys.grading.scaling_laws import *  # noqa: F403
from llmphys.grading.tour import *  # noqa: F403

__all__ = [
    "RATIO_RTOL",
    "RTOL",
    "Case",
    "Factor",
    "Feedback",
    "Mistake",
    "check_function",
    "common_factors",
]


def checks() -> dict[str, object]:
    """Every ``check_*`` function, by name (the course-kit test matches them to exercises)."""
    return {k: v for k, v in globals().items() if k.startswith("check_") and k != "check_function"}
