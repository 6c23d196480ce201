"""specs.accelerator_from_toml: one chip in the registry's schema, through the registry's checks."""

import tomllib
from pathlib import Path

import pytest

from llmphys import roofline, specs

L40S = Path(__file__).resolve().parents[1] / "data" / "examples" / "nvidia_l40s.toml"


def _table(**change):
    with open(L40S, "rb") as f:
        table = tomllib.load(f)["l40s"]
    return {**table, **change}


def test_the_shipped_example_loads_with_its_key_and_datasheet_numbers():
    acc = specs.accelerator_from_toml(L40S)
    assert acc.key == "l40s" and isinstance(acc, specs.Accelerator)
    # NVIDIA L40S datasheet: 362.05 TFLOPS BF16 dense, 733 FP8 dense, 864 GB/s
    assert (acc.peak_bf16_flop_per_s, acc.peak_fp8_flop_per_s) == (362.05e12, 733e12)
    assert round(roofline.ridge_point(acc), 1) == 419.0  # 362.05e12 / 864e9


def test_a_dict_or_a_bare_table_gives_the_same_spec():
    a = specs.accelerator_from_toml({"l40s": _table()})
    b = specs.accelerator_from_toml(_table(), key="l40s")
    assert a == b == specs.accelerator_from_toml(L40S)


def test_every_registry_chip_passes_the_same_checks():
    for key, acc in specs.accelerators().items():
        table = {f: getattr(acc, f) for f in acc.__dataclass_fields__ if f != "key"}
        table["alternatives"] = [vars(a) for a in acc.alternatives]
        table["estimated"] = list(acc.estimated)
        for f in [f for f, v in table.items() if v is None]:
            del table[f]
        assert specs.accelerator_from_toml(table, key=key) == acc


@pytest.mark.parametrize("change, message", [
    ({"hbm_bytes_per_s": "864 GB/s"}, r"\[l40s\]\.hbm_bytes_per_s: expected a number"),
    ({"hbm_bytes": -1.0}, r"\[l40s\]\.hbm_bytes: must be > 0"),
    ({"peak_bf16_sparse_flop_per_s": 733e12}, r"dense peak must be half the 2:4 sparse figure"),
    ({"estimated": ["hbm_speed"]}, r"estimated: names no field: \['hbm_speed'\]"),
    ({"hbm_gb": 48}, r"unknown field\(s\) \['hbm_gb'\]"),
    ({"scale_up_domain_size": 0}, r"scale_up_domain_size: must be >= 1"),
])
def test_bad_tables_are_refused_naming_entry_and_field(change, message):
    with pytest.raises(ValueError, match=message):
        specs.accelerator_from_toml({"l40s": _table(**change)})


def test_a_bad_file_is_named(tmp_path):
    bad = tmp_path / "chip.toml"
    bad.write_text(L40S.read_text().replace("hbm_bytes_per_s = 864e9", 'hbm_bytes_per_s = "fast"'))
    with pytest.raises(ValueError, match=r"chip.toml\[l40s\]\.hbm_bytes_per_s: expected a number"):
        specs.accelerator_from_toml(bad)
    with pytest.raises(ValueError, match=r"\[l40s\]: missing required field 'vendor'"):
        specs.accelerator_from_toml({"l40s": {"name": "x"}})
    two = tmp_path / "two.toml"
    two.write_text(L40S.read_text() + L40S.read_text().replace("[l40s", "[l40s_b"))
    with pytest.raises(ValueError, match=r"holds 2 tables \(l40s, l40s_b\); give one"):
        specs.accelerator_from_toml(two)
    (tmp_path / "broken.toml").write_text("[x\n")
    with pytest.raises(ValueError, match=r"broken.toml: not valid TOML"):
        specs.accelerator_from_toml(tmp_path / "broken.toml")
    with pytest.raises(FileNotFoundError, match=r"no such TOML file"):
        specs.accelerator_from_toml(tmp_path / "none.toml")
    with pytest.raises(TypeError, match=r"source must be a path to a TOML file or a dict"):
        specs.accelerator_from_toml(3)
