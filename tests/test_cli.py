"""The llmphys command line: its exit codes, stdout and stderr.

Most tests run ``cli.main`` in this process with stdout and stderr captured (``llmphys``
below): what a reader sees is what ``main`` prints and returns, and argparse's own exits
(bad flags, ``--help``, ``--version``) are caught as the exit code they carry. Starting a
Python and importing the library for each of 60-odd calls cost about half a minute of CPU.
The tests of what only a separate process shows run ``python -m llmphys`` as a reader's
terminal does: the module entry point, its exit codes and a closed pipe.
"""

import contextlib
import io
import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path
from types import SimpleNamespace

import pytest

from llmphys import accounting, cli, kv_cache, predict, specs

ROOT = Path(__file__).resolve().parents[1]
QWEN = str(ROOT / "data" / "hf_configs" / "Qwen2.5-0.5B")
L40S = str(ROOT / "data" / "examples" / "nvidia_l40s.toml")


@contextlib.contextmanager
def _environ(extra: dict):
    """os.environ with ``extra`` set for the duration (the library reads it at call time)."""
    saved = {k: os.environ.get(k) for k in extra}
    os.environ.update(extra)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def llmphys_env(extra: dict, *args: str) -> SimpleNamespace:
    """``llmphys args...`` run in this process: returncode, stdout and stderr, as a process's.

    COLUMNS is held at 80, the width argparse uses when its output is a pipe, as it was for
    the subprocess these calls replace."""
    out, err = io.StringIO(), io.StringIO()
    with _environ({"COLUMNS": os.environ.get("COLUMNS", "80"), **extra}), \
            contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = cli.main(list(args))
        except SystemExit as e:  # argparse: a usage error (2), --help or --version (0)
            code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    return SimpleNamespace(returncode=code, stdout=out.getvalue(), stderr=err.getvalue())


def llmphys(*args: str) -> SimpleNamespace:
    return llmphys_env({}, *args)


def llmphys_process(*args: str) -> subprocess.CompletedProcess:
    """``python -m llmphys args...`` as a separate process, the way a reader runs it."""
    env = {**os.environ, "PYTHONPATH": str(ROOT / "lib")}
    return subprocess.run([sys.executable, "-m", "llmphys", *args], capture_output=True,
                          text=True, env=env, cwd=ROOT, timeout=120, check=False)


def test_python_m_llmphys_runs_the_command_line_in_its_own_process():
    # the module entry point (__main__.py) exits with main's code: 0, 2 on bad input, 3
    ok = llmphys_process("params", QWEN)
    assert ok.returncode == 0 and "494,032,768" in ok.stdout, ok.stderr
    bad = llmphys_process("params", "llama5")
    assert bad.returncode == 2 and bad.stdout == "" and "llama5" in bad.stderr
    over = llmphys_process("train", "llama3_70b", "h100_sxm", "--chips", "8", "--seq-len",
                           "4096", "--batch-tokens", str(64 * 4096))
    assert over.returncode == 3 and over.stdout == "" and "does not fit" in over.stderr
    assert "Traceback" not in bad.stderr + over.stderr


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



# ------------------------------------------------------------------ train and serve
GEMMA3 = str(ROOT / "data" / "hf_configs" / "gemma-3-12b-it")
LLAMA4 = str(ROOT / "data" / "hf_configs" / "Llama-4-Scout-17B-16E")
TRAIN_8B = ("train", "llama3_8b", "h100_sxm", "--chips", "8", "--seq-len", "4096",
            "--batch-tokens", str(64 * 4096))
SERVE_8B = ("serve", "llama3_8b", "h100_sxm", "--chips", "8", "--input", "1000",
            "--output", "1000")


# Every bad input a new user hit (issue 29), each refused with exit 2 and the flag named.
@pytest.mark.parametrize("args, message", [
    ((*TRAIN_8B, "--tp", "3"), r"--tp 3: the model's 32 query heads and 8 KV heads are not "
                               r"divisible by it; allowed: 1, 2, 4, 8"),
    ((*TRAIN_8B, "--tp", "64"), r"--tp 64: the model's 32 query heads"),
    ((*SERVE_8B, "--tp", "3"), r"--tp 3: the model's"),
    (("serve", "mixtral_8x7b", "h100_sxm", "--chips", "24", "--ep", "3", "--input", "1000",
      "--output", "1000"), r"--ep 3: the model's 8 routed experts are not divisible"),
    (("train", "mixtral_8x7b", "h100_sxm", "--chips", "64", "--ep", "16", "--seq-len", "4096",
      "--batch-tokens", str(64 * 4096)), r"--ep 16: the model's 8 routed experts"),
    (("serve", "llama3_8b", "h100_sxm", "--chips", "1", "--input", "200000", "--output", "1000"),
     r"--input 200,000 \+ --output 1,000 = 201,000 tokens exceed the model's context of 8,192"),
    (("train", "llama3_8b", "h100_sxm", "--chips", "8", "--seq-len", "4096",
      "--batch-tokens", "1000"), r"--batch-tokens=1000 is not a whole number"),
    ((*TRAIN_8B, "--memory-margin", "1.5"), r"--memory-margin: must be a fraction in \[0, 1\)"),
    ((*SERVE_8B, "--acceptance-rate", "2"), r"--acceptance-rate: must be a fraction"),
    ((*TRAIN_8B, "--schedule", "zigzag"), r"invalid choice: 'zigzag'"),
    (("params", "nobody/no-such-model"), r"no config.json in the local Hugging Face cache .* no "
                                         r"network at run time"),
])
def test_layouts_and_inputs_that_cannot_run_exit_2_naming_the_flag(args, message, tmp_path):
    env_cache = {"HF_HUB_CACHE": str(tmp_path)}
    out = llmphys_env(env_cache, *args)
    text = " ".join(out.stderr.split())
    assert out.returncode == 2 and out.stdout == "", out.stderr
    assert __import__("re").search(message, text), out.stderr
    assert "global_batch_tokens" not in text and "Traceback" not in text


def test_exit_0_train_on_a_geglu_config_names_model_chip_and_mfu_convention():
    out = llmphys("train", GEMMA3, "h100_sxm", "--chips", "8", "--tp", "8", "--seq-len", "4096",
                  "--batch-tokens", str(64 * 4096))
    assert out.returncode == 0, out.stderr  # was: "error: geglu", exit 2
    assert "gemma-3-12b-it on NVIDIA H100 SXM5 80GB: 8 chips, tp 8" in out.stdout
    assert "MFU convention: PaLM's count" in out.stdout and "(fits)" in out.stdout
    assert max(len(line) for line in out.stdout.splitlines()) <= 100


def test_exit_3_a_layout_that_does_not_fit_gives_the_bytes_over_and_no_mfu():
    out = llmphys("train", "llama3_70b", "h100_sxm", "--chips", "8", "--seq-len", "4096",
                  "--batch-tokens", str(64 * 4096))
    assert out.returncode == 3 and out.stdout == ""
    assert "does not fit" in out.stderr and "over. To shrink it" in out.stderr
    assert "MFU" not in out.stderr
    r = json.loads(llmphys("train", "llama3_70b", "h100_sxm", "--chips", "8", "--seq-len",
                           "4096", "--batch-tokens", str(64 * 4096), "--json").stdout)
    assert "mfu" not in r and not r["fits"]
    assert r["bytes_over"] == pytest.approx(r["memory_per_chip_bytes"] - r["hbm_bytes"])


def test_a_memory_margin_turns_a_tight_fit_into_exit_3():
    # Llama 3 8B in BF16 is 16.06 GB of weights; with 90% of an H100's 85.5 GB held back
    # only 8.55 GB remain
    assert llmphys(*SERVE_8B[:4], "1", *SERVE_8B[5:]).returncode == 0
    out = llmphys(*SERVE_8B[:4], "1", *SERVE_8B[5:], "--memory-margin", "0.9")
    assert out.returncode == 3 and "the chip offers 8.552 GB" in out.stderr


def test_a_broken_pipe_ends_quietly():
    env = {**os.environ, "PYTHONPATH": str(ROOT / "lib")}
    p = subprocess.Popen([sys.executable, "-m", "llmphys", "chips", "--sources"], cwd=ROOT,
                         env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    p.stdout.close()  # the reader is gone before the first line is written, as with `| head -0`
    err = p.stderr.read().decode()
    assert p.wait(timeout=120) == 0 and "Traceback" not in err and "BrokenPipe" not in err


def test_help_shows_defaults_and_names_the_model_argument():
    out = llmphys("train", "--help").stdout
    assert "MODEL" in out and "the model registry" not in out
    for flag in ("--interleave", "--grad-dtype", "--no-flash-attention", "--memory-margin",
                 "--schedule", "--fsdp-weight-gathers", "--no-sequence-parallel"):
        assert flag in out
    assert "pipeline stages (default: 1)" in " ".join(out.split())
    out = " ".join(llmphys("serve", "--help").stdout.split())
    for flag in ("--draft-tokens", "--acceptance-rate", "--draft-model", "--no-chunked-prefill",
                 "--chunk-tokens", "--math-dtype", "--memory-margin"):
        assert flag in out
    assert "(default: 8192)" in out  # predict.CHUNK_TOKENS


def test_no_sequence_parallel_reaches_the_step_model():
    # Without sequence parallelism every TP rank repeats the norms on the whole sequence: the
    # CLI's step is the library's with sequence_parallel=False, and slower than with it.
    args = ("train", "llama3_70b", "h100_sxm", "--chips", "64", "--tp", "8", "--pp", "2",
            "--seq-len", "8192", "--batch-tokens", str(2**22), "--zero-stage", "1",
            "--recompute", "full", "--json")  # full recomputation: fits without SP too
    on, off = (json.loads(llmphys(*args, *extra).stdout)
               for extra in ((), ("--no-sequence-parallel",)))
    lib = predict.train_step("llama3_70b", "h100_sxm", n_chips=64, tp=8, pp=2, seq_len=8192,
                             global_batch_tokens=2**22, zero_stage=1, recompute="full",
                             check_memory=False,
                             sequence_parallel=False)
    assert off["step_time_s"] == pytest.approx(lib.step_time_s, rel=1e-12)
    assert off["step_time_s"] > on["step_time_s"]


def test_version_prints_the_package_version():
    from llmphys import __version__
    out = llmphys("--version")
    assert out.returncode == 0 and out.stdout.strip() == f"llmphys {__version__}"


def test_one_unit_style_and_one_rounding_of_the_h100s_memory():
    # The H100 SXM's HBM, 85,520,809,984 bytes (data/accelerators.toml), reads 85.521 in every
    # command; rates carry SI prefixes of tokens/s ("92.9 ktokens/s"), never "0.09M tokens/s".
    outs = [llmphys(*a).stdout for a in (("chips",), ("roofline", "h100_sxm"), TRAIN_8B,
                                         SERVE_8B)]
    assert "h100_sxm  NVIDIA H100 SXM5 80GB" in outs[0] and " 85.521 " in outs[0]
    for text in outs[1:]:
        assert "85.521 GB (79.647 GiB)" in text
    for text in outs[2:]:
        assert "ktokens/s" in text and "M tokens/s" not in text


def test_the_hidden_library_options_change_the_prediction():
    base = json.loads(llmphys(*SERVE_8B, "--batch", "64", "--json").stdout)
    spec = json.loads(llmphys(*SERVE_8B, "--batch", "64", "--draft-tokens", "4",
                              "--acceptance-rate", "0.8", "--json").stdout)
    assert spec["tokens_per_step"] > 3 and spec["tpot_s"] < base["tpot_s"]
    whole = json.loads(llmphys(*SERVE_8B, "--batch", "64", "--no-chunked-prefill",
                               "--json").stdout)
    assert whole["tpot_worst_s"] > base["tpot_worst_s"]
    t = json.loads(llmphys(*TRAIN_8B, "--json").stdout)
    fp32 = json.loads(llmphys(*TRAIN_8B, "--grad-dtype", "fp32", "--json").stdout)
    assert fp32["step_time_s"] >= t["step_time_s"]
    assert fp32["layout"]["grad_bytes"] == 4.0 and t["layout"]["grad_bytes"] == 2.0
    pp = ("train", "llama3_8b", "h100_sxm", "--chips", "8", "--pp", "4", "--seq-len", "4096",
          "--batch-tokens", str(32 * 4096))
    inter = json.loads(llmphys(*pp, "--interleave", "2", "--json").stdout)
    plain = json.loads(llmphys(*pp, "--json").stdout)
    assert inter["step_time_s"] < plain["step_time_s"]  # a smaller pipeline bubble


def test_multimodal_configs_and_a_cached_repo_id_are_accepted(tmp_path):
    for cfg in (GEMMA3, LLAMA4):
        out = llmphys("params", cfg)
        assert out.returncode == 0 and "vision tower" in " ".join(out.stdout.split())
    snap = tmp_path / "models--Qwen--Qwen2.5-0.5B" / "snapshots" / "0123abc"
    snap.mkdir(parents=True)
    (snap / "config.json").write_text((Path(QWEN) / "config.json").read_text())
    out = llmphys_env({"HF_HUB_CACHE": str(tmp_path)}, "params", "Qwen/Qwen2.5-0.5B")
    assert out.returncode == 0 and "494,032,768" in out.stdout, out.stderr


# ------------------------------------------------------------------ plan, cost, sweeps
PLAN_70B = ("plan", "train", "llama3_70b", "h100_sxm", "--seq-len", "8192",
            "--batch-tokens", str(4 * 2**20))
PLAN_SERVE = ("plan", "serve", "llama3_70b", "--chip", "h100_sxm", "--input", "2000",
              "--output", "500")
COST_SERVE = ("cost", "serve", "llama3_70b", "h100_sxm", "--chips", "8", "--tp", "8",
              "--input", "2000", "--output", "500", "--weights", "fp8", "--kv", "fp8")


@pytest.mark.parametrize("args, message", [
    ((*PLAN_70B,), r"give exactly one of --chips \(rank layouts\) and --tokens-per-s"),
    ((*PLAN_70B, "--chips", "64", "--tokens-per-s", "1e6"), r"give exactly one of --chips"),
    ((*PLAN_70B, "--chips", "3"), r"no legal layout of llama3_70b on --chips=3"),
    ((*PLAN_70B, "--chips", "64", "--recompute", "some"), r"--recompute: 'some': each must be "
                                                          r"one of none, selective, full"),
    ((*PLAN_70B, "--chips", "64", "--zero-stages", "x"), r"--zero-stages: must be whole numbers"),
    ((*PLAN_70B, "--chips", "64", "--memory-margin", "1"), r"--memory-margin: must be a fraction"),
    ((*PLAN_70B, "--tokens-per-s", "1e9", "--max-chips", "64"),
     r"--tokens-per-s=1e\+09: no chip count up to --max-chips=64 reaches it"),
    ((*PLAN_SERVE,), r"give exactly one of --rate and --tokens-per-s"),
    ((*PLAN_SERVE, "--rate", "100", "--input", "200000"),
     r"--input \+ --output = 200,500 exceed llama3_70b's context of 8,192 tokens"),
    ((*PLAN_SERVE, "--rate", "-1"), r"--rate: must be a number > 0"),
    ((*PLAN_SERVE, "--rate", "100", "--weights", "fp3"), r"--weights: 'fp3': each must be one of"),
    (("plan", "serve", "llama3_70b", "--chip", "tpu_v4", "--rate", "1", "--input", "100",
      "--output", "100"),
     r"--chip='tpu_v4' has no rental price in prices.toml \[gpu_hour_usd\]; priced "
     r"chips: .*h100_sxm"),
    (("cost", "train", "llama3_8b", "h100_sxm", "--chips", "8", "--seq-len", "4096",
      "--batch-tokens", str(64 * 4096)), r"the following arguments are required: --tokens"),
    ((*COST_SERVE, "--tp", "3"), r"--tp 3: the model's 64 query heads"),
    ((*TRAIN_8B, "--sweep", "tp="), r"--sweep '(--)?tp=': write FLAG=V1,V2"),
    ((*TRAIN_8B, "--sweep", "tp=1,x"), r"argument --tp: must be a whole number >= 1, got 'x'"),
])
def test_plan_cost_and_sweep_refuse_bad_input_with_exit_2_naming_the_flag(args, message):
    out = llmphys(*args)
    text = " ".join(out.stderr.split())
    assert out.returncode == 2, (out.returncode, out.stderr)
    assert __import__("re").search(message, text), out.stderr
    assert "Traceback" not in text and "_s=" not in text.replace("--tokens-per-s=", "")


def test_exit_0_plan_train_names_model_chip_layout_and_mfu_convention():
    out = llmphys(*PLAN_70B, "--chips", "64", "--top", "3")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].startswith("Meta Llama 3 70B on 64 x NVIDIA H100 SXM5 80GB:")
    assert "MFU: PaLM's count" in out.stdout and max(len(x) for x in lines) <= 100
    r = json.loads(llmphys(*PLAN_70B, "--chips", "64", "--top", "3", "--json").stdout)
    from llmphys import predict
    best = predict.plan_training("llama3_70b", "h100_sxm", n_chips=64, seq_len=8192,
                                 global_batch_tokens=4 * 2**20)[0]
    assert r["layouts"][0]["step_time_s"] == pytest.approx(best.step_time_s)
    assert r["layouts"][0]["tp"] * r["layouts"][0]["pp"] * r["layouts"][0]["cp"] * \
        r["layouts"][0]["dp"] == 64


def test_exit_3_plan_train_when_no_layout_fits_gives_the_bytes_over():
    out = llmphys("plan", "train", "llama31_405b", "h100_sxm", "--chips", "8", "--seq-len",
                  "8192", "--batch-tokens", str(2**20))
    assert out.returncode == 3 and out.stdout == ""
    assert __import__("re").search(r"needs [\d.]+ GB per chip, [\d.]+ GB over the", out.stderr)


def test_plan_serve_prints_each_price_with_its_date_and_the_latency_caveat():
    out = llmphys(*PLAN_SERVE, "--rate", "100", "--tpot", "0.05", "--top", "3")
    assert out.returncode == 0, out.stderr
    assert "price: h100_sxm $2.95 per chip-hour (prices.toml gpu_hour_usd.h100_sxm, as of " \
           "2026-05-20)" in out.stdout
    assert "TPOT p90" in out.stdout and "scheduler simulation" in " ".join(out.stdout.split())
    assert max(len(x) for x in out.stdout.splitlines()) <= 100


def test_cost_serve_and_train_show_the_dollars_and_the_dated_price():
    out = llmphys(*COST_SERVE)
    assert out.returncode == 0, out.stderr
    assert "per million tokens" in out.stdout and "as of 2026-05-20" in out.stdout
    r = json.loads(llmphys(*COST_SERVE, "--json").stdout)
    assert r["cost"]["usd_per_hour"] == pytest.approx(8 * 2.95)
    assert r["cost"]["usd_per_m_output_tokens"] == pytest.approx(
        8 * 2.95 / 3600 / r["output_tokens_per_s"] * 1e6)
    out = llmphys("cost", "train", "llama3_8b", "h100_sxm", "--chips", "8", "--seq-len", "4096",
                  "--batch-tokens", str(64 * 4096), "--tokens", "1e12", "--json")
    r = json.loads(out.stdout)
    assert r["cost"]["chip_hours"] == pytest.approx(8 * 1e12 / r["tokens_per_s"] / 3600)


def test_a_sweep_prints_one_csv_row_per_value_and_keeps_layouts_that_do_not_fit():
    out = llmphys("train", "llama3_70b", "h100_sxm", "--chips", "8", "--seq-len", "4096",
                  "--batch-tokens", str(64 * 4096), "--sweep", "tp=1,8", "--csv")
    assert out.returncode == 0, out.stderr
    import csv
    import io
    rows = list(csv.DictReader(io.StringIO(out.stdout)))
    assert [r["sweep_value"] for r in rows] == ["1", "8"]
    assert [r["layout.tp"] for r in rows] == ["1", "8"]
    assert rows[0]["fits"] == "False" and float(rows[0]["bytes_over"]) > 0
    out = llmphys(*PLAN_70B, "--chips", "64", "--top", "4", "--csv")
    assert len(out.stdout.splitlines()) == 5 and out.stdout.startswith("rank,tp,pp,cp")


# ------------------------------------------------ issue 29: every train_step option a flag
DSV3_CROSS_NODE = ("train", "deepseek_v3", "h100_sxm", "--chips", "2048", "--ep", "64", "--pp",
                   "16", "--seq-len", "4096", "--batch-tokens", str(2**24), "--zero-stage", "1",
                   "--recompute", "full")  # EP 64 spans 8 NVLink domains of 8 H100s


def _train_json(*args: str) -> dict:
    out = llmphys(*args, "--json")
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_every_train_step_and_plan_training_keyword_has_a_flag():
    import inspect
    # Not flags: the model and chip are positional; the CLI always times the layout and says
    # whether it fits (check_memory); efficiencies are the fitted constants, not an option.
    positional = {"model", "accelerator", "check_memory", "efficiencies"}
    negated = {"sequence_parallel": "--no-sequence-parallel",
               "flash_attention": "--no-flash-attention"}
    train_help = llmphys("train", "--help").stdout
    for name in inspect.signature(predict.train_step).parameters:
        if name in positional:
            continue
        flag = {**cli.TRAIN_FLAGS, **negated}.get(name, f"--{name}")  # tp, pp, cp, ep
        assert flag in train_help, name
    plan_help = llmphys("plan", "train", "--help").stdout
    for name in inspect.signature(predict.plan_training).parameters:
        if name in positional:
            continue
        flag = {**cli.TRAIN_FLAGS, **cli.PLAN_FLAGS, **negated}.get(name, f"--{name}")
        assert flag.replace("_", "-") in plan_help, name  # memory_margin, top


def test_moe_dispatcher_deepep_shrinks_a_cross_node_all_to_all_to_the_librarys_value():
    nccl = _train_json(*DSV3_CROSS_NODE)
    deepep = _train_json(*DSV3_CROSS_NODE, "--moe-dispatcher", "deepep")
    lib = predict.train_step("deepseek_v3", "h100_sxm", n_chips=2048, ep=64, pp=16,
                             seq_len=4096, global_batch_tokens=2**24, zero_stage=1,
                             recompute="full", moe_dispatcher="deepep", check_memory=False)
    # the same arithmetic in process and in the subprocess: equal to rounding
    assert deepep["step_time_s"] == pytest.approx(lib.step_time_s, rel=1e-12)
    assert deepep["parts_s"]["ep_all_to_all"] < nccl["parts_s"]["ep_all_to_all"]
    assert deepep["parts_s"]["gemm"] == nccl["parts_s"]["gemm"]  # only the dispatch changes
    assert deepep["layout"]["moe_dispatcher"] == "deepep"
    assert "deepep dispatch" in llmphys(*DSV3_CROSS_NODE, "--moe-dispatcher", "deepep").stdout


def test_no_fused_elementwise_slows_the_step_through_its_memory_bound_term():
    fused = _train_json(*TRAIN_8B)
    eager = _train_json(*TRAIN_8B, "--no-fused-elementwise")
    lib = predict.train_step("llama3_8b", "h100_sxm", n_chips=8, seq_len=4096,
                             global_batch_tokens=64 * 4096, fused_elementwise=False,
                             check_memory=False)
    assert eager["step_time_s"] == pytest.approx(lib.step_time_s, rel=1e-12)
    assert eager["parts_s"]["memory_bound"] > fused["parts_s"]["memory_bound"]
    assert eager["step_time_s"] > fused["step_time_s"] and eager["mfu"] < fused["mfu"]
    assert _train_json(*TRAIN_8B, "--fused-elementwise") == fused  # the default, spelled out


def test_selective_policy_op_recomputes_matmuls_the_attention_policy_does_not():
    sel = (*TRAIN_8B, "--recompute", "selective")
    megatron = _train_json(*sel)
    op = _train_json(*sel, "--selective-policy", "op")
    lib = predict.train_step("llama3_8b", "h100_sxm", n_chips=8, seq_len=4096,
                             global_batch_tokens=64 * 4096, recompute="selective",
                             selective_policy="op", check_memory=False)
    assert op["step_time_s"] == pytest.approx(lib.step_time_s, rel=1e-12)
    # torchtitan's op policy runs wk, wo and w3 again: more GEMM time, and its HFU counts
    # FLOP its MFU does not; Megatron's recomputes only the attention core, which a flash
    # kernel recomputes anyway, so its HFU is its MFU
    assert op["parts_s"]["gemm"] > megatron["parts_s"]["gemm"]
    assert op["step_time_s"] > megatron["step_time_s"] and op["mfu"] < megatron["mfu"]
    assert op["hfu"] > op["mfu"] and megatron["hfu"] == megatron["mfu"]
    layer = _train_json(*sel, "--selective-policy", "layer")
    assert layer["step_time_s"] > megatron["step_time_s"]  # every other layer run again


def test_fp8_recipe_tensorwise_reads_each_cast_input_once_more():
    fp8 = (*TRAIN_8B, "--dtype", "fp8", "--zero-stage", "3")  # FP8 copies: ZeRO 3 to fit
    delayed = _train_json(*fp8)
    current = _train_json(*fp8, "--fp8-recipe", "tensorwise")
    # current scaling: 6 bytes per cast element against delayed scaling's 4 (elementwise.py)
    assert current["parts_s"]["memory_bound"] > delayed["parts_s"]["memory_bound"]
    assert current["parts_s"]["gemm"] == delayed["parts_s"]["gemm"]


def test_attention_flops_full_raises_the_mfu_not_the_step_and_says_so():
    causal = _train_json(*TRAIN_8B)
    full = _train_json(*TRAIN_8B, "--attention-flops", "full")
    assert full["step_time_s"] == causal["step_time_s"]
    m = specs.model("llama3_8b")
    attn = 6.0 * m.n_layers * m.n_heads * m.d_head * 4096  # 6 L H Q T per token
    n = accounting.n_active_params(m)
    # the MFUs stand in the ratio of the two FLOP counts: PaLM's 6N + 12LHQT to 6N + 6LHQT
    assert full["mfu"] / causal["mfu"] == pytest.approx((6 * n + 2 * attn) / (6 * n + attn),
                                                        rel=1e-12)
    assert "12 L H Q T" in full["mfu_convention"] and "6 L H Q T" in causal["mfu_convention"]


@pytest.mark.parametrize("flag, value, allowed", [
    ("--moe-dispatcher", "nccl", "'alltoall', 'deepep'"),
    ("--selective-policy", "block", "'attention', 'op', 'layer'"),
    ("--fp8-recipe", "e4m3", "'delayed', 'tensorwise', 'blockwise', 'mxfp8'"),
    ("--attention-flops", "half", "'causal', 'full'"),
    ("--fused-elementwise", "no", "unrecognized arguments: no"),
])
def test_a_bad_value_of_a_new_train_flag_exits_2_naming_the_flag_and_the_choices(
        flag, value, allowed):
    out = llmphys(*TRAIN_8B, flag, value)
    assert out.returncode == 2 and out.stdout == ""
    assert allowed in out.stderr and "Traceback" not in out.stderr
    if flag != "--fused-elementwise":  # a switch takes no value: argparse names the stray word
        assert f"argument {flag}: invalid choice: '{value}'" in out.stderr


def test_plan_train_takes_the_step_options_and_passes_them_to_the_planner():
    best = {extra: json.loads(llmphys(*PLAN_70B, "--chips", "64", "--top", "1", *extra,
                                      "--json").stdout)["layouts"][0]
            for extra in ((), ("--no-fused-elementwise",))}
    lib = predict.plan_training("llama3_70b", "h100_sxm", n_chips=64, seq_len=8192,
                                global_batch_tokens=4 * 2**20, fused_elementwise=False, top=1)
    eager = best[("--no-fused-elementwise",)]
    assert eager["step_time_s"] == pytest.approx(lib[0].step_time_s, rel=1e-12)
    assert eager["step_time_s"] > best[()]["step_time_s"]
    out = llmphys(*PLAN_70B, "--chips", "64", "--moe-dispatcher", "nccl")
    assert out.returncode == 2 and "'alltoall', 'deepep'" in out.stderr
    assert "Traceback" not in out.stderr
