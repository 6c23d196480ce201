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
    assert h100.hbm_bytes_per_s == 3.35e12 and h100.hbm_bytes_nominal == 80e9
    assert h100.scale_up_domain_size == 8


def test_a100_integer_peaks_double_per_halving_of_width():
    # A100 datasheet: BF16 312, INT8 624, INT4 1,248 dense TOPS. Its narrowest native format is
    # INT4, not BF16: its ridge there is 612 op/B, not the BF16 153 FLOP/B.
    a100 = ACCS["a100_sxm"]
    assert a100.integer_dtypes == ("int8", "int4") and a100.matrix_dtypes == ("bf16",)
    assert a100.peak_flop_per_s("int8") == 2 * a100.peak_bf16_flop_per_s == 624e12
    assert a100.peak_flop_per_s("int4") == 2 * a100.peak_flop_per_s("int8")
    assert roofline.ridge_point(a100, "int4") == pytest.approx(1248e12 / 2.039e12)


@pytest.mark.parametrize("key", [k for k in ACCS
                                 if k.startswith(("h100", "h200", "b200", "gb200"))])
def test_hopper_and_blackwell_have_no_int4_and_int8_no_faster_than_fp8(key):
    # NVIDIA dropped INT4 tensor math after Ampere; Hopper's INT8 peak equals its FP8 peak.
    a = ACCS[key]
    assert a.peak_int4_op_per_s is None
    if a.peak_int8_op_per_s is not None:
        assert a.peak_int8_op_per_s <= a.peak_fp8_flop_per_s


def test_b200_records_both_published_memory_figures():
    b200 = ACCS["b200"]
    alt = {x.field: x.value for x in b200.alternatives}
    assert {"hbm_bytes_nominal", "hbm_bytes_per_s"} <= set(alt)
    used_and_alt = sorted([b200.hbm_bytes_nominal, alt["hbm_bytes_nominal"]])
    assert used_and_alt == [180e9, 192e9]
    assert sorted([b200.hbm_bytes_per_s, alt["hbm_bytes_per_s"]]) == [7.7e12, 8e12]


MiB = 2**20


@pytest.mark.parametrize("key,mib", [
    # nvidia-smi memory.total, as printed in public issue trackers:
    ("h100_sxm", 81_559),   # NVIDIA/nccl#1264; modal-labs/modal-client#2797
    ("h200", 143_771),      # sgl-project/sglang#3196
    ("a100_sxm", 81_920),   # modal-labs/modal-client#2797
    ("b200", 183_359),      # NVIDIA/TensorRT-LLM#10278
])
def test_usable_hbm_is_what_nvidia_smi_reports(key, mib):
    # Exact: the registry stores the driver's MiB count times 2**20, nothing rounded.
    assert ACCS[key].hbm_bytes == mib * MiB


def test_mi300x_usable_hbm_is_the_rocm_pool():
    # rocminfo GLOBAL pool 201,310,208 KiB (ROCm/legacy-rocm-build#4414); in CPX mode the eight
    # partitions report 25,767,706,624 bytes each (#4750): the same total, exactly.
    assert ACCS["mi300x"].hbm_bytes == 201_310_208 * 1024 == 8 * 25_767_706_624


@pytest.mark.parametrize("key", [k for k, a in ACCS.items() if a.vendor in ("NVIDIA", "AMD")])
def test_gpu_marketing_gb_of_hbm_is_about_a_gib(key):
    # The headline "80GB"/"141GB" is a count of GiB less what the driver reserves: usable bytes
    # exceed the decimal reading by 6-7% and sit within 1% below the binary reading.
    a = ACCS[key]
    assert 1.05 < a.hbm_bytes / a.hbm_bytes_nominal < 1.08
    assert 0.99 < a.hbm_bytes / (a.hbm_bytes_nominal / 1e9 * 2**30) <= 1.0


@pytest.mark.parametrize("key", ACCS)
def test_every_hbm_figure_has_a_quote_and_a_nominal_wording(key):
    a = ACCS[key]
    assert a.quotes.get("hbm_bytes") and a.quotes.get("hbm_bytes_nominal")
    assert a.hbm_bytes >= a.hbm_bytes_nominal  # usable never below the headline on these parts
    if "hbm_bytes" not in a.estimated and a.hbm_bytes != a.hbm_bytes_nominal:
        assert re.search(r"nvidia-smi|rocminfo", a.quotes["hbm_bytes"]), a.quotes["hbm_bytes"]


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
