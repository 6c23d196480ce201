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
