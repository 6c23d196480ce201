"""Serving studies: a model on a chip at the batch its memory allows, priced at rental rates.

:mod:`~llmphys.inference` gives the roofline of one decode step and one prefill. The functions
here are the compositions the economics chapter shows and the claims ledger judges, each written
once: the model on the fewest chips that hold its weights, in the precision it is served in
(:data:`SERVING_DTYPE`), at the largest batch whose KV cache fits beside the weights, at the
recorded on-demand price of ``data/prices.toml``. Per token,

    cost = n x price_per_chip_hour x t_step(B) / (3600 s x B)

so the batch-1 penalty is cost(1) / cost(B_max), and a long context lowers B_max.

Home: chapters/06_economics.ipynb.
"""

from __future__ import annotations

import numpy as np

from . import compute_split, economics, inference, specs, units

__all__ = ["SERVING_DTYPE", "COMPARED_CHIPS", "usd_per_chip_hour", "at_max_batch",
           "batch1_penalty", "batch1_penalty_range", "balance_batch_range", "long_context",
           "long_context_penalty", "rack_floor_ms", "chip_cost_spread", "weight_byte_share",
           "slope_ratio", "no_overlap_margin", "drain_time_ms", "balance_batch_spread",
           "rl_token_share_pct", "prefill_decode_bounds", "output_over_input",
           "input_output_cost", "deepseek_on_h200", "slow_mode_batch", "slow_mode_ratios",
           "step_time_growth"]

#: The precision each model is served in: Llama 3 70B in BF16, DeepSeek-V3 in FP8 (as released).
SERVING_DTYPE = {"llama3_70b": "bf16", "deepseek_v3": "fp8"}
#: The chips the economics chapter compares (the GB200 joins them for the balance batch).
COMPARED_CHIPS = ("h100_sxm", "h200", "b200")


def usd_per_chip_hour(chip_key: str) -> float:
    """The recorded on-demand rental price of one ``chip_key`` GPU for an hour, USD.

    >>> usd_per_chip_hour("h100_sxm") > 0
    True
    """
    return economics.price(f"gpu_hour_usd.{chip_key}").value


def at_max_batch(model_key: str, chip_key: str, *, context_tokens: float,
                 n_chips: int | None = None) -> dict[str, float]:
    """A decode step at the largest batch whose cache fits, and its USD per token.

    On ``n_chips`` chips (default: the fewest that hold the weights), in the model's serving
    precision, at the recorded rental price. Returns ``n_chips``, ``batch_size``,
    ``usd_per_token`` and the step's ``step_time_s``, ``memory_time_s``, ``compute_time_s``.

    >>> round(at_max_batch("llama3_70b", "h100_sxm", context_tokens=1024)["usd_per_token"]
    ...       * units.MEGA, 3)
    0.117
    """
    m, a, dt = specs.model(model_key), specs.accelerator(chip_key), SERVING_DTYPE[model_key]
    n = inference.min_chips(m, a, weight_dtype=dt) if n_chips is None else n_chips
    b = inference.max_batch_by_memory(m, a, context_tokens=context_tokens, n_chips=n,
                                      weight_dtype=dt)
    kw = dict(batch_size=b, context_tokens=context_tokens, n_chips=n, weight_dtype=dt)
    step = inference.decode_step(m, a, **kw)
    usd = inference.cost_per_token_usd(m, a, usd_per_chip_hour=usd_per_chip_hour(chip_key), **kw)
    return {"n_chips": n, "batch_size": b, "usd_per_token": usd,
            "step_time_s": step["step_time_s"], "memory_time_s": step["memory_time_s"],
            "compute_time_s": step["compute_time_s"]}


def batch1_penalty(model_key: str, chip_key: str, *, context_tokens: float = 1024,
                   n_chips: int | None = None) -> dict[str, float]:
    """Cost per token at batch 1 over the cost at the largest batch whose cache fits.

    Returns ``n_chips``, ``max_batch``, ``usd_per_token_batch1``, ``usd_per_token_max_batch``
    and their ratio ``penalty`` (dimensionless).

    >>> round(batch1_penalty("llama3_70b", "h100_sxm")["penalty"])
    290
    """
    best = at_max_batch(model_key, chip_key, context_tokens=context_tokens, n_chips=n_chips)
    m, a, dt = specs.model(model_key), specs.accelerator(chip_key), SERVING_DTYPE[model_key]
    one = inference.cost_per_token_usd(m, a, batch_size=1, context_tokens=context_tokens,
                                       n_chips=best["n_chips"], weight_dtype=dt,
                                       usd_per_chip_hour=usd_per_chip_hour(chip_key))
    return {"n_chips": best["n_chips"], "max_batch": best["batch_size"],
            "usd_per_token_batch1": one, "usd_per_token_max_batch": best["usd_per_token"],
            "penalty": one / best["usd_per_token"]}


def batch1_penalty_range(*, context_tokens: float = 1024) -> tuple[float, float]:
    """Least and greatest batch-1 penalty over the served models on :data:`COMPARED_CHIPS`.

    >>> lo, hi = batch1_penalty_range()
    >>> 100 < lo < hi < 1000
    True
    """
    r = [batch1_penalty(m, a, context_tokens=context_tokens)["penalty"]
         for m in SERVING_DTYPE for a in COMPARED_CHIPS]
    return min(r), max(r)


def balance_batch_range(model_key: str) -> tuple[float, float]:
    """Least and greatest zero-context balance batch over H100, H200, B200 and GB200.

    >>> [round(b) for b in balance_batch_range("llama3_70b")]
    [206, 312]
    """
    m = specs.model(model_key)
    b = [inference.balance_batch(m, specs.accelerator(k), weight_dtype=SERVING_DTYPE[model_key])
         for k in (*COMPARED_CHIPS, "gb200")]
    return min(b), max(b)


def long_context(model_key: str, *, context_tokens: float, what: str) -> float:
    """A decode step on the fewest B200s, at the largest batch that fits ``context_tokens``.

    what: ``"memory_over_compute"`` (time ratio, dimensionless) or ``"usd_per_mtok"`` (USD per
    million tokens at the recorded B200 price).

    >>> long_context("llama3_70b", context_tokens=131072, what="memory_over_compute") > 1
    True
    """
    if what not in ("memory_over_compute", "usd_per_mtok"):
        raise ValueError(f"what must be 'memory_over_compute' or 'usd_per_mtok', got {what!r}")
    s = at_max_batch(model_key, "b200", context_tokens=context_tokens)
    if what == "memory_over_compute":
        return s["memory_time_s"] / s["compute_time_s"]
    return s["usd_per_token"] * units.MEGA


def long_context_penalty(model_key: str, context_tokens: int) -> float:
    """Cost per token at ``context_tokens`` over that at 1,024 tokens, on the fewest B200s.

    >>> round(long_context_penalty("llama3_70b", 131072))
    94
    """
    return (at_max_batch(model_key, "b200", context_tokens=context_tokens)["usd_per_token"]
            / at_max_batch(model_key, "b200", context_tokens=1024)["usd_per_token"])


def rack_floor_ms(model_key: str) -> float:
    """Bandwidth floor, ms per token, of one user alone on a GB200 NVL72 rack (72 GPUs).

    Batch 1, zero context, weights in the serving precision: t = bytes_w(1) / (72 W).

    >>> rack_floor_ms("deepseek_v3") < rack_floor_ms("llama3_70b") < 1
    True
    """
    return inference.decode_step(specs.model(model_key), specs.accelerator("gb200"),
                                 batch_size=1, context_tokens=0, n_chips=72,
                                 weight_dtype=SERVING_DTYPE[model_key])["step_time_s"] / units.MS


def chip_cost_spread() -> float:
    """Dearest over cheapest chip for a Llama 3 70B token (1K context, largest batch, 8 GPUs).

    >>> round(chip_cost_spread(), 2)
    1.33
    """
    cost = [at_max_batch("llama3_70b", k, context_tokens=1024, n_chips=8)["usd_per_token"]
            for k in COMPARED_CHIPS]
    return max(cost) / min(cost)


def weight_byte_share(model_key: str, chip_key: str, *, batch_size: float,
                      context_tokens: float) -> float:
    """Share of a decode step's HBM bytes that are weights (the rest is KV cache), on 8 GPUs.

    >>> round(weight_byte_share("llama3_70b", "h100_sxm", batch_size=1, context_tokens=1024), 3)
    0.998
    """
    s = inference.decode_step(specs.model(model_key), specs.accelerator(chip_key),
                              batch_size=batch_size, context_tokens=context_tokens, n_chips=8,
                              weight_dtype=SERVING_DTYPE[model_key])
    return s["weight_bytes"] / (s["weight_bytes"] + s["kv_bytes"])


def slope_ratio(model_key: str, chip_key: str, *, context_tokens: float) -> float:
    """Compute time over memory time that one more sequence adds to a decode step (8 GPUs).

    The step's increments from batch 1 to batch 2; the dense weight read does not change, so
    only the cache read and the per-sequence FLOP remain. It is 1 at T_bal.

    >>> round(slope_ratio("llama3_70b", "h100_sxm", context_tokens=4096), 2)
    0.38
    """
    m, a = specs.model(model_key), specs.accelerator(chip_key)
    s1, s2 = (inference.decode_step(m, a, batch_size=b, context_tokens=context_tokens,
                                    n_chips=8, weight_dtype=SERVING_DTYPE[model_key])
              for b in (1, 2))
    return ((s2["compute_time_s"] - s1["compute_time_s"])
            / (s2["memory_time_s"] - s1["memory_time_s"]))


def no_overlap_margin(multiple: float) -> dict[str, float]:
    """A step with no memory/compute overlap over its compute floor, at ``multiple`` x B*.

    Llama 3 70B on eight H100s at zero context: (t_mem + t_comp) / t_comp = 1 + 1 / multiple.
    Returns ``margin`` (dimensionless) and the overlapped ``step_time_s``.

    >>> no_overlap_margin(1.0)["margin"]
    2.0
    """
    llama, h100 = specs.model("llama3_70b"), specs.accelerator("h100_sxm")
    s = inference.decode_step(llama, h100, batch_size=multiple * inference.balance_batch(
        llama, h100), context_tokens=0, n_chips=8)
    return {"margin": (s["memory_time_s"] + s["compute_time_s"]) / s["compute_time_s"],
            "step_time_s": s["step_time_s"]}


def drain_time_ms(statistic: str) -> float:
    """HBM capacity over bandwidth, ms, across the registry: "min", "median" or "max".

    >>> round(drain_time_ms("min"), 1)
    19.5
    """
    stats = {"min": np.min, "median": np.median, "max": np.max}
    if statistic not in stats:
        raise ValueError(f"statistic must be min, median or max, got {statistic!r}")
    t = [inference.hbm_drain_time_s(a) / units.MS for a in specs.accelerators().values()]
    return float(stats[statistic](t))


def balance_batch_spread(*, context_tokens: float) -> float:
    """Largest over smallest balance batch of Llama 3 8B, 70B and 3.1 405B on an H100.

    >>> balance_batch_spread(context_tokens=0) < 1.01
    True
    """
    b = [inference.balance_batch(specs.model(k), specs.accelerator("h100_sxm"),
                                 context_tokens=context_tokens)
         for k in ("llama3_8b", "llama3_70b", "llama31_405b")]
    return max(b) / min(b)


def slow_mode_batch() -> int:
    """The slow-mode batch: DeepSeek-V3 on 8 H200s in FP8 at 2,048 tokens, the largest that fits.

    >>> slow_mode_batch() > 2000
    True
    """
    return int(at_max_batch("deepseek_v3", "h200", context_tokens=2048)["batch_size"])


def deepseek_on_h200(batch_size: float) -> dict[str, float]:
    """DeepSeek-V3 on the fewest H200s in FP8 at 2,048 tokens: the decode step's parts
    (:func:`~llmphys.inference.decode_step`) and ``usd_per_token`` at the rental price.

    >>> deepseek_on_h200(16)["step_time_s"] < deepseek_on_h200(slow_mode_batch())["step_time_s"]
    True
    """
    m, a = specs.model("deepseek_v3"), specs.accelerator("h200")
    kw = dict(batch_size=batch_size, context_tokens=2048, weight_dtype="fp8",
              n_chips=inference.min_chips(m, a, weight_dtype="fp8"))
    return {**inference.decode_step(m, a, **kw),
            "usd_per_token": inference.cost_per_token_usd(
                m, a, usd_per_chip_hour=usd_per_chip_hour("h200"), **kw)}


def slow_mode_ratios() -> tuple[float, float]:
    """Fast (batch 16) over slow mode cost per token, and slow over fast time per token.

    >>> price, latency = slow_mode_ratios()
    >>> price > 10 and latency > 1
    True
    """
    fast, slow = deepseek_on_h200(16), deepseek_on_h200(slow_mode_batch())
    return (fast["usd_per_token"] / slow["usd_per_token"],
            slow["step_time_s"] / fast["step_time_s"])


def rl_token_share_pct(mode: str) -> float:
    """RL tokens buyable with pretraining's budget, % of DeepSeek-V3's pretraining tokens.

    Rollouts decode on eight H200s at 2,048 tokens of context, at the largest batch that fits
    (``mode="slow"``) or at batch 16 (``"fast"``); training at 40% MFU
    (:func:`~llmphys.compute_split.rl_tokens_for_equal_cost`).

    >>> rl_token_share_pct("slow") > rl_token_share_pct("fast")
    True
    """
    if mode not in ("slow", "fast"):
        raise ValueError(f"mode must be 'slow' or 'fast', got {mode!r}")
    st = deepseek_on_h200(slow_mode_batch() if mode == "slow" else 16)
    d = specs.model("deepseek_v3").n_training_tokens
    rl = compute_split.rl_tokens_for_equal_cost(
        pretrain_tokens=d, train_mfu=0.4, decode_efficiency=st["compute_time_s"] / st["step_time_s"])
    return rl / d * 100


def prefill_decode_bounds() -> tuple[float, float]:
    """Llama 3 70B on eight H100s: a 4K prompt's compute/memory time, decode's memory/compute.

    Decode runs at the largest batch that fits at 4,096 + 512 tokens. Both above 1: prefill is
    compute-bound, decode memory-bound.

    >>> all(r > 1 for r in prefill_decode_bounds())
    True
    """
    p = inference.prefill(specs.model("llama3_70b"), specs.accelerator("h100_sxm"),
                          prompt_tokens=4096, n_chips=8)
    d = at_max_batch("llama3_70b", "h100_sxm", context_tokens=4096 + 512, n_chips=8)
    return p["compute_time_s"] / p["memory_time_s"], d["memory_time_s"] / d["compute_time_s"]


def input_output_cost(*, prompt_tokens: int = 4096, output_tokens: int = 512) -> dict[str, float]:
    """USD per input token and per output token for Llama 3 70B on 8 H100s, rental prices.

    Input tokens at the prefill roofline of one ``prompt_tokens`` prompt; output tokens at the
    largest batch that fits at ``prompt_tokens + output_tokens`` of context. Returns
    ``usd_per_input_token``, ``usd_per_output_token``, the output ``batch_size`` and ``ratio``.

    >>> round(input_output_cost()["ratio"], 1)
    4.0
    """
    p = inference.prefill(specs.model("llama3_70b"), specs.accelerator("h100_sxm"),
                          prompt_tokens=prompt_tokens, n_chips=8)
    cost_in = 8 * usd_per_chip_hour("h100_sxm") / units.HOUR * p["time_s"] / prompt_tokens
    out = at_max_batch("llama3_70b", "h100_sxm", context_tokens=prompt_tokens + output_tokens,
                       n_chips=8)
    return {"usd_per_input_token": cost_in, "usd_per_output_token": out["usd_per_token"],
            "batch_size": out["batch_size"], "ratio": out["usd_per_token"] / cost_in}


def output_over_input() -> tuple[float, float, float]:
    """Output-token cost over input-token cost: on the roofline (:func:`input_output_cost`),
    then the least and greatest list-price ratio (:func:`~llmphys.economics.api_output_over_input`).

    >>> [round(r, 1) for r in output_over_input()]
    [4.0, 4.0, 5.0]
    """
    api = economics.api_output_over_input()
    return input_output_cost()["ratio"], min(api.values()), max(api.values())


def step_time_growth(multiple: float = 2.0) -> float:
    """Decode step time at ``multiple`` x the balance batch over that at the balance batch.

    Llama 3 70B on 8 H100s at zero context: above B* the step is compute-bound and grows
    in proportion to the batch.

    >>> step_time_growth(2.0)
    2.0
    """
    return (no_overlap_margin(multiple)["step_time_s"]
            / no_overlap_margin(1.0)["step_time_s"])
