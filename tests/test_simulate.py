"""The continuous-batching simulator (llmphys.predict.simulate) against the steady state,
Little's law, its limits, and its speed."""

import importlib
import time

import numpy as np
import pytest

from llmphys import predict

M = importlib.import_module("llmphys.predict.simulate")  # the module
FIXED = predict.LengthDistribution


def _run(rate, n=2000, seed=0, **kw):
    args = dict(n_chips=8, tp=8, n_requests=n, weight_dtype="fp8", kv_dtype="fp8",
                input_tokens=FIXED(mean=1000), output_tokens=FIXED(mean=200),
                arrival_rate_per_s=rate, rng=np.random.default_rng(seed))
    args.update(kw)
    return predict.simulate_serving("llama3_70b", "h100_sxm", **args)


def test_the_simulator_agrees_with_serve_in_the_steady_state():
    # a closed loop of 64 clients with 8-token prompts: every step decodes the same 64
    # sequences, which is serve's steady state at batch 64 (the prompt share is 1 token a step)
    kw = dict(n_chips=8, tp=8, weight_dtype="fp8", kv_dtype="fp8")
    sim = predict.simulate_serving("llama3_70b", "h100_sxm", n_requests=640, concurrency=64,
                                   input_tokens=FIXED(mean=8), output_tokens=FIXED(mean=500),
                                   rng=np.random.default_rng(0), **kw)
    s = predict.serve("llama3_70b", "h100_sxm", batch_size=64, input_tokens=8,
                      output_tokens=500, **kw)
    print(f"\nsimulated TPOT {np.mean(sim.tpot_s) * 1e3:.3f} ms, serve {s.tpot_s * 1e3:.3f} ms; "
          f"throughput {sim.output_tokens_per_s:,.0f} against {s.output_tokens_per_s:,.0f}")
    # 2%: one step in 500 carries the next 64 prompts at once instead of one token of each
    assert np.mean(sim.tpot_s) == pytest.approx(s.tpot_s, rel=0.02)
    assert sim.output_tokens_per_s == pytest.approx(s.output_tokens_per_s, rel=0.02)


def test_uneven_prompt_chunks_make_the_mean_tpot_exceed_the_even_steady_state():
    # Poisson arrivals: some steps carry a whole 1,000-token prompt, others none. A step is the
    # larger of its byte and FLOP times, a convex function of its tokens, so the mean over
    # uneven steps exceeds serve's even spread at the same mean batch (by ~10% here).
    sim = _run(20.0)
    s = predict.serve("llama3_70b", "h100_sxm", n_chips=8, tp=8,
                      batch_size=round(sim.mean_batch), input_tokens=1000, output_tokens=200,
                      weight_dtype="fp8", kv_dtype="fp8")
    assert s.tpot_s < np.mean(sim.tpot_s) < 1.2 * s.tpot_s
    # Little's law: in the steady state every arriving request's tokens come out
    assert sim.output_tokens_per_s == pytest.approx(20.0 * 200, rel=0.05)


def test_a_run_is_deterministic_for_a_seed():
    a, b, c = _run(30.0, n=300), _run(30.0, n=300), _run(30.0, n=300, seed=1)
    assert np.array_equal(a.ttft_s, b.ttft_s) and np.array_equal(a.tpot_s, b.tpot_s)
    assert not np.array_equal(a.ttft_s, c.ttft_s)


def test_past_capacity_the_queue_grows_and_ttft_with_it():
    # the knee: above the service rate, requests wait in the queue and TTFT grows with the run
    cap = predict.serve("llama3_70b", "h100_sxm", n_chips=8, tp=8, batch_size=None,
                        input_tokens=1000, output_tokens=200, weight_dtype="fp8",
                        kv_dtype="fp8").output_tokens_per_s / 200  # requests/s at max batch
    low, high = _run(0.3 * cap, n=1500), _run(1.5 * cap, n=1500)
    assert high.percentile("ttft_s", 90) > 20 * low.percentile("ttft_s", 90)
    assert high.output_tokens_per_s < 1.5 * cap * 200  # it cannot serve the offered load
    assert high.output_tokens_per_s == pytest.approx(cap * 200, rel=0.25)


def test_a_full_cache_preempts_and_every_request_still_finishes():
    # Llama 3 70B in FP8 on one H100 leaves about 14 GB of cache: 40 sequences growing to
    # 6,000 tokens do not fit, so the newest are preempted and recomputed
    sim = predict.simulate_serving(
        "llama3_70b", "h100_sxm", n_chips=1, n_requests=80, weight_dtype="fp8", kv_dtype="fp8",
        input_tokens=FIXED(mean=2000), output_tokens=FIXED(mean=4000),
        rng=np.random.default_rng(0))
    assert sim.n_preemptions > 0
    assert np.all(np.isfinite(sim.e2e_s)) and np.all(sim.tpot_s > 0)


def test_a_preempted_request_keeps_its_tokens_and_its_first_token_time():
    # vLLM V1 (vllm/v1/core/sched/scheduler.py, Scheduler.schedule, v0.11.0): a preempted request
    # loses its blocks and computed tokens but keeps the tokens it generated; it is recomputed as
    # a prompt of its prompt and output, then decodes on. Three 100-token prompts fit the 40
    # blocks (640 tokens) together, their 300-token outputs do not: each gets its first token in
    # the first step, every token is emitted once (recomputing from scratch re-emitted 596 more
    # and moved two TTFTs to 5.8 and 12.4 s), and the wait lands in the preempted ones' TPOT.
    mdl = predict.serve_model.resolve_model("llama3_70b")
    cost = predict.serve_model.step_cost(
        mdl, predict.serve_model.resolve_accelerator("h100_sxm"),
        layout=predict.serve_model.make_layout(mdl), weight_dtype="fp8", kv_dtype="fp8")
    first, finish, _, _, preempts, _, emitted = M._replica_run(
        cost, arrivals=np.zeros(3), inputs=np.full(3, 100), outputs=np.full(3, 300),
        sched=predict.Scheduler(), kv_blocks=40, closed_loop=0, prefilled=False)
    assert preempts > 0
    assert np.all(first == emitted[0, 0])  # the first step's end
    assert emitted[:, 1].sum() == 900
    tpot = (finish - first) / 299
    assert tpot[0] < 0.9 * tpot[1] < 0.9 * tpot[2]  # the newest waits longest


def test_sglangs_output_reserve_admits_fewer_and_preempts_less_in_a_cache_bound_burst():
    # 300 prompts of 200 tokens with 400-token outputs at once into about 82,000 tokens of cache
    # (Llama 3 70B FP8 on one H100): taking prompts until the blocks run out (a block kept per
    # running sequence) admits about all of them and then preempts 181 times as they grow;
    # SGLang's PrefillAdder keeps 0.7 of every running request's remaining output free and
    # preempts 26 times, decodes about 100 at a time instead of 154, and the last prompts wait
    # (p90 TTFT 32 s against 8.4 s) while a running request's tokens come faster (median TPOT
    # 32 ms against 80 ms)
    kw = dict(n_chips=1, n_requests=300, weight_dtype="fp8", kv_dtype="fp8",
              input_tokens=FIXED(mean=200), output_tokens=FIXED(mean=400))
    runs = [predict.simulate_serving(
        "llama3_70b", "h100_sxm", rng=np.random.default_rng(0), **kw,
        scheduler=predict.Scheduler(mixed_prefill=False, overlap=True, new_token_ratio=r))
        for r in (0.0, 0.7)]
    apart, sglang = runs
    assert sglang.n_preemptions < 0.2 * apart.n_preemptions
    assert sglang.mean_batch < 0.75 * apart.mean_batch
    assert sglang.percentile("ttft_s", 90) > 3 * apart.percentile("ttft_s", 90)
    assert sglang.percentile("tpot_s", 50) < 0.5 * apart.percentile("tpot_s", 50)
    assert np.isfinite(sglang.e2e_s).all()
    with pytest.raises(ValueError, match="new_token_ratio"):
        predict.Scheduler(new_token_ratio=1.5)


def test_disaggregation_keeps_long_prompts_out_of_the_decode_steps():
    kw = dict(n=600, input_tokens=FIXED(mean=8000), output_tokens=FIXED(mean=200))
    col = _run(3.0, **kw)
    dis = _run(3.0, n_chips=16, prefill_chips=8, **kw)
    # the decode pool never carries a prompt chunk: its p99 gap is its plain decode step
    assert dis.percentile("tpot_s", 99) < 0.6 * col.percentile("tpot_s", 99)


def test_guaranteed_no_evict_never_preempts_and_holds_fewer_sequences():
    # the same 80 requests as above; reserving each request's whole 4,000-token output on
    # admission (TensorRT-LLM's default policy) means no sequence is ever evicted, and the
    # cache, sized for whole requests, runs fewer of them at once than vLLM's grow-and-preempt
    kw = dict(n_chips=1, n_requests=80, weight_dtype="fp8", kv_dtype="fp8",
              input_tokens=FIXED(mean=2000), output_tokens=FIXED(mean=4000))
    evict = predict.simulate_serving("llama3_70b", "h100_sxm", rng=np.random.default_rng(0), **kw)
    keep = predict.simulate_serving(
        "llama3_70b", "h100_sxm", rng=np.random.default_rng(0),
        scheduler=predict.Scheduler(reserve_output=True), **kw)
    assert keep.n_preemptions == 0 < evict.n_preemptions
    # 13.4 GB of cache at 164 kB a token holds 13 whole 6,000-token requests (the mean batch is
    # lower still as the last ones drain); evicting, the cache holds 18 on average
    assert keep.mean_batch <= 13 < evict.mean_batch


def test_unmixed_prefill_steps_make_decodes_wait_and_prompts_finish_sooner():
    # SGLang's default: a step with prompt work carries no decodes. With 8,000-token prompts
    # arriving at random, the running sequences sit out every prefill step (p90 TPOT up by about
    # a fifth here, 0.109 -> 0.130 s) while each prompt, no longer sharing its steps, reaches its
    # first token sooner
    kw = dict(n=600, input_tokens=FIXED(mean=8000), output_tokens=FIXED(mean=200))
    mixed = _run(3.0, **kw)
    apart = _run(3.0, scheduler=predict.Scheduler(mixed_prefill=False), **kw)
    assert apart.percentile("tpot_s", 90) > 1.1 * mixed.percentile("tpot_s", 90)
    assert apart.percentile("ttft_s", 50) < mixed.percentile("ttft_s", 50)
    assert apart.n_steps > mixed.n_steps


def test_an_overlap_scheduler_delays_a_new_request_by_one_step():
    # SGLang's and TensorRT-LLM's default: step n+1 is scheduled while step n runs, so a client's
    # next request, sent as its last one ends a step, waits out the step already launched. With
    # two clients and 8-token prompts every step is one weight-read-bound decode, so TTFT grows
    # by one step (the TPOT) and TPOT itself does not change
    kw = dict(n=400, concurrency=2, input_tokens=FIXED(mean=8),
              output_tokens=FIXED(mean=100, kind="lognormal", sigma=0.5))
    plain = _run(None, **kw)
    over = _run(None, scheduler=predict.Scheduler(overlap=True), **kw)
    step = plain.percentile("tpot_s", 50)
    extra = over.percentile("ttft_s", 50) - plain.percentile("ttft_s", 50)
    print(f"\nTTFT p50 {plain.percentile('ttft_s', 50) * 1e3:.2f} -> "
          f"{over.percentile('ttft_s', 50) * 1e3:.2f} ms; one step {step * 1e3:.2f} ms")
    # 5%: a step with one sequence reads the same weights as one with two, less the other's KV
    assert extra == pytest.approx(step, rel=0.05)
    assert over.percentile("tpot_s", 50) == pytest.approx(step, rel=0.01)


def test_warm_up_requests_run_but_are_not_measured():
    # 16 clients send their first requests together: that wave queues behind its own prompts,
    # so leaving it out lowers the mean TTFT, and only the later requests are counted
    kw = dict(n=400, concurrency=16)
    all_in, steady = _run(None, **kw), _run(None, n_warmup=16, **kw)
    assert len(all_in.ttft_s) == 400 and len(steady.ttft_s) == 384 == steady.n_requests
    assert np.mean(steady.ttft_s) < np.mean(all_in.ttft_s)
    with pytest.raises(ValueError, match="n_warmup"):
        _run(None, n=16, n_warmup=16, concurrency=16)


def test_closed_loop_concurrency_never_exceeds_its_clients():
    sim = _run(None, n=400, concurrency=16)
    assert sim.mean_batch <= 16


def test_bad_input_is_named():
    with pytest.raises(ValueError, match="not both"):
        _run(10.0, concurrency=4)
    with pytest.raises(ValueError, match="kind must be"):
        FIXED(mean=10, kind="zipf").sample(np.random.default_rng(0), 3)
    with pytest.raises(ValueError, match="metric must be"):
        _run(10.0, n=20).percentile("latency", 50)


def test_sla_rate_interpolates_between_the_last_pass_and_the_first_miss():
    r = predict.sla_rate_per_s(rates_per_s=np.array([1.0, 2.0, 3.0]),
                               tpot_p90_s=np.array([0.01, 0.02, 0.04]), target_s=0.03)
    assert r == pytest.approx(2.5)


def test_ten_thousand_requests_benchmark():
    t0 = time.perf_counter()
    sim = predict.simulate_serving(
        "llama3_70b", "h100_sxm", n_chips=8, tp=8, n_requests=10_000, weight_dtype="fp8",
        kv_dtype="fp8", input_tokens=FIXED(mean=1000, kind="lognormal", sigma=0.8),
        output_tokens=FIXED(mean=250, kind="lognormal", sigma=0.8), arrival_rate_per_s=20.0,
        rng=np.random.default_rng(0))
    dt = time.perf_counter() - t0
    print(f"\n10,000 requests, {sim.n_steps:,} steps: {dt:.2f} s (target < 5 s on 2 cores)")
    assert sim.n_requests == 10_000


def test_sharegpt_pairs_keep_only_what_vllms_sampler_keeps_and_hit_the_published_totals():
    # GPUStack's Qwen3-235B vLLM run: 984 requests, 212,894 prompt and 193,865 generated tokens.
    # vLLM's benchmark drops a pair under 4 tokens, a prompt over 1,024 or a pair over 2,048, so an
    # output may run past 1,024 tokens (the old clip); the tail of 984 lognormal draws does.
    d_in = FIXED(mean=212894 / 984, kind="lognormal", sigma=1.0, max_tokens=10**6)
    d_out = FIXED(mean=193865 / 984, kind="lognormal", sigma=1.0, max_tokens=10**6)
    i, o = M.sample_pairs(d_in, d_out, np.random.default_rng(2026), 984, M.LengthFilter())
    assert i.min() >= 4 and o.min() >= 4 and i.max() <= 1024 and (i + o).max() <= 2048
    assert o.max() > 1024
    # totals to within rounding and the few clipped pairs: 0.5 %
    assert abs(i.sum() / 212894 - 1) < 0.005 and abs(o.sum() / 193865 - 1) < 0.005
    raw_i, raw_o = M.sample_pairs(d_in, d_out, np.random.default_rng(2026), 984)  # no filter
    assert (raw_i + raw_o).max() > 2048  # the filter is what bounds them


def test_peak_second_counts_tokens_as_vllms_benchmark_does():
    # vLLM's benchmark buckets every received token by whole seconds since the first send and
    # reports the fullest bucket. A burst of 64 equal requests (16 tokens in, 2,000 out) decodes
    # together for ~2,000 steps, so a full second holds 64 / step tokens, the step lying between
    # its cost at the shortest caches and at the longest: the peak must fall between the two.
    n, i_len, o_len = 64, 16, 2000
    sim = predict.simulate_serving("llama3_8b", "h100_sxm", n_chips=1, n_requests=n,
                                   input_tokens=FIXED(mean=i_len), output_tokens=FIXED(mean=o_len),
                                   rng=np.random.default_rng(0))
    cost = predict.serve_model.step_cost(
        predict.serve_model.resolve_model("llama3_8b"),
        predict.serve_model.resolve_accelerator("h100_sxm"),
        layout=predict.serve_model.make_layout(predict.serve_model.resolve_model("llama3_8b")),
        weight_dtype="bf16", kv_dtype="bf16")
    fastest = n / cost.step_s(n, n * i_len, 0, 0.0)
    slowest = n / cost.step_s(n, n * (i_len + o_len), 0, 0.0)
    assert slowest <= sim.peak_output_tokens_per_s <= fastest


def test_a_cache_bound_burst_on_a_prefill_apart_engine_decodes_and_ends():
    # Llama 3 70B in FP8 on one H100 leaves a few GB of cache: a burst of 600 requests preempts.
    # With prompts run apart from decodes (SGLang) and no room kept for the decodes to grow, a
    # preempted request was readmitted into the blocks the decodes needed, every step became its
    # prefill and the run never ended; keeping a block per running sequence it ends, every request
    # is served, and the steps stay within a few per output token of the longest request.
    ln = dict(kind="lognormal", sigma=1.0, max_tokens=10**6)
    sim = predict.simulate_serving(
        "llama3_70b", "h100_sxm", n_chips=1, n_requests=600, weight_dtype="fp8", kv_dtype="fp8",
        input_tokens=FIXED(mean=217, **ln), output_tokens=FIXED(mean=201, **ln),
        scheduler=predict.Scheduler(max_num_seqs=4096, mixed_prefill=False, overlap=True),
        rng=np.random.default_rng(2026), length_filter=M.LengthFilter())
    assert np.isfinite(sim.e2e_s).all() and sim.n_requests == 600
    assert sim.n_steps < 20_000


def test_a_serial_server_hands_a_burst_to_the_engine_one_request_at_a_time():
    # Scheduler.request_intake_s c: a burst of N reaches the engine over N c seconds, so the k-th
    # request (in send order) cannot see a first token before k c; in a closed loop every request
    # pays at least c before its prompt runs. c = 0 is the engine alone, bit for bit.
    L = predict.LengthDistribution

    def run(c, **extra):
        return predict.simulate_serving(
            "llama3_8b", "h100_sxm", n_chips=1, input_tokens=L(mean=64), output_tokens=L(mean=8),
            n_requests=200, rng=np.random.default_rng(0),
            scheduler=predict.Scheduler(request_intake_s=c), **extra)

    c = 0.02
    base, slow = run(0.0), run(c)
    assert np.all(np.sort(slow.ttft_s) >= c * np.arange(1, 201) - 1e-12)
    assert slow.duration_s >= 200 * c
    assert base.duration_s < 200 * c  # the engine alone is faster than the server
    default = predict.simulate_serving(  # no scheduler given: no intake
        "llama3_8b", "h100_sxm", n_chips=1, input_tokens=L(mean=64), output_tokens=L(mean=8),
        n_requests=200, rng=np.random.default_rng(0))
    assert np.array_equal(default.ttft_s, base.ttft_s)
    assert run(c, concurrency=4).ttft_s.min() >= c - 1e-12
    with pytest.raises(ValueError, match=r"request_intake_s must be in \[0, 1\) seconds"):
        predict.Scheduler(request_intake_s=-0.001)
