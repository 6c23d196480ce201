"""A discrete-event simulation of continuous batching, timed by the serving model's step cost.

One replica runs vLLM V1's scheduler (Kwon et al. 2023, arXiv:2309.06180; vllm-project/vllm
v0.11.0, commit f71952c1c, vllm/v1/core/sched/scheduler.py, Scheduler.schedule): each step serves
the running sequences in admission order (a decode token each, or a prompt's next chunk), then,
unless it preempted, admits waiting requests first-come first-served while the token budget, the
sequence cap and the KV-cache blocks allow (blocks for the tokens a step computes:
KVCacheManager.allocate_slots). A sequence that needs a block when none is free preempts the
newest, which keeps its generated tokens and is later recomputed, prompt and output, as one
prompt. A step lasts ``StepCost.step_s`` of what it carries, the terms ``predict.serve`` sums in
the steady state, so the two agree under a steady load (a test shows it). With
``prefill_chips`` a pool of their own prefills the prompts and sends their caches over
scale-out. Other engines' defaults are :class:`Scheduler` options: TensorRT-LLM's whole-output
admission (``reserve_output``), SGLang's prompt steps apart (``mixed_prefill`` False) and its
reserve for running outputs (``new_token_ratio``), vLLM 0.6's multi-step rounds
(``steps_per_round``).

Arrivals (Poisson, a closed loop or all at once) and lengths are drawn with a seeded generator,
so a run is deterministic. Vidur (Agrawal et al. 2024, arXiv:2405.05465) is the reference for
what such a simulator answers. TTFT is the engine's: the server's request path (HTTP,
tokenisation, IPC), measured at a few milliseconds, is not charged, and a fixed delay is not
neutral: in a closed loop of equal requests it decides whether a resent prompt runs alone or
behind another, which moves the simulated TTFT by a whole prefill (tests/test_serving_runs.py).

Home: chapters/06_economics.ipynb, section "Latency under load".
"""

from __future__ import annotations

import dataclasses
import functools
import importlib

import numpy as np

from .. import units
from ..specs import Accelerator, Model

# the module itself: the package's name serve is the function
_serve = importlib.import_module(".serve_model", __package__)
from .serve_model import ServeConstants, StepCost  # noqa: E402  (names for the annotations)
from .simulate_types import (  # noqa: E402
    BLOCK_TOKENS,
    CLIP_NEW_TOKENS,
    RATIO_DECAY,
    RATIO_MIN,
    RETRACT_STEPS,
    LengthDistribution,
    LengthFilter,
    Scheduler,
    Simulation,
    kv_cache_blocks,
    peak_tokens_per_s,
    prefill_pool_ready,
    sample_pairs,
    serial_intake,
)


def _replica_run(
    cost: StepCost,
    *,
    arrivals: np.ndarray,
    inputs: np.ndarray,
    outputs: np.ndarray,
    sched: Scheduler,
    kv_blocks: int,
    closed_loop: int,
    prefilled: bool,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, int, int, float, np.ndarray]:
    """Simulate one replica. Returns first-token and finish times, admission order, steps,
    preemptions, the summed decode batch and each step's (end time, tokens emitted).
    ``closed_loop`` > 0: a finished request releases its client, whose next request (in index
    order) arrives at that instant. ``prefilled``: the prompts' caches arrive ready (the decode
    pool of a disaggregated deployment)."""
    model = cost.model
    n = len(arrivals)
    arr = arrivals.astype(float).copy()
    first, finish = np.full(n, np.nan), np.full(n, np.nan)
    done = np.zeros(n, dtype=np.int64)  # tokens whose KV is computed
    target = inputs.copy()  # tokens to compute before it decodes (after a preemption, + output)
    gen = np.zeros(n, dtype=np.int64)  # output tokens emitted
    k1 = cost.tokens_per_decode
    n_round = sched.steps_per_round  # decode steps per scheduling round (multi-step)
    budget, max_seqs = sched.max_num_batched_tokens, sched.max_num_seqs
    flop_1 = functools.cache(  # prompt length -> one token's attention FLOP, mean context
        lambda i: _serve.prefill_attention_flop(model, n_tokens=1, prompt_tokens=i)
    )

    if closed_loop:
        arr[closed_loop:] = np.inf  # released, in index order, as clients free up
        order = list(range(min(closed_loop, n)))
    else:
        order = list(np.argsort(arr, kind="stable"))
    intake = sched.request_intake_s  # the server's serial work before the engine sees a request
    vis = serial_intake(arr, intake)  # when the engine sees each request (arr: when it was sent)
    busy = float(np.max(vis, initial=0.0, where=np.isfinite(vis)))
    nxt = 0  # next request in arrival order not yet queued
    waiting: list[int] = []
    running: list[int] = []  # in admission order
    blocks = np.zeros(n, dtype=np.int64)
    used_blocks = 0
    t, batch_sum = 0.0, 0.0
    steps = preempt = 0
    emitted: list[tuple[float, int]] = []  # (step end, tokens it emitted)
    next_client = closed_loop
    if prefilled:
        done[:] = inputs
    ratio, full = sched.new_token_ratio, False  # SGLang's new_token_ratio, batch_is_full
    n_done = 0
    prev_dt = 0.0  # the last step's length: an overlapping engine scheduled this one as it began
    while n_done < n:
        # a request joins the first step scheduled after it arrives: the next one, or (overlap)
        # the one after, since the next was scheduled while the step now ending ran
        seen = t - (prev_dt if sched.overlap else 0.0)
        while nxt < len(order) and vis[order[nxt]] <= seen:
            waiting.append(order[nxt])
            nxt += 1
        if not running and not waiting:
            if nxt >= len(order):
                break
            t = max(t, float(vis[order[nxt]]))  # idle until the next arrival
            prev_dt = 0.0
            continue
        n_pre, pflop = 0, 0.0
        chunks: list[tuple[int, int]] = []
        # 1. running requests in admission order while the budget lasts: a decode token each (none
        # if decodes run apart) or a prompt's next chunk, with blocks to its context (a round's
        # for all its steps: V0's lookahead slots) or to the chunk's end
        rr = np.fromiter(running, dtype=np.int64, count=len(running))
        d_r, t_r, k_d = done[rr], target[rr], k1 if sched.mixed_prefill else 0
        dec = d_r >= t_r
        if (all_dec := bool(dec.all())) and len(rr) * k_d <= budget:  # decodes only, all fit
            take = np.full(len(rr), k_d, dtype=np.int64)
        else:
            take = np.minimum(np.cumsum(np.where(dec, k_d, t_r - d_r)), budget)
            take[1:] -= take[:-1].copy()
        upto = inputs[rr] + gen[rr] + (k1 * n_round - 1)
        upto = upto if all_dec else np.where(dec, upto, d_r + take)
        need = np.maximum(-(-upto // BLOCK_TOKENS) - blocks[rr], 0)
        p0, n_need = preempt, int(need.sum())
        # no block free: preempt until the rest fit, vLLM the newest (queued first), SGLang the
        # fewest generated tokens, then the longest prompt (queued last). A victim keeps its tokens
        # and is recomputed, prompt and output, later: its TTFT stays, the wait is in its TPOT
        if len(running) > 1 and used_blocks + n_need > kv_blocks:
            sg = sched.new_token_ratio > 0
            cand = np.lexsort((-inputs[rr], gen[rr])) if sg else np.arange(len(rr))[::-1]
            keep = np.ones(len(rr), dtype=bool)
            for j in cand[:-1]:
                if used_blocks + int(need[keep].sum()) <= kv_blocks:
                    break
                keep[j], victim = False, int(rr[j])
                used_blocks -= int(blocks[victim])
                blocks[victim] = 0
                target[victim] = inputs[victim] + gen[victim]
                done[victim] = target[victim] if prefilled else 0
                preempt += 1
                waiting.insert(len(waiting) if sg else 0, victim)
            rr, dec, take, need = rr[keep], dec[keep], take[keep], need[keep]
            n_need, all_dec = int(need.sum()), bool(dec.all())
            running = [int(x) for x in rr]
            if sg:  # Scheduler.update_running_batch: the ratio ScheduleBatch.retract_decode gives
                ratio = min(
                    1.0, (gen[rr].sum() + RETRACT_STEPS * len(rr)) / (outputs[rr].sum() + 1)
                )
                full = False
        blocks[rr] += need
        used_blocks += n_need
        dec_idx = rr[dec & (take > 0)] if sched.mixed_prefill else rr[dec][: max(budget // k1, 0)]
        tokens = int(take.sum())
        pm = ~dec & (take > 0)  # prompts' next chunks
        for r, c in () if all_dec else zip(rr[pm].tolist(), take[pm].tolist(), strict=True):
            n_pre += c
            pflop += c * flop_1(int(target[r]))
            chunks.append((r, c))
        # 2. admit waiting requests while the budget, the cap and the cache allow, none in a step
        # that preempted. SGLang's PrefillAdder (new_token_ratio) admits into the free tokens less
        # the running requests' remaining outputs times the ratio and each admitted one's prompt
        # and whole output; without it, decodes run apart keep a block each (else a preempted
        # request is readmitted into their blocks and a cache-bound burst never decodes)
        reserve = 0 if sched.mixed_prefill or ratio else len(running) + 1
        left = (kv_blocks - used_blocks) * BLOCK_TOKENS - (
            ratio * float(np.minimum(outputs[rr] - gen[rr], CLIP_NEW_TOKENS).sum()) if ratio else 0
        )
        while (
            preempt == p0 and not full and waiting and tokens < budget and len(running) < max_seqs
        ):
            r = waiting[0]
            rem = int(target[r] - done[r])
            c = min(rem, budget - tokens) if sched.chunked_prefill else rem
            if not sched.chunked_prefill and tokens + rem > budget and tokens > 0:
                break
            # blocks for the tokens it computes now, or (guaranteed no evict) its whole output
            end = inputs[r] + outputs[r] if sched.reserve_output else done[r] + c
            first_blocks = -(-int(end) // BLOCK_TOKENS)
            if ratio:  # a refusal marks the batch full until a running request leaves
                o = min(int(outputs[r] - gen[r]), CLIP_NEW_TOKENS)
                full = rem + o >= left
                if full:
                    break
                left -= c + (o if c == rem else 0)  # a truncated chunk reserves no output
            if used_blocks + first_blocks + reserve > kv_blocks:
                break
            reserve += 0 if sched.mixed_prefill or ratio else 1
            waiting.pop(0)
            used_blocks += first_blocks
            blocks[r] = first_blocks
            running.append(r)
            if c > 0:
                tokens += c
                n_pre += c
                pflop += c * flop_1(int(target[r]))
                chunks.append((r, c))
        if n_pre and not sched.mixed_prefill:
            dec_idx = dec_idx[:0]
        decoding = dec_idx
        n_dec = len(dec_idx)
        tokens = n_dec * k1 + n_pre
        kv_tok = float((inputs[dec_idx] + gen[dec_idx]).sum())
        if tokens == 0:
            if running or not waiting:
                continue  # sequences just admitted with their caches ready decode next step
            # nothing fits (a prompt larger than the whole cache): drop it with no tokens
            r = waiting.pop(0)
            first[r] = finish[r] = t
            n_done += 1
            continue
        # a decode step starts a round of n_round steps of the same batch; a prompt step is one
        m = n_round if n_round > 1 and n_pre == 0 and n_dec else 1
        dt = cost.step_s(n_dec, kv_tok, n_pre, pflop)
        for j in range(1, m):  # the batch's contexts grow a token a step; none leaves mid-round
            dt += cost.step_s(n_dec, kv_tok + j * n_dec * k1, 0, 0.0)
        t += dt
        prev_dt = dt
        if ratio and not n_pre and preempt == p0:  # a decode step, no retraction: it decays
            ratio = max(
                ratio - sched.new_token_ratio * RATIO_DECAY, sched.new_token_ratio * RATIO_MIN
            )
        steps += m
        batch_sum += n_dec * m
        if m == 1:
            n_out = n_dec * k1
        else:  # a sequence that ends mid-round emits only up to its length
            n_out = int(np.minimum(outputs[dec_idx] - gen[dec_idx], m * k1).sum())
        for r, c in chunks:
            done[r] += c
            if done[r] >= target[r]:  # the last chunk yields a token: the first, or the next
                first[r] = t if gen[r] == 0 else first[r]
                gen[r] += 1
                n_out += 1
        emitted.append((t, n_out))
        gen[decoding] += k1 * m
        fresh = decoding[np.isnan(first[decoding])]  # caches prefilled elsewhere
        first[fresh] = t
        rr = np.fromiter(running, dtype=np.int64, count=len(running))
        over = (gen[rr] >= outputs[rr]) & (done[rr] >= target[rr])
        if over.any():
            ended, full = rr[over], False
            gen[ended] = outputs[ended]
            finish[ended] = t
            used_blocks -= int(blocks[ended].sum())
            blocks[ended] = 0
            n_done += len(ended)
            running = rr[~over].tolist()
            for _ in range(len(ended)):
                if closed_loop and next_client < n:
                    arr[next_client] = t
                    busy = vis[next_client] = max(t, busy) + intake
                    order.append(next_client)
                    next_client += 1
    return first, finish, arr, steps, preempt, batch_sum, np.array(emitted).reshape(-1, 2)


def simulate_serving(
    model: Model | str,
    accelerator: Accelerator | str,
    *,
    n_chips: int,
    tp: int = 1,
    ep: int = 1,
    pp: int = 1,
    input_tokens: LengthDistribution,
    output_tokens: LengthDistribution,
    n_requests: int,
    rng: np.random.Generator,
    arrival_rate_per_s: float | None = None,
    concurrency: int | None = None,
    scheduler: Scheduler = Scheduler(),  # noqa: B008  (frozen: immutable)
    weight_dtype: str = "bf16",
    kv_dtype: str = "bf16",
    math_dtype: str | None = None,
    prefill_chips: int = 0,
    two_batch_overlap: bool = False,
    constants: ServeConstants = _serve.CONSTANTS,
    draft_tokens: int = 0,
    acceptance_rate: float = 0.0,
    n_warmup: int = 0,
    length_filter: LengthFilter | None = None,
) -> Simulation:
    """Simulate ``n_requests`` through a deployment; latency percentiles and throughput.

    Requests go to the deployment's replicas in turn (round robin), each replica simulated on
    its own. ``arrival_rate_per_s`` (whole deployment, Poisson) or ``concurrency`` (closed loop)
    or neither (every request at t = 0). Speculative decoding: each decode emits the expected
    accepted run (rounded per step), priced as k + 1 tokens. ``n_warmup``: the first requests
    (in a closed loop, the wave every client sends together at t = 0) run but are left out of
    the latencies and the throughput, as a benchmark that measures its steady state does.
    ``length_filter``: the (prompt, output) pairs the benchmark's sampler would drop are redrawn
    and the lengths' means matched to the distributions' (:func:`sample_pairs`).

    >>> import numpy as np
    >>> sim = simulate_serving("llama3_8b", "h100_sxm", n_chips=1, n_requests=200,
    ...                        input_tokens=LengthDistribution(mean=512),
    ...                        output_tokens=LengthDistribution(mean=128),
    ...                        arrival_rate_per_s=10.0, rng=np.random.default_rng(0))
    >>> round(sim.percentile("tpot_s", 50) * 1e3, 1)  # ms
    9.2
    """
    mdl = _serve.resolve_model(model)
    acc = _serve.resolve_accelerator(accelerator)
    n = _serve._int("n_requests", n_requests)
    n_warm = _serve._int("n_warmup", n_warmup, 0)
    if n_warm >= n:
        raise ValueError(f"n_warmup = {n_warm} must be below n_requests = {n}")
    if arrival_rate_per_s is not None and concurrency is not None:
        raise ValueError("pass arrival_rate_per_s or concurrency, not both")
    layout = _serve.make_layout(mdl, tp=tp, ep=ep, pp=pp, overlap=two_batch_overlap)
    g, pc = layout.chips, _serve._int("prefill_chips", prefill_chips, 0)
    n_chips = _serve._int("n_chips", n_chips)
    if n_chips - pc < g or (n_chips - pc) % g:
        raise ValueError(f"n_chips - prefill_chips = {n_chips - pc} must be a multiple of {g}")
    n_rep = (n_chips - pc) // g
    k = _serve._int("draft_tokens", draft_tokens, 0)
    cost = _serve.step_cost(mdl, acc, layout=layout, weight_dtype=weight_dtype, kv_dtype=kv_dtype,
                            math_dtype=math_dtype, constants=constants, draft_tokens=k)  # fmt: skip
    e_tok = _serve.expected_tokens_per_step(draft_tokens=k, acceptance_rate=acceptance_rate)
    if k:
        cost = dataclasses.replace(cost, tokens_per_decode=max(1, round(e_tok)))
    ins, outs = sample_pairs(input_tokens, output_tokens, rng, n, length_filter)
    if arrival_rate_per_s is not None:
        units.check_positive("arrival_rate_per_s", arrival_rate_per_s)
        arrivals = np.cumsum(rng.exponential(1.0 / arrival_rate_per_s, n))
    else:
        arrivals = np.zeros(n)
    kv_blocks = kv_cache_blocks(cost, scheduler)
    ready = prefill_pool_ready(cost, tp=tp, pp=pp, chips=pc, arrivals=arrivals, inputs=ins)
    first, finish = np.full(n, np.nan), np.full(n, np.nan)
    arr_eff = ready.copy()
    steps, preempts, batch_sum = 0, 0, 0.0
    emits: list[np.ndarray] = []
    for rep in range(n_rep):
        idx = np.arange(rep, n, n_rep)
        cl = 0 if concurrency is None else max(1, _serve._int("concurrency", concurrency) // n_rep)
        f, fin, a, s, p, b, e = _replica_run(
            cost,
            arrivals=ready[idx],
            inputs=ins[idx],
            outputs=outs[idx],
            sched=scheduler,
            kv_blocks=kv_blocks,
            closed_loop=cl,
            prefilled=bool(pc),
        )
        first[idx], finish[idx], arr_eff[idx] = f, fin, a
        steps, preempts, batch_sum = steps + s, preempts + p, batch_sum + b
        emits.append(e)
    if pc:
        arr_eff = np.where(np.isfinite(arr_eff), arrivals, arr_eff)
        if concurrency is None:
            arr_eff = arrivals
    ttft = first - arr_eff
    kept = np.arange(n) >= n_warm  # the warm-up requests are sent but not measured
    multi = (outs > 1) & kept
    tpot = (finish[multi] - first[multi]) / (outs[multi] - 1)
    start = float(np.nanmin(arr_eff[kept]))
    duration = float(np.nanmax(finish[kept])) - start
    peak = peak_tokens_per_s(emits, start_s=start)
    return Simulation(
        ttft_s=ttft[kept],
        tpot_s=tpot,
        e2e_s=(finish - arr_eff)[kept],
        output_tokens_per_s=float(outs[kept].sum()) / duration,
        input_tokens_per_s=float(ins[kept].sum()) / duration,
        n_requests=n - n_warm,
        n_steps=steps,
        n_preemptions=preempts,
        mean_batch=batch_sum / max(steps, 1),
        duration_s=duration,
        peak_output_tokens_per_s=peak,
    )


__all__ = [
    "BLOCK_TOKENS",
    "LengthDistribution",
    "LengthFilter",
    "Scheduler",
    "Simulation",
    "simulate_serving",
]
