import pytest

from llmphys import units


def test_prefixes_are_decimal_and_binary_as_named():
    assert units.GB == 1e9 and units.TB == 1e12
    assert units.GiB == 1024**3 and units.KiB == 1024


def test_four_bit_types_take_half_a_byte_not_zero():
    # The classic calculator bug: 4 // 8 == 0. Our table stores floats.
    assert units.bytes_per_element("int4") == 0.5
    assert units.bytes_per_element("fp4") == 0.5


@pytest.mark.parametrize("dtype,expected", [("fp32", 4.0), ("bf16", 2.0), ("fp8", 1.0)])
def test_bytes_per_element(dtype, expected):
    assert units.bytes_per_element(dtype) == expected


def test_unknown_dtype_lists_the_allowed_ones():
    with pytest.raises(ValueError, match=r"dtype='fp12'.*bf16.*fp8"):
        units.bytes_per_element("fp12")


@pytest.mark.parametrize("bad", [0, -1.0, float("nan"), float("inf"), "ten", None])
def test_check_positive_names_the_argument(bad):
    with pytest.raises(ValueError, match="n_tokens"):
        units.check_positive("n_tokens", bad)


def test_check_fraction_rejects_values_above_one():
    assert units.check_fraction("mfu", 0.4) == 0.4
    with pytest.raises(ValueError, match=r"mfu must lie in \(0, 1\]"):
        units.check_fraction("mfu", 1.5)


def test_formatters_say_which_prefix_they_used():
    assert units.fmt_bytes(80e9) == "80.0 GB"
    assert units.fmt_bytes(80e9, binary=True) == "74.5 GiB"  # 80e9 / 2**30 = 74.506
    assert units.fmt_si(1.979e15, "FLOP/s") == "1.98 PFLOP/s"
    assert units.fmt_seconds(0.02) == "20.0 ms"
    assert units.fmt_pct(0.5) == "50.0%"
    assert units.fmt_flop(3.8e25) == "3.80e+25 FLOP"
