"""Claims of one source document; see :mod:`llmphys.claims`."""

from ._core import Claim

CLAIMS: list[Claim] = []
