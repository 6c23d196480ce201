"""Named prefixes, bytes per element by dtype, and number formatters.

Every quantity inside the library is a plain float in SI base units (bytes,
seconds, FLOP, watts, US dollars). Prefixes are named here once, so no formula
in the book ever contains a literal ``1e9`` or ``1024**3``. Vendors quote
bandwidth in decimal units (1 TB/s = 1e12 B/s) and often quote memory capacity
in "GB" that are really binary; the data files say which, and the formatters
below always print the unit they used.

Introduced in chapters/notation.md.

Home: chapters/hardware_tour.ipynb.
"""

from __future__ import annotations

import math

# Decimal (SI) prefixes: bandwidth, FLOP and FLOP/s are always decimal.
KILO, MEGA, GIGA, TERA, PETA, EXA = 1e3, 1e6, 1e9, 1e12, 1e15, 1e18
KB, MB, GB, TB, PB = KILO, MEGA, GIGA, TERA, PETA
# Binary (IEC) prefixes: used where a capacity is a power of two.
KiB, MiB, GiB, TiB = 2.0**10, 2.0**20, 2.0**30, 2.0**40
# Time.
MS, US, NS = 1e-3, 1e-6, 1e-9
MINUTE, HOUR, DAY = 60.0, 3600.0, 86400.0
YEAR = 365.25 * DAY
# Bits in a byte, for links quoted in Gb/s.
BITS_PER_BYTE = 8.0

# Storage size of one element. Floats, never ``bits // 8`` (which is 0 for 4-bit).
BYTES_PER_ELEMENT: dict[str, float] = {
    "fp64": 8.0,
    "fp32": 4.0,
    "tf32": 4.0,  # stored in 32 bits; only the multiplier sees 19 of them
    "bf16": 2.0,
    "fp16": 2.0,
    "fp8": 1.0,
    "int8": 1.0,
    "fp4": 0.5,
    "int4": 0.5,
}


def bytes_per_element(dtype: str) -> float:
    """Bytes one element of ``dtype`` occupies in memory.

    >>> bytes_per_element("bf16"), bytes_per_element("fp4")
    (2.0, 0.5)
    """
    try:
        return BYTES_PER_ELEMENT[dtype]
    except (KeyError, TypeError):
        allowed = ", ".join(BYTES_PER_ELEMENT)
        raise ValueError(f"dtype={dtype!r} is not known; allowed: {allowed}") from None


def check_positive(name: str, value: float) -> float:
    """Return ``value`` as a float, or raise ValueError naming ``name`` if it is not > 0.

    >>> check_positive("n_tokens", 3)
    3.0
    """
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a positive number, got {value!r}") from None
    if not math.isfinite(x) or x <= 0:
        raise ValueError(f"{name} must be a positive finite number (> 0), got {value!r}")
    return x


def check_fraction(name: str, value: float) -> float:
    """Return ``value`` as a float, or raise ValueError unless 0 < value <= 1."""
    x = check_positive(name, value)
    if x > 1:
        raise ValueError(f"{name} must lie in (0, 1], got {value!r}")
    return x


_DECIMAL = [(1e18, "E"), (1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")]
_BINARY = [(TiB, "Ti"), (GiB, "Gi"), (MiB, "Mi"), (KiB, "Ki")]


def fmt_si(value: float, unit: str = "", *, digits: int = 3) -> str:
    """Format with the largest decimal prefix that keeps the mantissa >= 1.

    >>> fmt_si(989.4e12, "FLOP/s")
    '989 TFLOP/s'
    >>> fmt_si(3.35e12, "B/s")
    '3.35 TB/s'
    """
    for scale, prefix in _DECIMAL:
        if abs(value) >= scale:
            return f"{_sig(value / scale, digits)} {prefix}{unit}"
    return f"{_sig(value, digits)} {unit}".rstrip()


def fmt_bytes(n_bytes: float, *, binary: bool = False, digits: int = 3) -> str:
    """Format a byte count as GB (decimal, default) or GiB (``binary=True``).

    >>> fmt_bytes(80e9), fmt_bytes(80e9, binary=True)
    ('80.0 GB', '74.5 GiB')
    """
    if not binary:
        return fmt_si(n_bytes, "B", digits=digits)
    for scale, prefix in _BINARY:
        if abs(n_bytes) >= scale:
            return f"{_sig(n_bytes / scale, digits)} {prefix}B"
    return f"{_sig(n_bytes, digits)} B"


_SUPERSCRIPT = str.maketrans(
    "-0123456789", "\u207b\u2070\u00b9\u00b2\u00b3\u2074\u2075\u2076\u2077\u2078\u2079"
)


def fmt_sci(value: float, *, digits: int | None = 3) -> str:
    """``value`` in scientific notation for prose, ``digits`` significant figures: "3.15 × 10²³".

    ``digits=None`` keeps the digits the stored value has (its shortest repr, at most 6): for a
    published figure kept at the source's precision, 3.8e25 -> "3.8 × 10²⁵".

    Python's e-notation ("3.15e+23") is for code; a reader's page gets a times sign and a
    superscript exponent, which plain text, HTML and the PDF all render without math markup.
    Values from 0.001 to 999,999 are written plainly (with separators), where an exponent only
    gets in the way.

    >>> fmt_sci(3.1449e23), fmt_sci(6.5e-5, digits=2), fmt_sci(4.2e24, digits=2), fmt_sci(1234.5)
    ('3.14 × 10²³', '6.5 × 10⁻⁵', '4.2 × 10²⁴', '1,230')
    >>> fmt_sci(3.8e25, digits=None)
    '3.8 × 10²⁵'
    """
    if not (isinstance(value, (int, float)) and math.isfinite(value)):
        raise ValueError(f"value must be a finite number, got {value!r}")
    if digits is None:
        digits = max(len(f"{abs(value):.6e}".split("e")[0].replace(".", "").rstrip("0")), 1)
    if not (isinstance(digits, int) and digits >= 1):
        raise ValueError(f"digits must be an integer >= 1, got {digits!r}")
    if value == 0:
        return "0"
    mantissa, exponent = f"{value:.{digits - 1}e}".split("e")
    exp = int(exponent)
    if -3 <= exp <= 5:
        rounded = float(f"{value:.{digits - 1}e}")
        decimals = max(digits - 1 - exp, 0)
        return f"{rounded:,.{decimals}f}"
    return f"{mantissa} × 10{str(exp).translate(_SUPERSCRIPT)}"


def fmt_flop(n_flop: float, *, digits: int = 3) -> str:
    """Format a FLOP count in scientific notation, the way papers quote run sizes.

    >>> fmt_flop(3.14e23)
    '3.14 × 10²³ FLOP'
    """
    return f"{fmt_sci(n_flop, digits=digits)} FLOP"


def fmt_seconds(t_s: float, *, digits: int = 3) -> str:
    """Format a duration with the most readable unit, from ns to years.

    >>> fmt_seconds(0.0203), fmt_seconds(5400.0)
    ('20.3 ms', '1.50 h')
    """
    for scale, name in [
        (YEAR, "years"),
        (DAY, "days"),
        (HOUR, "h"),
        (MINUTE, "min"),
        (1.0, "s"),
        (MS, "ms"),
        (US, "µs"),
    ]:
        if abs(t_s) >= scale:
            return f"{_sig(t_s / scale, digits)} {name}"
    return f"{_sig(t_s / NS, digits)} ns"


def fmt_pct(fraction: float, *, decimals: int = 1) -> str:
    """Format a fraction in [0, 1] as a percentage.

    >>> fmt_pct(0.00338, decimals=2)
    '0.34%'
    """
    return f"{100.0 * fraction:.{decimals}f}%"


def uncertainty_decimals(sd: float, *, sd_digits: int = 2) -> int:
    """Decimal places (negative: tens, hundreds) a value with standard uncertainty ``sd`` carries.

    The place of the ``sd_digits``-th significant digit of ``sd`` once ``sd`` is rounded to
    that many digits: the GUM's rule (JCGM 100:2008, "Guide to the expression of uncertainty
    in measurement", sec. 7.2.6) is to quote an uncertainty to at most two significant digits
    and the estimate to the same place. Digits past it are noise, and on re-execution they
    differ between CPUs.

    >>> uncertainty_decimals(106.6), uncertainty_decimals(0.0253), uncertainty_decimals(0.0999)
    (-1, 3, 2)
    """
    if not (isinstance(sd, (int, float)) and math.isfinite(sd) and sd > 0):
        raise ValueError(f"sd must be a finite standard uncertainty > 0, got {sd!r}")
    if not (isinstance(sd_digits, int) and sd_digits >= 1):
        raise ValueError(f"sd_digits must be an integer >= 1, got {sd_digits!r}")
    rounded = float(f"{sd:.{sd_digits - 1}e}")  # 0.0999 -> 0.10: two digits, not three
    return sd_digits - 1 - math.floor(math.log10(rounded))


def fmt_uncertain(value: float, sd: float, *, sd_digits: int = 2) -> str:
    """``value`` written to the decimal place that its standard uncertainty ``sd`` supports.

    The place is ``uncertainty_decimals(sd, sd_digits=sd_digits)``. Chinchilla's bootstrap
    gives A an 80% interval of 374.5 to 633.3 with s.d. 106.6 (chapter 5): written honestly,

    >>> fmt_uncertain(374.527, 106.6), fmt_uncertain(633.291, 106.6), fmt_uncertain(106.6, 106.6)
    ('370', '630', '110')
    >>> fmt_uncertain(1.78534, 0.0253)
    '1.785'
    """
    if not math.isfinite(value):
        raise ValueError(f"value must be finite, got {value!r}")
    k = uncertainty_decimals(sd, sd_digits=sd_digits)
    return f"{round(value, k):.{max(k, 0)}f}"


def _sig(x: float, digits: int) -> str:
    """``x`` with ``digits`` significant figures, without switching to e-notation."""
    if x == 0:
        return "0"
    decimals = max(digits - 1 - math.floor(math.log10(abs(x))), 0)
    return f"{x:.{decimals}f}"
