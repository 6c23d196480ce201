"""Schema and plausibility checks of every registry entry in data/.

The loader already rejects unknown, missing and mistyped fields; these tests
check what a type cannot: provenance, physical ranges and the dense/sparse and
per-direction conventions.
"""

import dataclasses
import datetime
import re

import pytest

from llmphys import roofline, specs

ACCS = specs.accelerators()
MODELS = specs.models()
TODAY = datetime.date.today()  # a source cannot be dated after the day the tests run


@pytest.mark.parametrize("key", ACCS)
def test_accelerator_has_provenance(key):
    a = ACCS[key]
    assert len(a.source) > 20 and "http" in a.source, "source must name a document and its URL"
    assert datetime.date(2019, 1, 1) <= a.as_of <= TODAY
    assert a.quotes, "the vendor's wording of its figures must be recorded"
    fields = {f.name for f in dataclasses.fields(specs.Accelerator)}
    assert set(a.quotes) <= fields, f"quotes name unknown fields: {set(a.quotes) - fields}"
    assert set(a.estimated) <= fields
    if a.estimated:  # every derived or assumed value must be explained as such
        assert re.search(r"assum|estimat", a.notes, re.IGNORECASE), a.estimated


@pytest.mark.parametrize("key", ACCS)
def test_accelerator_values_are_physically_plausible(key):
    a = ACCS[key]
    assert 1e14 < a.peak_bf16_flop_per_s < 1e16  # 100 TFLOP/s .. 10 PFLOP/s dense
    assert 1e10 < a.hbm_bytes < 1e12  # 10 GB .. 1 TB per chip
    assert 5e11 < a.hbm_bytes_per_s < 2e13  # 0.5 .. 20 TB/s
    # Per direction: NVLink 5 is 0.9 TB/s each way. A stored 1.8e12 would be the
    # bidirectional figure, which is exactly the mistake this field's name guards against.
    assert 1e10 < a.scale_up_bytes_per_s_per_direction < 1.0e12
    assert a.scale_out_bytes_per_s_per_direction < a.scale_up_bytes_per_s_per_direction
    assert a.scale_up_domain_size >= 2
    assert 2012 <= a.launch_year <= 2026
    assert roofline.ridge_point(a) > 1
    if a.tdp_w is not None:
        assert 100 < a.tdp_w < 2500


@pytest.mark.parametrize("key", ACCS)
def test_lower_precision_is_never_slower(key):
    a = ACCS[key]
    if a.peak_fp8_flop_per_s is not None:
        assert a.peak_fp8_flop_per_s >= a.peak_bf16_flop_per_s
    if a.peak_fp4_flop_per_s is not None:
        assert a.peak_fp8_flop_per_s is not None
        assert a.peak_fp4_flop_per_s >= a.peak_fp8_flop_per_s


@pytest.mark.parametrize("key", [k for k, a in ACCS.items() if a.peak_bf16_sparse_flop_per_s])
def test_stored_peak_is_dense_half_of_the_sparse_quote(key):
    # 2:4 structured sparsity skips half the multiplies: the marketing figure is 2x dense.
    a = ACCS[key]
    assert a.peak_bf16_flop_per_s == pytest.approx(a.peak_bf16_sparse_flop_per_s / 2, rel=2e-3)


def test_h100_sxm_matches_its_datasheet(h100):
    # H100 SXM datasheet: BF16 1,979 TFLOPS with sparsity; 3.35 TB/s; 80 GB; NVLink 900 GB/s.
    assert h100.peak_bf16_flop_per_s == pytest.approx(1979e12 / 2, rel=1e-3)
    assert h100.hbm_bytes_per_s == 3.35e12 and h100.hbm_bytes == 80e9
    assert h100.scale_up_domain_size == 8


def test_b200_records_both_published_memory_figures():
    b200 = ACCS["b200"]
    alt = {x.field: x.value for x in b200.alternatives}
    assert {"hbm_bytes", "hbm_bytes_per_s"} <= set(alt)
    used_and_alt = sorted([b200.hbm_bytes, alt["hbm_bytes"]])
    assert used_and_alt == [180e9, 192e9]
    assert sorted([b200.hbm_bytes_per_s, alt["hbm_bytes_per_s"]]) == [7.7e12, 8e12]


@pytest.mark.parametrize("key", ACCS)
def test_alternatives_name_real_fields_and_differ(key):
    a = ACCS[key]
    for alt in a.alternatives:
        assert hasattr(a, alt.field), alt.field
        assert alt.value != getattr(a, alt.field) and alt.source and alt.note


@pytest.mark.parametrize("key", MODELS)
def test_model_is_self_consistent(key):
    m = MODELS[key]
    assert len(m.source) > 20 and m.as_of <= TODAY
    assert m.n_heads % m.n_kv_heads == 0
    assert {"mha": m.n_kv_heads == m.n_heads, "mqa": m.n_kv_heads == 1,
            "gqa": 1 < m.n_kv_heads < m.n_heads, "mla": m.mla is not None}[m.attention]
    assert (m.mla is not None) == (m.attention == "mla")
    assert m.published_n_active_params <= m.published_n_params
    if m.moe is None:
        assert m.published_n_active_params == m.published_n_params
    else:
        assert m.moe.n_experts_per_token <= m.moe.n_experts
        assert m.moe.n_dense_layers < m.n_layers
    assert 0 <= m.sliding_window_tokens <= m.max_context_tokens
