"""Every graded check of the ledger can fail: some state of its inputs moves its verdict.

For each claim with a check, tests/claims_perturbation.py scales each number the check reads
from ``data/`` (singly, one field across every entry, and each table whole), and each literal
typed in the check, by factors from 1e-5 to 1e5, and removes each number once. A check that no
such perturbation moves is an identity of the library, a definition or a theorem; it must say
so, as case "construction" and verdict "holds by construction", which the ledger counts apart.
"""

import json
import os
from dataclasses import replace
from pathlib import Path

import claims_perturbation as cp
import pytest

from llmphys import claims
from llmphys.claims import Case, Check, Compare, Verdict

GRADED = [c for c in claims.claims() if c.grading is not None]
REAL = [c for c in GRADED if c.case is not Case.CONSTRUCTION]
BUILT = [c for c in GRADED if c.case is Case.CONSTRUCTION]


# A perturbation known to move each check, tried first so the test takes seconds, not
# minutes; when it no longer moves the check the full search runs, and the test says to
# refresh the file (LLMPHYS_WRITE_FLIPS=1 pytest tests/test_claims_perturbation.py).
FLIPS = Path(__file__).parent / "data" / "claims_flips.json"
_STORED = json.loads(FLIPS.read_text()) if FLIPS.exists() else {}
_FOUND: dict[str, list] = {}


@pytest.fixture(scope="module", autouse=True)
def _write_flips():
    yield
    if os.environ.get("LLMPHYS_WRITE_FLIPS") and _FOUND:
        FLIPS.write_text(json.dumps(dict(sorted({**_STORED, **_FOUND}.items())), indent=1) + "\n")


@pytest.mark.parametrize("c", REAL, ids=[c.id for c in REAL])
def test_a_graded_check_can_fail(c: claims.Claim):
    stored = _STORED.get(c.id)
    flip = cp.first_flip(c, prefer=None if stored is None else (stored[0], stored[1]))
    if flip is not None:
        _FOUND[c.id] = [str(flip[0]), flip[1]]
        if stored is not None and [str(flip[0]), flip[1]] != stored:
            print(f"{c.id}: the stored flip no longer moves the check; refresh {FLIPS.name}")
    assert flip is not None, (
        f"{c.id}: no perturbation of its {cp.n_inputs(c)} inputs moves its verdict "
        f"({claims.assess(c).verdict.value}); test the claim against independent data, or "
        "mark it case = \"construction\" and say why in its note"
    )


@pytest.mark.parametrize("c", BUILT, ids=[c.id for c in BUILT])
def test_a_check_that_holds_by_construction_says_so(c: claims.Claim):
    a = claims.assess(c)
    assert a.verdict is Verdict.CONSTRUCTION and c.verdict is Verdict.CONSTRUCTION, c.id
    assert c.note.strip(), f"{c.id}: say why no state of the data can move the check"


def _claim(fn, target: str = "296") -> claims.Claim:
    return replace(claims.claim("M02"), checker=fn, case=Case.STATED, assumptions="",
                   grading=Compare(target=target), verdict=Verdict.APPROX)


def _ridge() -> Check:
    from llmphys import roofline, specs
    return Check(value=roofline.ridge_point(specs.accelerator("h100_sxm")))


def _ridge_over_itself() -> Check:
    from llmphys import roofline, specs
    h100 = specs.accelerator("h100_sxm")
    return Check(value=roofline.ridge_point(h100) / roofline.ridge_point(h100))


def test_the_perturbation_finds_the_inputs_a_check_reads():
    c = _claim(_ridge)
    read = {str(i) for i in cp.registry_inputs(c)}
    assert "accelerators.toml:h100_sxm.hbm_bytes_per_s" in read
    assert "accelerators.toml:h100_sxm.peak_bf16_flop_per_s" in read
    assert not any(i.startswith("accelerators.toml:b200") for i in read)


def test_the_perturbation_test_can_fail():
    # the registry's ridge point moves with the data; the same number over itself cannot
    assert cp.first_flip(_claim(_ridge)) is not None
    assert cp.first_flip(_claim(_ridge_over_itself, "1")) is None
