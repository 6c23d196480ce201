import pytest

from llmphys import specs, tables


def test_accelerator_table_has_one_row_per_chip_and_units_in_the_header():
    accs = list(specs.accelerators().values())
    lines = tables.accelerator_table(accs).splitlines()
    assert len(lines) == 2 + len(accs)
    assert "TFLOP/s" in lines[0] and "TB/s" in lines[0] and "GB/s/dir" in lines[0]


def test_h100_row_shows_its_ridge_points():
    row = tables.accelerator_table([specs.accelerator("h100_sxm")]).splitlines()[2]
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[2] == "989" and cells[6] == "295" and cells[7] == "591"
    assert cells[4] == "86"  # 81,559 MiB usable (nvidia-smi), not the datasheet's "80GB"


def test_chip_without_fp8_shows_a_dash():
    row = tables.accelerator_table([specs.accelerator("a100_sxm")]).splitlines()[2]
    assert "| – |" in row


def test_ragged_rows_are_rejected():
    with pytest.raises(ValueError, match="row"):
        tables.markdown_table(["a", "b"], [["only one"]])


def test_design_table_lists_every_model_and_the_window_exception():
    table = tables.design_table(specs.models().values())
    for key in specs.models():
        assert f"`{key}`" in table
    assert "| inf |" in table  # Mistral 7B's window


def test_kv_cache_table_shows_llama3_8b_at_128_kib_per_token():
    # 2 (K, V) x 32 layers x 8 KV heads x 128 dims x 2 bytes = 131,072 B = 128 KiB (exact);
    # at its 8,192-token maximum context: 1.07 GB (1e9 bytes) against 16 GB of BF16 weights
    m = specs.model("llama3_8b")
    row = tables.kv_cache_table([m]).splitlines()[2]
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[1] == "GQA" and cells[2] == "128.0"
    assert cells[3] == f"{m.max_context_tokens:,}"
    assert float(cells[4]) == pytest.approx(131072 * m.max_context_tokens / 1e9, abs=0.05)


def test_kv_cache_table_shows_deepseek_v3_at_its_fp8_release_width():
    # DeepSeek-V3 ships FP8 weights (README_WEIGHTS.md): about 673 GB, not 2 x 671 = 1,342.
    row = tables.kv_cache_table([specs.model("deepseek_v3")]).splitlines()[2]
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[5] == "673 (FP8)"
    row = tables.kv_cache_table([specs.model("llama3_8b")]).splitlines()[2]
    assert [c.strip() for c in row.strip("|").split("|")][5] == "16 (BF16)"
