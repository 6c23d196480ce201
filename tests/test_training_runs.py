"""Schema and provenance of data/training_runs.toml, the runs the step-time model predicts."""

import re
from pathlib import Path

import pytest

from llmphys import accounting, predict, specs

RUNS = predict.training_runs()
BIB = (Path(__file__).resolve().parents[1] / "chapters" / "references.bib").read_text()


def test_at_least_twelve_runs_on_three_generations_and_two_vendors():
    accs = [predict.accelerator_spec(k) for k in {r.accelerator for r in RUNS.values()}]
    assert len(RUNS) >= 12
    assert len({a.key for a in accs}) >= 3 and len({a.vendor for a in accs}) >= 2


@pytest.mark.parametrize("key", RUNS)
def test_run_layout_is_consistent(key):
    r = RUNS[key]
    assert r.n_chips == r.tp * r.pp * r.cp * r.dp, "n_chips must equal tp*pp*cp*dp"
    assert r.global_batch_tokens % r.seq_len == 0
    assert (r.global_batch_tokens // r.seq_len) % (r.dp * r.micro_batch_size) == 0
    assert (r.interleave > 1) == (r.schedule == "interleaved")
    assert r.measured_value > 0 and (r.measured_unit != "mfu" or r.measured_value < 1)
    assert re.search(r"arXiv:\d{4}\.\d{4,5}|https://github\.com/", r.source), (
        "source needs its arXiv id or its repository's address"
    )
    assert r.table and r.notes and r.source_group


@pytest.mark.parametrize("key", RUNS)
def test_every_source_is_in_the_bibliography(key):
    for arxiv in re.findall(r"arXiv:(\d{4}\.\d{4,5})", RUNS[key].source):
        assert f"eprint        = {{{arxiv}}}" in BIB, arxiv


@pytest.mark.parametrize("key", sorted({r.model for r in RUNS.values()}))
def test_models_of_the_runs_recount_to_their_published_size(key):
    # Published counts are rounded to the last printed digit (0.1B or 1B): 0.5%.
    m = specs.model_spec(key)
    # MaxText's benchmark models are named by scale (16b.sh ...): 3%.
    rel = 0.03 if key.startswith("maxtext_") else 0.005
    assert accounting.n_params(m) == pytest.approx(m.published_n_params, rel=rel)


@pytest.mark.parametrize("scale", [16, 32, 64, 128, 256, 512, 1024])
def test_maxtext_shapes_follow_the_scale_rule_at_the_tables_commit(scale):
    # AI-Hypercomputer/maxtext at 76bd53b0f (the table's commit): pyconfig.get_individual_scales
    # splits log2(scale) = 3 b + r into 2^(b + [r>0]) x heads and MLP width, 2^(b + [r>1]) x
    # d_model, 2^b x layers, on base.yml's 8 heads of 256, MLP 8,192, d 2,560, 16 layers;
    # vocabulary 32,768, tied (logits_via_embedding), ReLU ("gelu" here), one norm, parallel.
    m = specs.model_spec(f"maxtext_{scale}b")
    b, r = divmod(scale.bit_length() - 1, 3)
    assert (m.n_heads, m.d_ff, m.d_model, m.n_layers) == (
        8 * 2 ** (b + (r > 0)), 8192 * 2 ** (b + (r > 0)), 2560 * 2 ** (b + (r > 1)), 16 * 2**b)
    assert (m.d_head, m.n_kv_heads, m.vocab_size) == (256, m.n_heads, 32768)
    assert m.tied_embeddings
    assert (m.mlp, m.n_norms_per_layer, m.parallel_block) == ("gelu", 1, True)


def test_loader_names_the_entry_and_field(tmp_path, monkeypatch):
    src = Path(specs.data_dir())
    for name in ("accelerators.toml", "models.toml", "run_models.toml"):
        (tmp_path / name).write_bytes((src / name).read_bytes())
    text = (src / "training_runs.toml").read_text().replace(
        'flop_count = "palm"\n', 'flop_count = "palm"\nmystery = 1\n', 1)
    (tmp_path / "training_runs.toml").write_text(text)
    monkeypatch.setenv(specs.DATA_ENV_VAR, str(tmp_path))
    predict.training_runs.cache_clear()
    try:
        with pytest.raises(ValueError, match=r"training_runs.toml\[palm_540b\]: unknown field"):
            predict.training_runs()
    finally:
        predict.training_runs.cache_clear()


def test_the_registry_covers_the_cases_issue_27_asks_for():
    runs = list(RUNS.values())
    size = {k: accounting.n_params(specs.model_spec(k)) for k in {r.model for r in runs}}
    assert len(runs) >= 40 and len({r.source_group for r in runs}) >= 8
    assert sum(size[r.model] <= 13.5e9 for r in runs) >= 10
    assert sum(r.dtype == "fp8" for r in runs) >= 8
    assert len({r.accelerator for r in runs} - {"a100_sxm", "h100_sxm"}) >= 3
    assert sum(r.ep > 1 for r in runs) >= 3
    assert sum(r.seq_len >= 32768 for r in runs) >= 3


def test_run_models_do_not_shadow_the_model_registry():
    assert not set(specs.run_models()) & set(specs.models())
    assert specs.model_spec("llama31_405b") is specs.model("llama31_405b")
    with pytest.raises(KeyError, match="unknown model 'gpt5'"):
        specs.model_spec("gpt5")


@pytest.mark.parametrize("key", sorted(specs.run_models()))
def test_run_model_is_self_consistent(key):
    # the same invariants tests/test_data.py asks of models.toml
    m = specs.run_models()[key]
    assert m.n_heads % m.n_kv_heads == 0 and len(m.source) > 20
    assert (m.published_n_active_params == m.published_n_params) == (m.moe is None)
    assert {
        "mha": m.n_kv_heads == m.n_heads,
        "mqa": m.n_kv_heads == 1,
        "gqa": 1 < m.n_kv_heads < m.n_heads,
    }[m.attention]
