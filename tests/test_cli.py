"""The llmphys command line, run as a subprocess the way a reader runs it."""

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from llmphys import accounting, cli, kv_cache, specs

ROOT = Path(__file__).resolve().parents[1]
QWEN = str(ROOT / "data" / "hf_configs" / "Qwen2.5-0.5B")
L40S = str(ROOT / "data" / "examples" / "nvidia_l40s.toml")


def llmphys(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "lib")}
    return subprocess.run([sys.executable, "-m", "llmphys", *args], capture_output=True,
                          text=True, env=env, cwd=ROOT, timeout=120, check=False)


def test_params_of_a_shipped_config_prints_the_exact_total_and_components():
    out = llmphys("params", QWEN)
    assert out.returncode == 0, out.stderr
    assert "494,032,768" in out.stdout  # Qwen2.5-0.5B safetensors total (tests/test_hf_config.py)
    assert "tied to the input embedding" in out.stdout
    for part in ("embedding", "attention", "ffn", "norms", "output_head"):
        assert part in out.stdout


def test_params_json_agrees_with_the_library():
    out = llmphys("params", "mixtral_8x7b", "--json")
    r = json.loads(out.stdout)
    m = specs.model("mixtral_8x7b")
    assert r["n_params"] == 46_702_792_704 == accounting.n_params(m)  # models.toml, HF total
    assert r["n_active_params"] == int(accounting.n_active_params(m))
    assert sum(r["components"].values()) == r["n_params"]


def test_kv_json_is_bytes_per_token_times_tokens_times_batch():
    r = json.loads(llmphys("kv", "llama3_8b", "--tokens", "8192", "--batch", "4",
                           "--dtype", "fp8", "--json").stdout)
    # 2 (K, V) x 32 layers x 8 KV heads x 128 x 1 byte = 65,536 bytes per token
    assert r["bytes_per_token"] == 65_536.0
    assert r["bytes_total"] == 65_536.0 * 8192 * 4
    m = specs.model("llama3_8b")
    assert r["bytes_per_sequence"] == kv_cache.kv_cache_bytes(m, n_tokens=8192,
                                                              bytes_per_element=1.0)


def test_kv_of_a_sliding_window_model_says_what_the_window_keeps():
    out = llmphys("kv", "mistral_7b", "--tokens", "32768")
    assert "a sliding window keeps 4,096" in out.stdout  # Mistral 7B: W = 4096


def test_roofline_of_a_registry_chip_and_of_a_toml_file():
    r = json.loads(llmphys("roofline", "h100_sxm", "--json").stdout)
    assert round(r["ridge_flop_per_byte"], 1) == 295.3  # 989.4 TFLOP/s / 3.35 TB/s
    r = json.loads(llmphys("roofline", L40S, "--dtype", "fp8", "--json").stdout)
    # L40S datasheet: FP8 733 TFLOPS dense (1,466 with sparsity), 864 GB/s
    assert r["peak_flop_per_s"] == 733e12 and r["hbm_bytes_per_s"] == 864e9
    assert round(r["ridge_flop_per_byte"]) == 848


def test_chips_and_models_list_the_registries_with_sources_on_request():
    chips = json.loads(llmphys("chips", "--json").stdout)
    assert [c["key"] for c in chips] == list(specs.accelerators())
    assert "source" not in chips[0]
    models = json.loads(llmphys("models", "--sources", "--json").stdout)
    assert {m["key"] for m in models} == set(specs.models()) and "source" in models[0]


@pytest.mark.parametrize("args", [("params", QWEN), ("params", "deepseek_v3"),
                                  ("kv", QWEN, "--tokens", "32768", "--batch", "8"),
                                  ("roofline", "b200", "--dtype", "fp4"), ("chips", "--sources"),
                                  ("models", "--sources")])
def test_human_output_fits_100_columns_and_names_its_byte_unit(args):
    out = llmphys(*args)
    assert out.returncode == 0, out.stderr
    assert max(len(line) for line in out.stdout.splitlines()) <= 100
    if args[0] in ("params", "kv", "roofline"):
        assert "GB" in out.stdout and "GiB" in out.stdout
    else:
        assert "GB = 1e9 bytes" in out.stdout or "2 GB (1.86 GiB)" in out.stdout


@pytest.mark.parametrize("args, message", [
    (("params", "llama5"), r"'llama5' is neither a registry model \(known: chinchilla_70b"),
    (("roofline", "a100_sxm", "--dtype", "fp8"), r"a100_sxm has no native fp8 matrix math"),
    (("roofline", "tpu_v9"), r"'tpu_v9' is neither a registry accelerator"),
    (("kv", "llama3_8b", "--tokens", "0"), r"argument --tokens: must be a whole number >= 1"),
    (("kv", "llama3_8b", "--tokens", "8", "--dtype", "int3"), r"invalid choice: 'int3'"),
    (("kv", "llama3_8b"), r"the following arguments are required: --tokens"),
    (("frobnicate",), r"invalid choice: 'frobnicate'"),
])
def test_bad_input_exits_2_with_the_reason_on_stderr(args, message):
    out = llmphys(*args)
    assert out.returncode == 2 and out.stdout == ""
    assert __import__("re").search(message, " ".join(out.stderr.split())), out.stderr
    if "usage:" not in out.stderr:  # argparse's own usage errors keep argparse's layout
        assert max(len(line) for line in out.stderr.splitlines()) <= 100


def test_a_broken_config_file_is_named(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "llama", "hidden_size": 8}))
    out = llmphys("params", str(tmp_path))
    assert out.returncode == 2
    assert "model_type 'llama': missing required field 'num_hidden_layers'" in out.stderr


def test_the_console_script_entry_point_exists():
    with open(ROOT / "lib" / "pyproject.toml", "rb") as f:
        scripts = tomllib.load(f)["project"]["scripts"]
    module, func = scripts["llmphys"].split(":")
    assert module == "llmphys.cli" and callable(getattr(cli, func))


def test_main_returns_the_exit_code_in_process(capsys):
    assert cli.main(["params", "llama3_8b"]) == 0
    assert "8,030,261,248" in capsys.readouterr().out  # models.toml: HF safetensors total
    assert cli.main(["params", "nope"]) == 2


def test_params_of_a_config_says_what_the_checkpoint_files_add():
    ds = str(ROOT / "data" / "hf_configs" / "DeepSeek-V3")
    out = llmphys("params", ds)
    # the HF page's 684,531,386,000 = model + MTP layer + FP8 block scales (test_hf_config.py)
    assert "684,531,386,000" in " ".join(out.stdout.split())
    assert "mtp_layers 13,463,426,304" in out.stdout
    r = json.loads(llmphys("params", ds, "--json").stdout)
    assert sum(r["checkpoint"].values()) == 684_531_386_000
    assert max(len(line) for line in out.stdout.splitlines()) <= 100


def test_kv_of_an_imported_model_repeats_what_the_import_could_not_represent(tmp_path):
    cfg = {"model_type": "gemma2", "hidden_size": 256, "num_hidden_layers": 2,
           "num_attention_heads": 4, "num_key_value_heads": 2, "intermediate_size": 512,
           "vocab_size": 1000, "max_position_embeddings": 8192, "sliding_window": 4096}
    (tmp_path / "config.json").write_text(json.dumps(cfg))
    out = llmphys("kv", str(tmp_path), "--tokens", "8192")
    assert out.returncode == 0 and "an upper bound beyond" in " ".join(out.stdout.split())

