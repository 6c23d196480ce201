import dataclasses
import datetime

import pytest

from llmphys import specs

ACCELERATORS = ["a100_sxm", "h100_sxm", "h100_pcie", "h200", "b200", "gb200", "mi300x", "mi325x",
                "tpu_v4", "tpu_v5e", "tpu_v5p", "tpu_v6e"]
MODELS = ["llama2_7b", "llama2_70b", "llama3_8b", "llama3_70b", "llama31_405b", "mistral_7b",
          "mixtral_8x7b", "mixtral_8x22b", "qwen25_72b", "deepseek_v3", "gpt3_175b",
          "chinchilla_70b", "gopher_280b"]


def test_every_required_accelerator_is_registered():
    assert set(ACCELERATORS) <= set(specs.accelerators())


def test_every_required_model_is_registered():
    assert set(MODELS) <= set(specs.models())


def test_unknown_accelerator_lists_the_known_keys():
    with pytest.raises(KeyError, match=r"unknown accelerator 'h1000'.*h100_sxm.*tpu_v6e"):
        specs.accelerator("h1000")


def test_unknown_model_lists_the_known_keys():
    with pytest.raises(KeyError, match=r"unknown model 'llama5'.*deepseek_v3.*llama3_8b"):
        specs.model("llama5")


def test_specs_are_frozen_and_varied_with_replace(h100):
    with pytest.raises(dataclasses.FrozenInstanceError):
        h100.hbm_bytes_per_s = 1.0
    faster = dataclasses.replace(h100, hbm_bytes_per_s=4.8e12)
    assert faster.hbm_bytes_per_s == 4.8e12 and h100.hbm_bytes_per_s == 3.35e12


def test_bidirectional_link_figure_is_derived(h100):
    # NVLink 4: 900 GB/s total = 450 GB/s each way (H100 datasheet).
    assert h100.scale_up_bytes_per_s_per_direction == 450e9
    assert h100.scale_up_bytes_per_s_bidirectional == 900e9


def test_missing_dtype_peak_is_a_clear_error():
    with pytest.raises(ValueError, match=r"a100_sxm has no native fp8.*bf16"):
        specs.accelerator("a100_sxm").peak_flop_per_s("fp8")
    with pytest.raises(ValueError, match=r"dtype='int3'.*allowed"):
        specs.accelerator("h100_sxm").peak_flop_per_s("int3")


def _minimal_accelerator_table():
    return {"name": "X", "vendor": "V", "launch_year": 2024, "peak_bf16_flop_per_s": 1e15,
            "hbm_bytes": 1e11, "hbm_bytes_nominal": 1e11, "hbm_bytes_per_s": 1e12,
            "scale_up_bytes_per_s_per_direction": 1e11,
            "scale_up_domain_size": 8, "scale_out_bytes_per_s_per_direction": 5e10,
            "source": "s", "as_of": datetime.date(2024, 1, 1), "notes": "", "quotes": {}}


def test_loader_accepts_a_complete_table():
    acc = specs._build(specs.Accelerator, _minimal_accelerator_table(), "t[x]", key="x")
    assert acc.peak_fp8_flop_per_s is None and acc.tdp_w is None


@pytest.mark.parametrize("mutate,message", [
    (lambda t: t.pop("hbm_bytes"), r"t\[x\]: missing required field 'hbm_bytes'"),
    (lambda t: t.update(hbm_gb=80), r"t\[x\]: unknown field\(s\) \['hbm_gb'\]"),
    (lambda t: t.update(hbm_bytes="80e9"), r"t\[x\]\.hbm_bytes: expected a number"),
    (lambda t: t.update(launch_year=2024.5), r"t\[x\]\.launch_year: expected an integer"),
    (lambda t: t.update(as_of="2024-01-01"), r"t\[x\]\.as_of: expected a TOML date"),
])
def test_loader_names_file_entry_and_field(mutate, message):
    table = _minimal_accelerator_table()
    mutate(table)
    with pytest.raises(ValueError, match=message):
        specs._build(specs.Accelerator, table, "t[x]", key="x")


def test_model_loader_checks_enumerations():
    raw = dataclasses.asdict(specs.model("llama3_8b"))
    raw = {k: v for k, v in raw.items() if v is not None and k != "key"}
    raw["attention"] = "linear"
    with pytest.raises(ValueError, match=r"attention: 'linear' is not one of"):
        specs._build(specs.Model, raw, "m[y]", key="y")


def test_data_dir_can_be_overridden(tmp_path, monkeypatch):
    (tmp_path / "accelerators.toml").write_text("")
    monkeypatch.setenv(specs.DATA_ENV_VAR, str(tmp_path))
    assert specs.data_dir() == tmp_path


def test_build_spec_serves_other_loaders_with_the_same_checks():
    from llmphys import scaling_laws
    table = {"name": "x", "E": 1.69, "A": 406, "B": 410.7, "alpha": 0.34, "beta": "0.28"}
    with pytest.raises(ValueError, match=r"laws\[x\]\.beta: expected a number"):
        specs.build_spec(scaling_laws.ParametricLaw, table, "laws[x]", key="x")
    table["beta"] = 0.28
    law = specs.build_spec(scaling_laws.ParametricLaw, table, "laws[x]", key="x")
    assert law.A == 406.0 and isinstance(law.A, float)


def test_load_registry_reads_one_section_and_names_file_section_entry_and_field(
    tmp_path, monkeypatch
):
    from llmphys import scaling_laws

    # Hoffmann et al. 2022 eq. 10: E = 1.69 (data/scaling_laws.toml)
    law = scaling_laws.ParametricLaw
    laws = specs.load_registry("scaling_laws.toml", law, section="parametric")
    assert laws["hoffmann2022"].E == 1.69
    with pytest.raises(KeyError, match=r"scaling_laws.toml: no section 'nope'"):
        specs.load_registry("scaling_laws.toml", law, section="nope")
    (tmp_path / "accelerators.toml").write_text("")
    (tmp_path / "laws.toml").write_text('[parametric.x]\nname = "x"\nE = "1.69"\n')
    monkeypatch.setenv(specs.DATA_ENV_VAR, str(tmp_path))
    with pytest.raises(ValueError, match=r"laws.toml\[parametric\.x\]"):
        specs.load_registry("laws.toml", law, section="parametric")


def test_recorded_gives_the_number_and_names_what_is_missing():
    # Meta's Llama 3 model card: "over 15T tokens", recorded as 15e12. Mistral AI has not
    # published Mistral 7B's training token count (data/models.toml notes).
    assert specs.recorded(specs.model("llama3_8b"), "n_training_tokens") == 15e12
    with pytest.raises(ValueError, match=r"mistral_7b\.n_training_tokens is not recorded"):
        specs.recorded(specs.model("mistral_7b"), "n_training_tokens")
    with pytest.raises(ValueError, match=r"tpu_v4\.tdp_w is not recorded"):
        specs.recorded(specs.accelerator("tpu_v4"), "tdp_w")
    with pytest.raises(TypeError, match="entry must be a Model or an Accelerator"):
        specs.recorded({"n_training_tokens": 1.0}, "n_training_tokens")  # type: ignore[arg-type]


def test_a_table_of_integers_is_checked_value_by_value():
    # hf_model_types.toml's field_defaults: Gemma 3's vocabulary is 262,208 entries
    # (transformers' Gemma3TextConfig); a string or a bool in the table is refused by name.
    gemma3 = specs.hf_model_types()["gemma3_text"]
    assert gemma3.field_defaults["vocab_size"] == 262208
    entry = {"module": "x", "source": "x", "as_of": datetime.date(2026, 12, 1)}
    for bad in ("262208", True):
        with pytest.raises(ValueError, match=r"field_defaults: expected a table of integers"):
            specs.build_spec(
                specs.HFModelType, {**entry, "field_defaults": {"vocab_size": bad}}, "t[x]", key="x"
            )
