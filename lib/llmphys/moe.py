"""Mixture of experts: top-k routing, load balance, experts touched, all-to-all traffic.

A router scores each token against E experts and sends it to the k best; the
token's FFN output is the gate-weighted sum of those experts' outputs (plus any
always-on shared experts). Three consequences this module computes:

* balance: nothing in the routing rule spreads tokens evenly. An auxiliary loss
  (Switch Transformer, Fedus et al. 2022, eq. 4, arXiv:2101.03961) or a per-expert
  bias on the selection scores (Wang et al. 2024, arXiv:2408.15664, used by
  DeepSeek-V3 sec. 2.1.2) pushes the loads together;
* memory: a batch of B tokens touches about E (1 - (1 - k/E)^B) distinct experts,
  so all of their weights must be resident and read;
* network: with experts spread over devices (GShard, Lepikhin et al. 2021,
  arXiv:2006.16668), every routed token crosses the fabric twice per MoE layer.

Home: chapters/03_architecture.ipynb.
"""

from __future__ import annotations

import math

import numpy as np

from . import accounting, comms, units
from .nn import softmax
from .specs import Accelerator, Model


def route(
    logits: np.ndarray, *, k: int, bias: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Top-k routing of logits (T, E): (expert indices (T, k), gate weights (T, k)).

    Selection uses softmax scores plus ``bias`` (the bias steers selection only, as in
    DeepSeek-V3 sec. 2.1.2); gates are the selected scores renormalised to sum to 1, which
    equals Mixtral's softmax over the top-k logits (Jiang et al. 2024, eq. 2).

    >>> idx, gates = route(np.array([[0.0, 2.0, 1.0]]), k=2)
    >>> idx.tolist(), gates.round(3).tolist()
    ([[1, 2]], [[0.731, 0.269]])
    """
    n_experts = logits.shape[-1]
    if not 1 <= k <= n_experts:
        raise ValueError(f"k must lie in [1, {n_experts}] (the number of experts), got {k!r}")
    scores = softmax(logits)
    select = scores if bias is None else scores + bias
    idx = np.argpartition(-select, k - 1, axis=-1)[:, :k]  # the k best, unordered
    idx = np.take_along_axis(idx, np.argsort(-np.take_along_axis(select, idx, -1), -1), -1)
    gates = np.take_along_axis(scores, idx, axis=-1)
    return idx, gates / gates.sum(axis=-1, keepdims=True)


def expert_load(idx: np.ndarray, n_experts: int) -> np.ndarray:
    """Fraction of the (token, slot) assignments each expert received; sums to 1."""
    return np.bincount(idx.ravel(), minlength=n_experts) / idx.size


def load_imbalance(idx: np.ndarray, n_experts: int) -> float:
    """Busiest expert's load over the mean load (1.0 = perfect balance).

    The step time of an expert-parallel layer is set by the busiest expert.

    >>> load_imbalance(np.array([[0], [0], [1], [2]]), 4)
    2.0
    """
    return float(expert_load(idx, n_experts).max() * n_experts)


def switch_aux_loss(logits: np.ndarray, idx: np.ndarray) -> float:
    """Switch Transformer balance loss E * sum_i f_i P_i (Fedus et al. 2022, eq. 4, alpha = 1).

    f_i: fraction of assignments to expert i; P_i: mean router probability of i.
    Equals 1 under perfect balance and grows towards E as routing collapses.
    """
    n_experts = logits.shape[-1]
    return float(n_experts * expert_load(idx, n_experts) @ softmax(logits).mean(axis=0))


def _aux_loss_grad(x: np.ndarray, logits: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """d(aux loss)/d(router weight) with f held fixed: x^T [(E/T) p (f - p.f)]."""
    n_tokens, n_experts = logits.shape
    p, f = softmax(logits), expert_load(idx, n_experts)
    g = (n_experts / n_tokens) * p * (f[None, :] - (p @ f)[:, None])
    return x.T @ g


def balance_router(
    rng: np.random.Generator,
    *,
    method: str,
    n_experts: int = 32,
    k: int = 4,
    d_model: int = 32,
    n_tokens: int = 1024,
    n_steps: int = 100,
    rate: float | None = None,
    skew: float = 1.0,
) -> dict[str, np.ndarray]:
    """Route fresh random tokens for ``n_steps`` and balance by ``method``: none | aux_loss | bias.

    Tokens are N(mu, I) with a common mean mu of norm ``skew`` (hidden states are not
    centred), so a random router favours some experts. aux_loss: a gradient step of
    size ``rate`` (default 1.0) on the Switch loss alone, no language-model loss; bias:
    b_i += rate * sign(mean load - load_i) on the softmax scores (default 0.002;
    Wang et al. 2024, alg. 1). Returns the imbalance per step and the final loads.
    """
    defaults = {"none": 0.0, "aux_loss": 1.0, "bias": 0.002}
    if method not in defaults:
        raise ValueError(f"method must be 'none', 'aux_loss' or 'bias', got {method!r}")
    rate = defaults[method] if rate is None else units.check_positive("rate", rate)
    w = rng.standard_normal((d_model, n_experts)) / np.sqrt(d_model)
    mu = rng.standard_normal(d_model)
    mu *= skew / np.linalg.norm(mu)
    bias, imbalance = np.zeros(n_experts), np.empty(n_steps)
    for step in range(n_steps):
        x = mu + rng.standard_normal((n_tokens, d_model))
        logits = x @ w
        idx, _ = route(logits, k=k, bias=bias if method == "bias" else None)
        imbalance[step] = load_imbalance(idx, n_experts)
        if method == "aux_loss":
            w -= rate * _aux_loss_grad(x, logits, idx)
        elif method == "bias":
            bias += rate * np.sign(1.0 / n_experts - expert_load(idx, n_experts))
    return {"imbalance": imbalance, "load": expert_load(idx, n_experts)}


def expected_experts_touched(
    *, n_experts: int, k: int, n_tokens: float | np.ndarray
) -> float | np.ndarray:
    """Distinct experts a batch of n tokens activates under uniform routing: E (1 - (1 - k/E)^n).

    A token avoids a given expert with probability C(E-1, k) / C(E, k) = 1 - k/E.

    >>> round(expected_experts_touched(n_experts=256, k=8, n_tokens=32), 1)
    163.3
    """
    units.check_positive("n_experts", n_experts)
    if not 1 <= k <= n_experts:
        raise ValueError(f"k must lie in [1, n_experts={n_experts}], got {k!r}")
    return n_experts * (1.0 - (1.0 - k / n_experts) ** n_tokens)


def all_to_all_bytes_per_token(
    model: Model,
    *,
    n_devices: float,
    bytes_per_element: float = 2.0,
    dispatch_bytes_per_element: float | None = None,
) -> float:
    """Bytes one token sends over the fabric in one MoE layer: k d (b_d + b_c) (n-1)/n.

    Dispatch (its d-vector to each of k experts, b_d bytes an element) and combine (k results
    back, b_c = ``bytes_per_element``), with experts spread uniformly over ``n_devices`` so a
    fraction (n-1)/n is remote; b_d defaults to b_c. GShard (Lepikhin et al. 2021,
    arXiv:2006.16668); shared experts stay local. DeepSeek-V3 dispatches in FP8 and combines in
    BF16 (arXiv:2412.19437, sec. 3.3).

    >>> from llmphys import specs
    >>> round(all_to_all_bytes_per_token(specs.model("deepseek_v3"), n_devices=8,
    ...                                  dispatch_bytes_per_element=1.0))  # bytes
    150528
    """
    if model.moe is None:
        raise ValueError(f"model {model.key!r} has no MoE layers (model.moe is None)")
    if not n_devices >= 1:
        raise ValueError(f"n_devices must be >= 1, got {n_devices!r}")
    b = units.check_positive("bytes_per_element", bytes_per_element)
    b_d = b if dispatch_bytes_per_element is None else dispatch_bytes_per_element
    units.check_positive("dispatch_bytes_per_element", b_d)
    remote = (n_devices - 1) / n_devices
    return model.moe.n_experts_per_token * model.d_model * (b_d + b) * remote


def expert_flop_per_token(model: Model) -> float:
    """Routed-expert FLOP of one token in one MoE layer: 2 x k x (weights of one expert)."""
    if model.moe is None:
        raise ValueError(f"model {model.key!r} has no MoE layers (model.moe is None)")
    return 2.0 * model.moe.n_experts_per_token * accounting.mlp_params(model, model.moe.d_ff_expert)


def moe_layer_times_s(
    model: Model,
    acc: Accelerator,
    *,
    n_tokens: float,
    n_devices: int,
    fabric: str = "scale_up",
    bytes_per_element: float = 2.0,
    compute_efficiency: float = 1.0,
) -> dict[str, float]:
    """Seconds per MoE layer on one device: routed-expert compute vs its all-to-all.

    ``n_tokens`` tokens originate on each device; compute at ``compute_efficiency`` times
    the dense BF16 peak (1.0: the peak itself, a lower bound on the compute time), traffic
    at the per-direction bandwidth of ``fabric`` (scale_up or scale_out). Every remote
    expert is reached over that one fabric; :func:`expert_parallel_times_s` splits the
    traffic between the two fabrics and models node-limited routing.

    >>> from llmphys import specs
    >>> t = moe_layer_times_s(specs.model("deepseek_v3"), specs.accelerator("h100_sxm"),
    ...                       n_tokens=4096, n_devices=64, fabric="scale_out")
    >>> round(t["all_to_all_s"] / t["compute_s"], 1)
    6.3
    """
    units.check_positive("n_tokens", n_tokens)
    eff = units.check_fraction("compute_efficiency", compute_efficiency)
    links = {
        "scale_up": acc.scale_up_bytes_per_s_per_direction,
        "scale_out": acc.scale_out_bytes_per_s_per_direction,
    }
    if fabric not in links:
        raise ValueError(f"fabric must be 'scale_up' or 'scale_out', got {fabric!r}")
    # each device holds 2 k d b bytes a token for all devices (dispatch and combine); the one
    # all-to-all formula sends (n - 1)/n of them (all_to_all_bytes_per_token's remote share)
    if model.moe is None:
        raise ValueError(f"model {model.key!r} has no MoE layers (model.moe is None)")
    b = units.check_positive("bytes_per_element", bytes_per_element)
    held = n_tokens * 2.0 * model.moe.n_experts_per_token * model.d_model * b
    return {
        "compute_s": n_tokens * expert_flop_per_token(model) / (eff * acc.peak_bf16_flop_per_s),
        "all_to_all_s": comms.all_to_all_time_s(held, n_devices, link_bytes_per_s=links[fabric]),
    }


def expert_parallel_times_s(
    model: Model,
    acc: Accelerator,
    *,
    n_tokens: float,
    n_devices: int,
    max_nodes_per_token: int | None = None,
    compute_efficiency: float = 1.0,
    dispatch_bytes_per_element: float = 2.0,
    combine_bytes_per_element: float = 2.0,
    training: bool = False,
) -> dict[str, float]:
    """Seconds per MoE layer on one device with experts over nodes of ``acc.scale_up_domain_size``.

    Each token sends its d-vector out (dispatch, b_d bytes per element) and gets one back
    (combine, b_c). Unrestricted routing: each of its k experts sits on a uniformly random
    device, so a share (n - g)/n of the copies crosses the network and (g - 1)/n stays on
    the scale-up fabric (g devices per node). Node-limited routing (DeepSeek-V3, arXiv:
    2412.19437, sec. 2.1.2 and 3.2.2: at most M = 4 nodes per token): one copy crosses the
    network per remote target node, M (N - 1)/N of them over N nodes, and is forwarded to
    the experts inside the node over the scale-up fabric (k (g - 1)/g copies), the combine
    being summed inside the node before it crosses back. Both fabrics run at once, so the
    all-to-all takes the slower of the two. Compute runs at ``compute_efficiency`` times
    the dense BF16 peak. ``training=True`` counts a forward and a backward pass: three times
    the forward arithmetic, and the two all-to-alls repeated for the gradients (twice the
    traffic), so every ratio to compute falls by 2/3.

    >>> from llmphys import specs
    >>> t = expert_parallel_times_s(specs.model("deepseek_v3"), specs.accelerator("h100_sxm"),
    ...                             n_tokens=4096, n_devices=64, max_nodes_per_token=4,
    ...                             dispatch_bytes_per_element=1.0)
    >>> round(t["scale_out_s"] / t["compute_s"], 2)  # FP8 dispatch, BF16 combine, 4 of 8 nodes
    2.11
    """
    if model.moe is None:
        raise ValueError(f"model {model.key!r} has no MoE layers (model.moe is None)")
    units.check_positive("n_tokens", n_tokens)
    units.check_positive("n_devices", n_devices)
    eff = units.check_fraction("compute_efficiency", compute_efficiency)
    b = units.check_positive(
        "dispatch_bytes_per_element", dispatch_bytes_per_element
    ) + units.check_positive("combine_bytes_per_element", combine_bytes_per_element)
    g = min(acc.scale_up_domain_size, n_devices)
    n_nodes = -(-n_devices // g)
    k, d = model.moe.n_experts_per_token, model.d_model
    if max_nodes_per_token is None:
        out_copies, up_copies = k * (n_devices - g) / n_devices, k * (g - 1) / n_devices
    else:
        if not max_nodes_per_token >= 1:
            raise ValueError(f"max_nodes_per_token must be at least 1, got {max_nodes_per_token!r}")
        m = min(max_nodes_per_token, n_nodes)
        out_copies, up_copies = m * (n_nodes - 1) / n_nodes, k * (g - 1) / g
    passes, traffic = (3.0, 2.0) if training else (1.0, 1.0)
    compute = passes * n_tokens * expert_flop_per_token(model) / (eff * acc.peak_bf16_flop_per_s)
    scale_out = traffic * n_tokens * out_copies * d * b / acc.scale_out_bytes_per_s_per_direction
    scale_up = traffic * n_tokens * up_copies * d * b / acc.scale_up_bytes_per_s_per_direction
    return {
        "compute_s": compute,
        "scale_up_s": scale_up,
        "scale_out_s": scale_out,
        "all_to_all_s": max(scale_up, scale_out),
    }


def all_to_all_over_compute(
    model: Model, acc: Accelerator, *, n_tokens: float, n_devices: int, fabric: str
) -> float:
    """An MoE layer's all-to-all time over its expert compute time (:func:`moe_layer_times_s`).

    >>> from llmphys import specs
    >>> all_to_all_over_compute(specs.model("deepseek_v3"), specs.accelerator("h100_sxm"),
    ...                         n_tokens=4096, n_devices=64, fabric="scale_out") > 1
    True
    """
    t = moe_layer_times_s(model, acc, n_tokens=n_tokens, n_devices=n_devices, fabric=fabric)
    return t["all_to_all_s"] / t["compute_s"]


def remote_nodes_per_token(n_experts: int, top_k: int, n_nodes: int) -> float:
    """Expected number of other nodes a token's top-k experts land on, experts spread evenly
    over ``n_nodes`` and routed uniformly: (n - 1) (1 - C(E - E/n, k) / C(E, k)).

    DeepEP sends a token once per node it reaches (DeepSeek-AI 2024, arXiv:2412.19437, sec.
    3.2.2: tokens go 'via IB to the GPUs with the same in-node index on their target nodes' and
    are then forwarded 'via NVLink'). Qwen3-235B's 8 of 128 experts over 4 nodes:

    >>> round(remote_nodes_per_token(128, 8, 4), 2)
    2.72
    """
    if n_nodes < 1 or not 0 < top_k <= n_experts:
        raise ValueError(f"need n_nodes >= 1 and 0 < top_k <= n_experts, got {n_nodes}, {top_k}")
    miss = math.comb(n_experts - n_experts // n_nodes, top_k) / math.comb(n_experts, top_k)
    return (n_nodes - 1) * (1.0 - miss)
