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
    assert units.fmt_flop(3.8e25) == "3.80 × 10²⁵ FLOP"


def test_uncertain_value_follows_the_gum_example():
    # JCGM 100:2008 (GUM) sec. 7.2.2: m_S = 100.021 47 g with u_c = 0.35 mg, the estimate
    # written to the place of the uncertainty's second significant digit.
    assert units.fmt_uncertain(100.0214712, 0.00035) == "100.02147"
    assert units.uncertainty_decimals(0.00035) == 5


def test_uncertain_value_rounds_to_tens_when_the_sd_is_in_the_hundreds():
    # chapter 5's bootstrap: A has s.d. 106.6, so its interval is good to tens
    assert [units.fmt_uncertain(x, 106.6) for x in (374.5267, 633.2908, 106.6110)] == \
        ["370", "630", "110"]
    assert units.uncertainty_decimals(779.56) == -1 and units.uncertainty_decimals(8.87) == 1


def test_uncertain_value_counts_digits_after_the_sd_is_rounded():
    # 0.0999 rounds to 0.10 (two digits), so two decimals, not three; one digit asks for less
    assert units.uncertainty_decimals(0.0999) == 2
    assert units.uncertainty_decimals(0.0253, sd_digits=1) == 2


@pytest.mark.parametrize("sd", [0.0, -1.0, float("nan"), float("inf")])
def test_uncertain_value_rejects_a_bad_sd(sd):
    with pytest.raises(ValueError, match="sd"):
        units.fmt_uncertain(1.0, sd)


def test_uncertain_value_rejects_bad_digits():
    with pytest.raises(ValueError, match="sd_digits"):
        units.uncertainty_decimals(1.0, sd_digits=0)


def test_fmt_sci_writes_a_times_sign_and_a_superscript_never_e_notation():
    # Issue 32 item 14: prose showed "3.15e+23", "4.1e+11".
    assert units.fmt_sci(3.15e23) == "3.15 × 10²³"
    assert units.fmt_sci(4.1e11, digits=2) == "4.1 × 10¹¹"
    assert units.fmt_sci(2.2e-21, digits=2) == "2.2 × 10⁻²¹"
    assert units.fmt_sci(16384, digits=5) == "16,384"
    assert units.fmt_sci(9.996e5, digits=3) == "1.00 × 10⁶"  # rounding carries into the exponent
    assert "e" not in units.fmt_sci(-7.5e-9, digits=2)


def test_fmt_sci_rejects_what_it_cannot_write():
    import pytest
    with pytest.raises(ValueError, match="finite"):
        units.fmt_sci(float("nan"))
    with pytest.raises(ValueError, match="digits"):
        units.fmt_sci(1.0, digits=0)
