"""Decode and prefill on the roofline: closed forms against the step model, and limits."""

import math

import numpy as np
import pytest

from llmphys import accounting, inference, kv_cache, roofline, specs

LLAMA = specs.model("llama3_70b")
DSV3 = specs.model("deepseek_v3")


def test_balance_batch_of_a_dense_bf16_model_is_exactly_the_ridge_point(h100):
    # B* = (P/W) (b/2) (N_read / N_multiplied); for a dense model both N are the
    # non-embedding weights and b = 2, so B* = P/W: an identity, hence 1e-12.
    assert inference.balance_batch(LLAMA, h100) == pytest.approx(roofline.ridge_point(h100),
                                                                 rel=1e-12)


def test_fp8_weights_with_fp8_math_leave_the_balance_batch_unchanged(h100):
    # Half the bytes, twice the peak: the factors cancel. 1e-4: the whitepaper rounds the
    # FP8 and BF16 peaks separately (1978.9 vs 2 x 989.4 differ by 5e-5).
    assert inference.balance_batch(LLAMA, h100, weight_dtype="fp8") == pytest.approx(
        inference.balance_batch(LLAMA, h100), rel=1e-4)


@pytest.mark.parametrize("key", ["h100_sxm", "h200", "b200"])
@pytest.mark.parametrize("model,dtype,context", [(LLAMA, "bf16", 0), (LLAMA, "bf16", 1000),
                                                  (DSV3, "fp8", 0), (DSV3, "fp8", 2000)])
def test_memory_and_compute_times_are_equal_at_the_balance_batch(key, model, dtype, context):
    # Independent check of the closed form: evaluate the step model at B*. For the MoE the
    # closed form assumes every expert is read; at B* > 4000 tokens x 8 of 256 experts the
    # untouched share is (1 - 8/256)^4000 ~ 1e-55, so equality holds to rounding.
    acc = specs.accelerator(key)
    b = inference.balance_batch(model, acc, context_tokens=context, weight_dtype=dtype)
    s = inference.decode_step(model, acc, batch_size=b, context_tokens=context, n_chips=8,
                              weight_dtype=dtype)
    assert s["memory_time_s"] == pytest.approx(s["compute_time_s"], rel=1e-9)


def test_balance_batch_is_infinite_beyond_the_balanced_context(h100):
    t_bal = inference.balanced_context_tokens(LLAMA, h100)
    assert 1000 < t_bal < 2000  # 2 x 69.5e9 / (327,680 B x 295 FLOP/B - 2.6e6) ~ 1476
    assert math.isfinite(inference.balance_batch(LLAMA, h100, context_tokens=int(t_bal) - 1))
    assert inference.balance_batch(LLAMA, h100, context_tokens=int(t_bal) + 1) == math.inf


def test_balance_batch_does_not_depend_on_the_number_of_chips(h100):
    # Both times divide by n; check through the step model rather than the closed form.
    for n in (8, 64):
        s = inference.decode_step(LLAMA, h100, batch_size=inference.balance_batch(LLAMA, h100),
                                  context_tokens=0, n_chips=n)
        assert s["memory_time_s"] == pytest.approx(s["compute_time_s"], rel=1e-9)


def test_batch_one_costs_the_balance_batch_times_more_per_token_than_the_compute_bound_limit(h100):
    # At T = 0: cost(1)/cost(B >> B*) = (N b / W) / (2 N / P) = B*. Exact for a dense model.
    kw = dict(context_tokens=0, n_chips=8, usd_per_chip_hour=2.0)
    ratio = inference.cost_per_token_usd(LLAMA, h100, batch_size=1, **kw) / \
        inference.cost_per_token_usd(LLAMA, h100, batch_size=1e6, **kw)
    assert ratio == pytest.approx(inference.balance_batch(LLAMA, h100), rel=1e-9)


def test_experts_touched_matches_a_monte_carlo_of_top_k_routing(rng):
    # Each token picks 8 distinct experts of 256 uniformly (top-8 of random scores). Over 300
    # trials the standard error of the mean count is < 0.4 expert; 2 experts is > 5 errors.
    trials = 300
    for batch in (1, 4, 16, 64):
        picks = np.argpartition(rng.random((trials, batch, 256)), 8, axis=-1)[..., :8]
        used = np.zeros((trials, 256), dtype=bool)
        used[np.arange(trials)[:, None], picks.reshape(trials, -1)] = True
        assert used.sum(axis=1).mean() == pytest.approx(
            inference.experts_touched(DSV3, batch_size=batch), abs=2.0)


def test_experts_touched_runs_from_top_k_to_all_experts():
    assert inference.experts_touched(DSV3, batch_size=1) == pytest.approx(8.0, rel=1e-12)
    assert inference.experts_touched(DSV3, batch_size=1e5) == pytest.approx(256.0, rel=1e-12)


def test_deepseek_v3_reads_its_published_active_weights_at_batch_one():
    # README_WEIGHTS of deepseek-ai/DeepSeek-V3: 36.6B activated parameters including the
    # 0.9B output head (embedding look-up excluded), i.e. what a batch-1 step reads.
    n = inference.weight_bytes_read(DSV3, batch_size=1, weight_bytes_per_param=1.0)
    assert n == pytest.approx(36.6e9, rel=0.01)  # 1%: the README rounds to 0.1B
    full = inference.weight_bytes_read(DSV3, batch_size=1e6, weight_bytes_per_param=1.0)
    assert full == pytest.approx(accounting.n_params(DSV3) - accounting.embedding_params(DSV3),
                                 rel=1e-9)


def test_mla_absorbed_attention_flop_per_cached_token_sits_near_the_h100_ridge(h100):
    # 2 L h (2 x 512 + 64) FLOP per 61 x 576 x 2 bytes: intensity 242 FLOP/byte, while
    # GQA's Llama 3 70B reads 327,680 B for 2.6 MFLOP, intensity 8 (= its group size).
    mla = kv_cache.decode_attention_flop_per_context_token(DSV3) / kv_cache.kv_bytes_per_token(DSV3)
    gqa = (kv_cache.decode_attention_flop_per_context_token(LLAMA)
           / kv_cache.kv_bytes_per_token(LLAMA))
    assert mla == pytest.approx(241.8, rel=1e-3) and gqa == pytest.approx(8.0, rel=1e-12)


def test_max_batch_by_memory_is_the_last_batch_that_fits(h100):
    for t in (1024, 8192, 32768):
        b = inference.max_batch_by_memory(LLAMA, h100, context_tokens=t, n_chips=8)

        def used(batch, t=t):
            return (inference.weight_bytes_stored(LLAMA)
                    + kv_cache.kv_cache_bytes(LLAMA, n_tokens=t, batch_size=batch))

        assert used(b) <= 8 * h100.hbm_bytes < used(b + 1)


def test_min_chips_fits_the_weights_in_whole_scale_up_domains(h100):
    n = inference.min_chips(DSV3, h100, weight_dtype="fp8")
    assert n % h100.scale_up_domain_size == 0
    assert inference.weight_bytes_stored(DSV3, weight_dtype="fp8") <= 0.6 * n * h100.hbm_bytes
    assert n == 16  # 671 GB of FP8 weights need 2 HGX H100 boxes at 60% fill


def test_hbm_drain_time_of_h100_is_about_25_ms(h100):
    # Usable HBM as nvidia-smi reports it (81,559 MiB, NVIDIA/nccl#1264) over the datasheet's
    # 3.35 TB/s; the decimal reading of "80GB" would give 23.9 ms.
    assert inference.hbm_drain_time_s(h100) == pytest.approx(81_559 * 2**20 / 3.35e12, rel=1e-12)


def test_prefill_is_compute_bound_only_for_prompts_longer_than_the_ridge(h100):
    # Intensity ~ S FLOP/byte for BF16 dense: a 64-token prompt is memory-bound, 4096 is not.
    short = inference.prefill(LLAMA, h100, prompt_tokens=64, n_chips=8)
    long = inference.prefill(LLAMA, h100, prompt_tokens=4096, n_chips=8)
    assert short["memory_time_s"] > short["compute_time_s"]
    assert long["compute_time_s"] > long["memory_time_s"]
    assert 60 < short["intensity_flop_per_byte"] < 68


def test_moe_prefill_needs_thousands_of_tokens_to_become_compute_bound(h100):
    # DeepSeek-V3 in FP8 on H100: balance ~ ridge_fp8 x (1/2) x sparsity ~ 5,400 tokens.
    a = inference.prefill(DSV3, h100, prompt_tokens=2048, n_chips=16, weight_dtype="fp8")
    b = inference.prefill(DSV3, h100, prompt_tokens=2048, n_prompts=8, n_chips=16,
                          weight_dtype="fp8")
    assert a["memory_time_s"] > a["compute_time_s"] and b["compute_time_s"] > b["memory_time_s"]


def test_pinned_llama_batch_one_step_on_eight_h100():
    # Regression: 69.5e9 non-embedding weights x 2 bytes / (8 x 3.35 TB/s) = 5.19 ms.
    s = inference.decode_step(LLAMA, specs.accelerator("h100_sxm"), batch_size=1,
                              context_tokens=0, n_chips=8)
    assert s["step_time_s"] == pytest.approx(5.19e-3, abs=0.005e-3)


def test_decode_step_accepts_an_array_of_batches(h100):
    b = np.array([1, 10, 100])
    s = inference.decode_step(LLAMA, h100, batch_size=b, context_tokens=100, n_chips=8)
    assert s["step_time_s"].shape == (3,) and np.all(np.diff(s["step_time_s"]) > 0)


def test_bad_arguments_are_named(h100):
    with pytest.raises(ValueError, match="batch_size"):
        inference.decode_step(LLAMA, h100, batch_size=0, context_tokens=0, n_chips=8)
    with pytest.raises(ValueError, match="context_tokens"):
        inference.decode_step(LLAMA, h100, batch_size=1, context_tokens=-1, n_chips=8)
    with pytest.raises(ValueError, match="fp4"):
        inference.decode_step(LLAMA, h100, batch_size=1, context_tokens=0, n_chips=8,
                              weight_dtype="fp4")
    with pytest.raises(ValueError, match="dense"):
        inference.experts_touched(LLAMA, batch_size=4)
    with pytest.raises(ValueError, match="headroom"):
        inference.min_chips(LLAMA, h100, headroom=1.0)


def test_moe_decode_reads_active_weights_at_batch_one_and_all_of_them_at_large_batch():
    # moved from test_kv_cache: inference.weight_bytes_read is the one count of streamed weights
    m = specs.model("deepseek_v3")
    streamed = accounting.n_params(m) - accounting.embedding_params(m)
    one = inference.weight_bytes_read(m, batch_size=1)
    assert one == pytest.approx(
        2 * (accounting.n_active_params(m) - accounting.embedding_params(m)))
    assert inference.weight_bytes_read(m, batch_size=4096) == pytest.approx(2 * streamed, rel=1e-3)


def test_decode_ceiling_and_decode_step_count_the_same_flop_and_bytes_for_every_model(h100):
    # One decode model: the one-chip ceiling is B / decode_step's step time, to the last bit,
    # for every registry model (DeepSeek-V3's MLA included), memory- and compute-bound batches,
    # and its FLOP are B x decode_flop_per_token (relative 1e-15: one rounding per operation).
    for m in specs.models().values():
        for batch, ctx in ((1, 4096), (256, 1024), (16384, 8192)):
            step = inference.decode_step(m, h100, batch_size=batch, context_tokens=ctx, n_chips=1)
            rate = inference.decode_tokens_per_s(m, h100, context_tokens=ctx, batch_size=batch)
            assert rate == pytest.approx(batch / step["step_time_s"], rel=1e-15), m.key
            per_token = inference.decode_flop_per_token(m, context_tokens=ctx)
            assert step["flop"] == pytest.approx(batch * per_token, rel=1e-15), m.key
            cache_only = inference.decode_tokens_per_s(
                m, h100, context_tokens=ctx, batch_size=batch, include_weights=False)
            t = max(step["kv_bytes"] / h100.hbm_bytes_per_s, step["compute_time_s"])
            assert cache_only == pytest.approx(batch / t, rel=1e-15), m.key


@pytest.mark.parametrize("key,ctx,attention_per_position", [
    ("deepseek_v3", 4096, 2 * 61 * 128 * (2 * 512 + 64)),  # MLA absorbed: 2 L h (2 r + r_R)
    ("llama3_70b", 1024, 2 * 80 * 64 * (128 + 128)),       # GQA: 2 L h (d_k + d_v)
])
def test_compute_bound_decode_ceiling_is_the_peak_over_the_closed_form_flop(
        h100, key, ctx, attention_per_position):
    # Closed form: f + a T with f = 2 x (active weights multiplied, head included, embedding
    # look-up excluded) and a as above (DeepSeek-V2 sec. 2.1.3 for the absorbed form). At
    # B = 16384 every expert is read and, below each model's balanced context (1,476 tokens for
    # Llama 3 70B on H100), the step is compute-bound, so tokens/s = P / (f + a T).
    m, batch = specs.model(key), 16384
    f = 2.0 * (accounting.n_active_params(m) - accounting.embedding_params(m))
    closed = f + ctx * attention_per_position
    assert inference.decode_flop_per_token(m, context_tokens=ctx) == pytest.approx(closed,
                                                                                   rel=1e-15)
    step = inference.decode_step(m, h100, batch_size=batch, context_tokens=ctx, n_chips=1)
    assert step["compute_time_s"] > step["memory_time_s"]
    rate = inference.decode_tokens_per_s(m, h100, context_tokens=ctx, batch_size=batch)
    assert rate == pytest.approx(h100.peak_flop_per_s("bf16") / closed, rel=1e-12)


def test_kv_cache_ceiling_counts_the_weights_inference_counts():
    # one formula: the decode ceiling's weight bytes are inference.weight_bytes_read's
    m, h100 = specs.model("deepseek_v3"), specs.accelerator("h100_sxm")
    with_w = inference.decode_tokens_per_s(m, h100, context_tokens=1024, batch_size=64)
    q = (kv_cache.kv_cache_bytes(m, n_tokens=1024, batch_size=64)
         + inference.weight_bytes_read(m, batch_size=64))
    assert with_w <= 64 / (q / h100.hbm_bytes_per_s) * (1 + 1e-12)


def _llama70(variant):
    return kv_cache.with_attention(specs.model("llama3_70b"), variant)


def test_series_ceilings_need_h100_bandwidth_and_no_weights(h100):
    # 3.35e12 B/s / 335.5e9 B = 9.98 tokens/s; / 41.9e9 B = 79.9 tokens/s (both within 0.3%).
    kw = dict(context_tokens=128_000, include_weights=False)
    assert inference.decode_tokens_per_s(_llama70("mha"), h100, **kw) == pytest.approx(10, rel=3e-3)
    assert inference.decode_tokens_per_s(_llama70("gqa"), h100, **kw) == pytest.approx(80, rel=3e-3)
    with_weights = inference.decode_tokens_per_s(_llama70("gqa"), h100, context_tokens=128_000)
    assert with_weights < 20  # 141 GB of BF16 weights join the 42 GB cache


def test_batching_raises_the_ceiling_until_the_cache_dominates(h100):
    m = specs.model("llama3_8b")
    rates = [inference.decode_tokens_per_s(m, h100, context_tokens=4096, batch_size=b)
             for b in (1, 8, 64)]
    assert rates[0] < rates[1] < rates[2] < 64 * rates[0]


def test_a_tied_table_is_streamed_once_as_the_output_head():
    # Gopher ties its input embedding to the output head: the lookup reads one row, but the head
    # multiplies by the whole vocab x d table every step, so the streamed count keeps it once
    m = specs.model("gopher_280b")
    assert m.tied_embeddings
    r = inference.streamed_params(m, batch_size=1)
    assert r["dense"] == accounting.n_params(m) - accounting.embedding_params(m) \
        + m.vocab_size * m.d_model
    assert r["experts"] == 0.0


def test_streamed_experts_are_the_touched_experts_of_every_moe_layer():
    # DeepSeek-V3: 58 MoE layers; batch 1 touches k = 8 experts a layer, a huge batch all 256
    m = specs.model("deepseek_v3")
    one = accounting.mlp_params(m, m.moe.d_ff_expert)
    assert inference.streamed_params(m, batch_size=1)["experts"] == pytest.approx(58 * 8 * one)
    assert inference.streamed_params(m, batch_size=1e6)["experts"] == pytest.approx(58 * 256 * one)
