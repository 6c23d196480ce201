"""Hugging Face configs read into specs.Model reproduce published checkpoint totals exactly.

Each shipped config (tests/data/hf_configs/<repo>/config.json, data/hf_configs/ for those the
book uses) names its source URL in ``_source``. The totals are the exact parameter counts the
Hugging Face model pages show from the checkpoint's safetensors metadata, or the model card's
exact table where one is published (Pythia). Exact means exact: a single missing norm gain is
a failure. Active counts are published only rounded, so they are checked to that rounding.
"""

import dataclasses
import json
from pathlib import Path

import pytest

from llmphys import accounting, hf_config, kv_cache, specs

HERE = Path(__file__).parent / "data" / "hf_configs"
BOOK = specs.data_dir() / "hf_configs"


def _config(name: str) -> Path:
    return HERE / name if (HERE / name).is_dir() else BOOK / name


# (config folder, exact published total, where the number is published)
SF = "Hugging Face model page, safetensors total of {}"
PUBLISHED = [
    ("gpt2", 137_022_720, SF.format("openai-community/gpt2") + " (incl. 12 causal-mask buffers)"),
    ("pythia-70m", 70_426_624, "Pythia model card, 'Naming convention and parameter count' table"),
    ("pythia-1b", 1_011_781_632,
     "Pythia model card, 'Naming convention and parameter count' table"),
    ("pythia-12b", 11_846_072_320,
     "Pythia model card, 'Naming convention and parameter count' table"),
    ("Llama-3.2-1B", 1_235_814_400, SF.format("meta-llama/Llama-3.2-1B")),
    ("Llama-3.2-3B", 3_212_749_824, SF.format("meta-llama/Llama-3.2-3B")),
    ("Mistral-Nemo-Base-2407", 12_247_782_400, SF.format("mistralai/Mistral-Nemo-Base-2407")),
    ("Qwen2.5-0.5B", 494_032_768, SF.format("Qwen/Qwen2.5-0.5B")),
    ("Qwen2.5-7B", 7_615_616_512, SF.format("Qwen/Qwen2.5-7B")),
    ("Qwen1.5-MoE-A2.7B", 14_315_784_192, SF.format("Qwen/Qwen1.5-MoE-A2.7B")),
    ("Qwen3-4B", 4_022_468_096, SF.format("Qwen/Qwen3-4B")),
    ("Qwen3-8B", 8_190_735_360, SF.format("Qwen/Qwen3-8B")),
    ("Qwen3-30B-A3B", 30_532_122_624, SF.format("Qwen/Qwen3-30B-A3B")),
    ("Qwen3-235B-A22B", 235_093_634_560, SF.format("Qwen/Qwen3-235B-A22B")),
    ("gemma-2b", 2_506_172_416, SF.format("google/gemma-2b")),
    ("gemma-7b", 8_537_680_896, SF.format("google/gemma-7b")),
    ("gemma-2-2b", 2_614_341_888, SF.format("google/gemma-2-2b")),
    ("gemma-2-9b", 9_241_705_984, SF.format("google/gemma-2-9b")),
    ("gemma-2-27b", 27_227_128_320, SF.format("google/gemma-2-27b")),
    ("Phi-3-mini-4k-instruct", 3_821_079_552, SF.format("microsoft/Phi-3-mini-4k-instruct")),
    ("Phi-3-medium-4k-instruct", 13_960_238_080, SF.format("microsoft/Phi-3-medium-4k-instruct")),
    ("OLMo-2-1124-7B", 7_298_617_344, SF.format("allenai/OLMo-2-1124-7B")),
    ("DeepSeek-V2-Lite", 15_706_484_224, SF.format("deepseek-ai/DeepSeek-V2-Lite")),
    ("DeepSeek-V2", 235_741_434_880, SF.format("deepseek-ai/DeepSeek-V2")),
    ("DeepSeek-V3", 684_531_386_000, SF.format("deepseek-ai/DeepSeek-V3")
     + " (incl. the MTP layer and the FP8 block scales)"),
]
# The registry's exact totals (data/models.toml published_n_params, sourced in n_params_quote).
REGISTRY_TOTALS = [("Llama-2-7b-hf", "llama2_7b"), ("Llama-2-70b-hf", "llama2_70b"),
                   ("Meta-Llama-3-8B", "llama3_8b"), ("Meta-Llama-3-70B", "llama3_70b"),
                   ("Llama-3.1-405B", "llama31_405b"), ("Mistral-7B-v0.1", "mistral_7b"),
                   ("Mixtral-8x7B-v0.1", "mixtral_8x7b"), ("Mixtral-8x22B-v0.1", "mixtral_8x22b"),
                   ("Qwen2.5-72B", "qwen25_72b")]
PUBLISHED += [(name, int(specs.model(key).published_n_params), specs.model(key).n_params_quote)
              for name, key in REGISTRY_TOTALS]


@pytest.mark.parametrize("name, total, source", PUBLISHED, ids=[p[0] for p in PUBLISHED])
def test_checkpoint_total_is_reproduced_exactly(name, total, source):
    assert hf_config.checkpoint_n_values(_config(name)) == total, source


# Types whose exact checkpoint total is not readable from here, checked below against an
# independent count (Gemma 3) or the published rounding (Llama 4).
CROSS_CHECKED = ["gemma-3-12b-it", "Llama-4-Scout-17B-16E"]


def test_the_shipped_configs_cover_every_model_type():
    types = {hf_config.text_model_config(json.loads((_config(n) / "config.json").read_text()))
             ["model_type"] for n in [p[0] for p in PUBLISHED] + CROSS_CHECKED}
    assert types == set(hf_config.SUPPORTED_MODEL_TYPES)
    assert len(PUBLISHED) >= 14


def test_every_shipped_config_names_its_source():
    for path in list(HERE.glob("*/config.json")) + list(BOOK.glob("*/config.json")):
        assert json.loads(path.read_text())["_source"].startswith("https://huggingface.co/")


# (config, published active count in 1e9, decimals it is given to, where it is published).
# Vendors round or truncate (Qwen3-30B-A3B counts 3.35e9 and prints 3.3B), so the check is
# one unit of the last printed digit. DeepSeek counts the active parameters without the
# input-embedding look-up (DeepSeek-V3 README_WEIGHTS: 36.6B including the 0.9B output head).
ACTIVE = [
    ("Qwen3-30B-A3B", 3.3, 1, "Qwen3-30B-A3B model card: 'Number of Activated Parameters: 3.3B'"),
    ("Qwen3-235B-A22B", 22, 0, "Qwen3-235B-A22B model card: 'Number of Activated Parameters: 22B'"),
    ("Qwen1.5-MoE-A2.7B", 2.7, 1, "Qwen1.5-MoE-A2.7B model card: '2.7B activated parameters'"),
    ("DeepSeek-V2", 21, 0, "DeepSeek-V2 model card: '236B total ... 21B are activated'"),
    ("DeepSeek-V2-Lite", 2.4, 1, "DeepSeek-V2-Lite model card: '16B total, 2.4B activated'"),
    ("DeepSeek-V3", 36.6, 1, "DeepSeek-V3 README_WEIGHTS.md: 36.6B activated (report: 37B)"),
]


@pytest.mark.parametrize("name, active_b, decimals, source", ACTIVE, ids=[a[0] for a in ACTIVE])
def test_active_count_matches_the_published_rounding(name, active_b, decimals, source):
    m = hf_config.model_from_hf_config(_config(name))
    n = accounting.n_active_params(m)
    if name.startswith("DeepSeek"):
        n -= accounting.embedding_params(m)
    assert abs(n / 1e9 - active_b) < 10.0 ** -decimals, source


# Registry key -> the config of the same checkpoint. One way to count: the registry's
# entries and the configs agree field by field, apart from what the registry's notes
# explain (trained rather than configured context; DeepSeek-V3's routing biases).
REGISTRY = {"llama2_7b": "Llama-2-7b-hf", "llama2_70b": "Llama-2-70b-hf",
            "llama3_8b": "Meta-Llama-3-8B", "llama3_70b": "Meta-Llama-3-70B",
            "llama31_405b": "Llama-3.1-405B", "mistral_7b": "Mistral-7B-v0.1",
            "mixtral_8x7b": "Mixtral-8x7B-v0.1", "mixtral_8x22b": "Mixtral-8x22B-v0.1",
            "qwen25_72b": "Qwen2.5-72B", "deepseek_v3": "DeepSeek-V3"}
ARCHITECTURE = ("n_layers", "d_model", "n_heads", "n_kv_heads", "d_head", "d_ff", "vocab_size",
                "attention", "sliding_window_tokens", "position", "norm", "mlp",
                "tied_embeddings", "qkv_bias", "linear_bias", "o_bias", "mlp_bias", "qk_norm",
                "n_norms_per_layer", "mla")


@pytest.mark.parametrize("key", REGISTRY)
def test_registry_entry_and_its_config_agree_field_by_field(key):
    reg, hf = specs.model(key), hf_config.model_from_hf_config(_config(REGISTRY[key]))
    for field in ARCHITECTURE:
        assert getattr(hf, field) == getattr(reg, field), field
    if reg.moe is None:
        assert hf.moe is None
    elif key == "deepseek_v3":
        # The registry leaves out the 58 x 256 e_score_correction_bias values (2e-8 of N)
        # so that the chapters' printed counts stay as they are.
        assert dataclasses.replace(hf.moe, router_bias=False) == reg.moe and hf.moe.router_bias
        assert accounting.n_params(hf) - accounting.n_params(reg) == 58 * 256
        return
    else:
        assert hf.moe == reg.moe
    assert accounting.n_params(hf) == accounting.n_params(reg) == reg.published_n_params


def test_config_context_differs_from_the_registry_only_where_its_notes_say_so():
    differ = {k for k in REGISTRY if hf_config.model_from_hf_config(_config(REGISTRY[k]))
              .max_context_tokens != specs.model(k).max_context_tokens}
    assert differ == {"mistral_7b", "deepseek_v3"}
    for key in differ:
        assert "max_position_embeddings" in specs.model(key).notes


def test_dict_file_and_folder_give_the_same_frozen_model():
    folder = _config("Qwen2.5-0.5B")
    raw = json.loads((folder / "config.json").read_text())
    a = hf_config.model_from_hf_config(raw, key="q", name="Qwen2.5-0.5B")
    b = hf_config.model_from_hf_config(folder / "config.json", key="q", name="Qwen2.5-0.5B")
    c = hf_config.model_from_hf_config(folder, key="q", name="Qwen2.5-0.5B")
    assert a == b == c and isinstance(a, specs.Model)
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.n_layers = 1


def test_the_rest_of_the_library_works_on_an_imported_model():
    m = hf_config.model_from_hf_config(_config("Qwen3-30B-A3B"))
    # 48 layers x 4 KV heads x 128 x (K and V) x 2 bytes (bf16)
    assert kv_cache.kv_bytes_per_token(m) == 48 * 4 * 128 * 2 * 2
    assert accounting.forward_flop_per_token(m, context_tokens=1) > 2 * 3.0e9


def test_defaults_follow_the_reference_implementation():
    llama = {"model_type": "llama", "hidden_size": 64, "num_hidden_layers": 2,
             "num_attention_heads": 4, "intermediate_size": 128, "vocab_size": 100,
             "max_position_embeddings": 32}
    m = hf_config.model_from_hf_config(llama)
    assert (m.n_kv_heads, m.d_head, m.tied_embeddings, m.sliding_window_tokens) == (4, 16, False, 0)
    assert hf_config.model_from_hf_config({**llama, "model_type": "gemma"}).tied_embeddings
    assert hf_config.model_from_hf_config({**llama, "model_type": "gemma"}).d_head == 256
    assert hf_config.model_from_hf_config({**llama, "model_type": "qwen3"}).d_head == 128
    mistral = hf_config.model_from_hf_config({**llama, "model_type": "mistral"})
    assert mistral.sliding_window_tokens == 4096
    gpt2 = {"model_type": "gpt2", "n_embd": 64, "n_layer": 2, "n_head": 4, "vocab_size": 100,
            "n_positions": 32}
    assert hf_config.model_from_hf_config(gpt2).d_ff == 256  # n_inner absent: 4 d


def test_llama_attention_bias_puts_a_bias_on_q_k_v_and_o():
    base = {"model_type": "llama", "hidden_size": 64, "num_hidden_layers": 1,
            "num_attention_heads": 4, "num_key_value_heads": 2, "intermediate_size": 128,
            "vocab_size": 100, "max_position_embeddings": 32}
    plain = accounting.n_params(hf_config.model_from_hf_config(base))
    biased = accounting.n_params(hf_config.model_from_hf_config({**base, "attention_bias": True}))
    assert biased - plain == 64 + 2 * 32 + 64  # q (4x16), k and v (2x16 each), o (64)
    mlp = accounting.n_params(hf_config.model_from_hf_config({**base, "mlp_bias": True}))
    assert mlp - plain == 2 * 128 + 64  # gate and up (128 each), down (64)


def test_attention_bias_counts_only_where_the_modeling_file_reads_it():
    # modeling_mistral.py builds q/k/v/o without biases whatever the config says
    cfg = json.loads((_config("Mistral-7B-v0.1") / "config.json").read_text())
    m = hf_config.model_from_hf_config({**cfg, "attention_bias": True, "mlp_bias": True})
    assert accounting.n_params(m) == 7_241_732_096  # models.toml, HF safetensors total


def test_the_name_comes_from_the_folder():
    m = hf_config.model_from_hf_config(_config("Qwen2.5-0.5B") / "config.json")
    assert (m.name, m.key) == ("Qwen2.5-0.5B", "qwen2_5_0_5b")


def test_unknown_model_type_lists_the_supported_ones():
    with pytest.raises(ValueError, match=r"model_type='t5' is not supported; supported: llama, "
                                         r"mistral.*deepseek_v3"):
        hf_config.model_from_hf_config({"model_type": "t5"})


def test_missing_field_names_the_field_and_the_type():
    with pytest.raises(ValueError, match=r"model_type 'qwen2': missing required field "
                                         r"'intermediate_size'"):
        hf_config.model_from_hf_config({"model_type": "qwen2", "hidden_size": 64,
                                    "num_hidden_layers": 2, "num_attention_heads": 4,
                                    "vocab_size": 10, "max_position_embeddings": 8})


@pytest.mark.parametrize("change, message", [
    ({"rope_scaling": {"rope_type": "mrope"}}, r"rope variant 'mrope' is not modelled"),
    ({"hidden_act": "relu"}, r"activation hidden_act='relu' is not modelled"),
    ({"use_sliding_window": True, "sliding_window": 4096, "max_window_layers": 1},
     r"mixes windowed and full layers"),
    ({"decoder_sparse_step": 2}, r"interleaves dense and MoE layers"),
    ({"tie_word_embeddings": "yes"}, r"tie_word_embeddings must be true or false"),
    ({"num_key_value_heads": 3}, r"not a multiple of num_key_value_heads=3"),
    ({"num_key_value_heads": "4"}, r"num_key_value_heads must be a whole number"),
    ({"head_dim": 12.5}, r"head_dim must be a whole number"),
    ({"num_hidden_layers": -1}, r"num_hidden_layers must be a whole number"),
])
def test_what_the_counter_does_not_model_is_refused_by_name(change, message):
    cfg = json.loads((_config("Qwen3-30B-A3B") / "config.json").read_text())
    with pytest.raises(ValueError, match=message):
        hf_config.model_from_hf_config({**cfg, **change})


def test_unmodelled_quantization_is_refused():
    cfg = json.loads((_config("Qwen2.5-7B") / "config.json").read_text())
    with pytest.raises(ValueError, match=r"quantization_config 'gptq'.*only block-scaled fp8"):
        hf_config.checkpoint_n_values({**cfg, "quantization_config": {"quant_method": "gptq"}})


def test_bad_paths_and_types_are_named(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"config='.*nowhere': no such file"):
        hf_config.model_from_hf_config(tmp_path / "nowhere")
    (tmp_path / "config.json").write_text("{not json")
    with pytest.raises(ValueError, match=r"config.json: not valid JSON"):
        hf_config.model_from_hf_config(tmp_path)
    with pytest.raises(TypeError, match=r"config must be a dict, a path"):
        hf_config.model_from_hf_config(42)


def test_gemma2_note_says_the_kv_cache_is_an_upper_bound_past_the_window():
    m = hf_config.model_from_hf_config(_config("gemma-2-9b"))
    assert m.sliding_window_tokens == 0 and "upper bound" in m.notes


def test_deepseek_v3_page_total_splits_as_the_registry_notes_reconcile_it():
    # data/models.toml [deepseek_v3] notes: main model 671,026,419,200; the MTP layer with its
    # copies of embedding and head 13,463,426,304; the FP8 block-scale tensors 41,540,496.
    parts = hf_config.checkpoint_breakdown(_config("DeepSeek-V3"))
    assert parts == {"model": 671_026_419_200, "mtp_layers": 13_463_426_304,
                     "quant_scales": 41_540_496, "mask_buffers": 0}
    for n in ("671,026,419,200", "13,463,426,304", "41,540,496"):
        assert n in specs.model("deepseek_v3").notes


def test_gemma3_12b_text_model_matches_keras_hubs_independent_count():
    # keras-hub gemma3_presets.py, "gemma3_12b_text": 11,765,788,416 parameters, from its own
    # implementation. The Hugging Face text_config has 262,208 vocabulary rows (the
    # Gemma3TextConfig default) where keras-hub has 64 fewer: 64 x 3,840 = 245,760.
    m = hf_config.model_from_hf_config(_config("gemma-3-12b-it"))
    assert accounting.n_params(m) - 64 * m.d_model == 11_765_788_416
    assert m.tied_embeddings and m.qk_norm == "head" and m.n_norms_per_layer == 4
    assert "vision tower" in m.notes and "upper bound" in m.notes


def test_llama4_scout_text_model_has_17b_active_and_stays_below_the_109b_total():
    # Meta's Llama 4 announcement: Scout "17B active parameters, 16 experts, 109B total";
    # the total includes the vision encoder, which the text model leaves out.
    m = hf_config.model_from_hf_config(_config("Llama-4-Scout-17B-16E"))
    assert round(accounting.n_active_params(m) / 1e9) == 17
    assert 0.97 < accounting.n_params(m) / 109e9 < 1.0
    assert m.moe is not None and (m.moe.n_experts, m.moe.n_shared_experts) == (16, 1)
    assert m.d_ff == 16_384 and m.moe.d_ff_expert == 8192  # intermediate_size_mlp, _size


def test_a_wrapped_config_counts_like_its_text_config():
    raw = json.loads((_config("gemma-3-12b-it") / "config.json").read_text())
    inner = hf_config.model_from_hf_config({**raw["text_config"]}, name="x")
    outer = hf_config.model_from_hf_config(raw, name="x")
    assert accounting.n_params(inner) == accounting.n_params(outer)


def test_llama4_maverick_interleaving_is_refused_by_name():
    raw = json.loads((_config("Llama-4-Scout-17B-16E") / "config.json").read_text())
    raw["text_config"]["interleave_moe_layer_step"] = 2  # Maverick alternates dense and MoE
    with pytest.raises(ValueError, match="interleave_moe_layer_step=2 interleaves dense"):
        hf_config.model_from_hf_config(raw)


def test_a_repo_id_resolves_in_the_local_cache_and_a_missing_one_says_no_network(tmp_path):
    snap = tmp_path / "models--Qwen--Qwen2.5-0.5B" / "snapshots" / "abc123"
    snap.mkdir(parents=True)
    (snap / "config.json").write_text((BOOK / "Qwen2.5-0.5B" / "config.json").read_text())
    (tmp_path / "models--Qwen--Qwen2.5-0.5B" / "refs").mkdir()
    (tmp_path / "models--Qwen--Qwen2.5-0.5B" / "refs" / "main").write_text("abc123")
    path = hf_config.cached_config_path("Qwen/Qwen2.5-0.5B", cache_dir=tmp_path)
    assert path == snap / "config.json"
    assert accounting.n_params(hf_config.model_from_hf_config(path)) == 494_032_768
    with pytest.raises(FileNotFoundError, match="no network"):
        hf_config.cached_config_path("Qwen/Qwen9-1T", cache_dir=tmp_path)
    with pytest.raises(ValueError, match="repo_id"):
        hf_config.cached_config_path("not a repo id", cache_dir=tmp_path)


def test_a_geglu_model_trains_with_the_same_bytes_as_its_swiglu_twin():
    # GeGLU and SwiGLU read a gate and an up projection and write one product: the training
    # step's terms are the same; only the activation's FLOP differ, which the step ignores.
    from llmphys import predict
    m = hf_config.model_from_hf_config(_config("gemma-3-12b-it"))
    kw = dict(n_chips=8, tp=8, seq_len=4096, global_batch_tokens=64 * 4096, check_memory=False)
    geglu = predict.train_step(m, "h100_sxm", **kw)
    swiglu = predict.train_step(dataclasses.replace(m, mlp="swiglu"), "h100_sxm", **kw)
    assert m.mlp == "geglu" and geglu.parts == swiglu.parts


def test_model_type_defaults_come_from_data_and_name_file_entry_and_field(tmp_path, monkeypatch):
    # data/hf_model_types.toml: DeepSeek-V3's modeling file adds e_score_correction_bias and
    # its checkpoint stores num_nextn_predict_layers MTP layers; Gemma 2 has 4 norms a layer.
    types = specs.hf_model_types()
    assert set(types) == set(hf_config.SUPPORTED_MODEL_TYPES)
    assert types["deepseek_v3"].router_bias and types["deepseek_v3"].mtp_layers
    assert not types["deepseek_v2"].router_bias and not types["deepseek_v2"].mtp_layers
    assert types["gemma2"].n_norms_per_layer == 4
    (tmp_path / "accelerators.toml").write_text("")
    (tmp_path / "hf_model_types.toml").write_text(
        '[llama]\nmodule = "llama"\nsource = "x"\nas_of = 2026-12-01\nqk_norm = "both"\n'
    )
    monkeypatch.setenv(specs.DATA_ENV_VAR, str(tmp_path))
    specs._load.cache_clear()
    try:
        with pytest.raises(ValueError, match=r"hf_model_types.toml\[llama\]\.qk_norm"):
            specs.hf_model_types()
    finally:
        specs._load.cache_clear()
