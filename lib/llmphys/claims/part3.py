"""Claims of part 3 of the series, the essay on the memory wall (``000_8c51ff0cbb022c04.txt``).

Each entry is a :class:`~llmphys.claims.Claim`; see :mod:`llmphys.claims` for the fields.
"""

from ._core import Bound, Claim, Compare, Verdict

SOURCE = "000_8c51ff0cbb022c04.txt"
H100 = "specs.accelerator('h100_sxm')"

CLAIMS: list[Claim] = [
    Claim(
        id="M01", source=SOURCE, where="The roofline model",
        claim="The ridge point of an H100-class chip (dense BF16 peak over HBM bandwidth) is "
              "about 296 FLOP per byte.",
        stated="about 296 FLOP/B",
        check=Compare(expr=f"990 * units.TERA / {H100}.hbm_bytes_per_s", target="296",
                      fmt="{:.1f}", unit="FLOP/B"),
        verdict=Verdict.ASSUMPTION, section="sec-memory-wall-roofline",
        assumptions="the H100 SXM's dense BF16 peak rounded up to 990 TFLOP/s, with the "
                    "datasheet's 3.35 TB/s.",
        note="With the registry's unrounded peak the ridge is "
             f"[[roofline.ridge_point({H100})|.1f]] FLOP/B, which rounds to 295.",
        refs=("nvidia2024h100datasheet",),
    ),
    Claim(
        id="M02", source=SOURCE, where="The roofline model",
        claim="A batch-1 decode step has arithmetic intensity 1 and so runs at about 0.3% of "
              "the H100's peak.",
        stated="three tenths of one percent",
        check=Compare(expr=f"100 * roofline.fraction_of_peak({H100}, roofline.matmul_intensity("
                           "1, 8192, 8192, bytes_per_element=2))", target="0.3",
                      fmt="{:.2f}", unit="%"),
        verdict=Verdict.EXACT, section="sec-memory-wall-roofline",
        note="A BF16 matrix-vector product does 2 FLOP per 2-byte weight, hence intensity "
             "[[roofline.matmul_intensity(1, 8192, 8192, bytes_per_element=2)|.2f]] FLOP/B.",
        glue=("04_memory_wall", ("decode_pct",)),
    ),
    Claim(
        id="M03", source=SOURCE, where="The roofline model",
        claim="A training matmul, thousands of tokens through one weight matrix, has "
              "arithmetic intensity above 5000 FLOP/B.",
        stated="above 5000 FLOP/B",
        check=Bound(expr="roofline.matmul_intensity(16_384, 16_384, 16_384, "
                         "bytes_per_element=2)", op=">", threshold=5000, fmt="{:,.0f}",
                    unit="FLOP/B"),
        verdict=Verdict.ASSUMPTION, section="sec-memory-wall-roofline",
        assumptions="a 16,384-wide square layer (Llama 3.1 405B) fed 16,384 tokens in BF16.",
        note="A 4096-wide layer, as in most 7-8B models, gives "
             "[[roofline.matmul_intensity(16_384, 4096, 4096, bytes_per_element=2)|,.0f]] "
             "FLOP/B: still far right of the ridge, but not above 5000.",
        glue=("04_memory_wall", ("train_i",)),
    ),
]
