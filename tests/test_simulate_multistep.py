"""Multi-step scheduling in the simulator (``Scheduler.steps_per_round``, vLLM V0's
``--num-scheduler-steps``) against closed forms built from the same step cost, and the proof that
one step a round is the simulator as it was."""

import importlib

import numpy as np
import pytest

from llmphys import predict

M = importlib.import_module("llmphys.predict.simulate")
S = importlib.import_module("llmphys.predict.serve_model")
FIXED = predict.LengthDistribution
CONST = S.ServeConstants(gemm_efficiency=0.5, expert_gemm_efficiency=0.25, step_overhead_s=2e-3)


def _cost():
    mdl = S.resolve_model("llama3_8b")
    return S.step_cost(mdl, "a100_sxm", layout=S.make_layout(mdl), constants=CONST)


def _prefill_s(cost, n):
    return cost.step_s(0, 0.0, n, S.prefill_attention_flop(cost.model, n_tokens=n, prompt_tokens=n))


def _run(cost, arrivals, inputs, outputs, steps):
    return M._replica_run(
        cost, arrivals=np.array(arrivals, float), inputs=np.array(inputs),
        outputs=np.array(outputs), sched=predict.Scheduler(steps_per_round=steps,
                                                           mixed_prefill=False,
                                                           chunked_prefill=False),
        kv_blocks=10**6, closed_loop=0, prefilled=False)


def test_a_lone_request_gets_its_first_token_after_its_prompt_step_and_the_rest_in_rounds():
    # one request, 100-token prompt, 25 output tokens, rounds of 10: the prompt runs in a step of
    # its own and returns the first token; the other 24 come in rounds of 10 decode steps, the
    # last round running all 10 steps though the request needs 4 of them, and the tokens reach
    # the client at each round's end (bursts of 10, 10, 4)
    cost = _cost()
    first, finish, _, steps, _, _, emitted = _run(cost, [0.0], [100], [25], 10)
    p = _prefill_s(cost, 100)
    rounds = [sum(cost.step_s(1, float(100 + 1 + 10 * r + j), 0, 0.0) for j in range(10))
              for r in range(3)]
    # 1e-12: the same terms summed in the same order, only rounding differs
    assert first[0] == pytest.approx(p, rel=1e-12)
    assert finish[0] == pytest.approx(p + sum(rounds), rel=1e-12)
    assert emitted[:, 1].tolist() == [1, 10, 10, 4]
    assert emitted[1:, 0] == pytest.approx(np.cumsum(rounds) + p, rel=1e-12)
    assert steps == 1 + 30
    # one step a round: 24 decode steps, one token each, and the request ends 6 steps sooner
    first1, finish1, *_ = _run(cost, [0.0], [100], [25], 1)
    one = sum(cost.step_s(1, float(100 + 1 + j), 0, 0.0) for j in range(24))
    assert finish1[0] == pytest.approx(p + one, rel=1e-12)
    assert first1[0] == first[0]


def test_a_request_arriving_mid_round_waits_for_the_round_to_end():
    # A (prompt 100, 41 tokens: 4 rounds) starts at 0; B arrives 2.5 decode steps into A's first
    # round. With rounds of 10, B's prompt runs only when that round ends: TTFT = the rest of the
    # round + its own prompt step. With one step a round it waits only for the step under way.
    cost = _cost()
    p = _prefill_s(cost, 100)
    d = [cost.step_s(1, float(101 + j), 0, 0.0) for j in range(10)]
    t_b = p + d[0] + d[1] + 0.5 * d[2]
    first, *_ = _run(cost, [0.0, t_b], [100, 100], [41, 41], 10)
    want = p + sum(d) + p - t_b
    assert first[1] - t_b == pytest.approx(want, rel=1e-12)  # the same sums, rounding apart
    first1, *_ = _run(cost, [0.0, t_b], [100, 100], [41, 41], 1)
    assert first1[1] - t_b == pytest.approx(p + d[0] + d[1] + d[2] + p - t_b, rel=1e-12)


def test_steps_per_round_must_be_a_positive_integer():
    for bad in (0, -3, 2.5, True):
        with pytest.raises(ValueError, match="steps_per_round"):
            predict.Scheduler(steps_per_round=bad)


@pytest.mark.parametrize(
    ("sched", "pinned"),
    [
        # pinned at main 1c42773, before steps_per_round existed: sums over 300 requests of TTFT,
        # TPOT and end-to-end latency (s), and the step count, under CONST (fixed here, so a refit
        # of the library's constants does not move them). A change to the step-cost terms moves
        # them too; then re-pin from the commit before the change.
        (predict.Scheduler(), (11.83413315320385, 3.7417892336869047, 729.924797992644, 3183)),
        (predict.Scheduler(mixed_prefill=False, chunked_prefill=False),
         (11.102152889496491, 4.052876101829627, 788.6807251151445, 3239)),
        (predict.Scheduler(mixed_prefill=False, overlap=True),
         (14.734842741000115, 4.0520093888322535, 792.3157013736545, 3241)),
        (predict.Scheduler(reserve_output=True, max_num_seqs=8, max_num_batched_tokens=512),
         (6436.84790921874, 3.2693375678074426, 7069.738408136171, 7412)),
    ],
)
def test_one_step_a_round_is_the_simulator_as_it_was(sched, pinned):
    ln = dict(kind="lognormal", sigma=1.0, max_tokens=4096)
    sim = predict.simulate_serving(
        "llama3_8b", "a100_sxm", n_chips=1, n_requests=300, constants=CONST,
        input_tokens=FIXED(mean=226, **ln), output_tokens=FIXED(mean=194, **ln),
        arrival_rate_per_s=8.0, rng=np.random.default_rng(0), scheduler=sched,
        length_filter=M.LengthFilter())
    got = (float(sim.ttft_s.sum()), float(sim.tpot_s.sum()), float(sim.e2e_s.sum()), sim.n_steps)
    assert got[:3] == pytest.approx(pinned[:3], rel=1e-12)  # bit-for-bit but for the sums' order
    assert got[3] == pinned[3]


def test_the_four_vllm_060_rows_run_ten_step_rounds_and_a_bad_row_value_is_named():
    import dataclasses

    rows = importlib.import_module("llmphys.predict.serving_rows")
    runs = predict.serving_runs()
    ten = sorted(k for k, r in runs.items() if r.scheduler_steps != 1)
    assert len(ten) == 4 and all("_vllm_rps" in k for k in ten)
    assert all(runs[k].scheduler_steps == 10 for k in ten)
    bad = dataclasses.replace(runs[ten[0]], scheduler_steps=0)
    with pytest.raises(ValueError, match="scheduler_steps"):
        rows.check_row(bad, "row")


def test_rounds_lengthen_every_vllm_060_ttft_and_the_page_itl_is_about_ten_tpots():
    rows = {r["run"]: r for r in predict.multistep_rows()}
    runs = predict.serving_runs()
    assert len(rows) == 4
    for key, r in rows.items():
        # the ITL is the README's, in ms, as quoted
        assert f"Median ITL {runs[key].measured_itl_p50_s * 1e3:.2f}" in runs[key].quote
        # a request waits for the running round: the TTFT grows, and by more than the TPOT
        assert r["ttft_p50_error"] > r["ttft_p50_error_one_step"] + 0.3
        assert abs(r["tpot_p50_error"] - r["tpot_p50_error_one_step"]) < 0.05
    # 8B at 4 requests/s: 129.32 ms / 14.14 ms (the page's medians), exact to the quote's digits
    assert rows["sglang060_llama31_8b_a100_vllm_rps4"]["itl_over_tpot"] == pytest.approx(
        129.32 / 14.14, rel=1e-9)
    s = predict.multistep_summary()
    assert s["steps"] == 10 and 9 < s["itl_over_tpot_min"] <= s["itl_over_tpot_max"] < 10
