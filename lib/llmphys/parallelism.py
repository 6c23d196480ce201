"""Memory per GPU and traffic per step under data, ZeRO, tensor, pipeline and expert parallelism.

Model state. Mixed-precision Adam keeps 2 + 2 + K bytes per parameter (BF16 weight and
gradient, K = 12 bytes of FP32 master weight and moments). ZeRO (Rajbhandari et al. 2020,
arXiv:1910.02054, fig. 1) shards across N_d data-parallel ranks

    stage 0: (2 + 2 + K) psi      stage 1: (2 + 2) psi + K psi / N_d
    stage 2: 2 psi + (2 + K) psi / N_d      stage 3: (2 + 2 + K) psi / N_d

Tensor (Shoeybi et al. 2019, arXiv:1909.08053) and pipeline parallelism divide psi by t and p.

Activations. A GPT layer stores s b h (34 + 5 a s / h) bytes in 16-bit training
(Korthikanti et al. 2022, arXiv:2205.05198); the same tensor-by-tensor count with
grouped KV heads, a gated (SwiGLU) MLP of width f and no dropout, as in Llama, gives
s b (12 h + 4 h_kv + 6 f + 2 a s). Tensor parallelism with sequence parallelism divides
it by t; "selective" recomputation drops the attention-matrix term; full recomputation
keeps only the layer input, 2 s b h bytes.

Pipeline bubble. With p stages and m micro-batches (GPipe, Huang et al. 2019,
arXiv:1811.06965) the idle fraction is (p - 1) / (m + p - 1); interleaving v model chunks
per stage (Narayanan et al. 2021, arXiv:2104.04473) gives (p - 1) / (v m + p - 1).

Home: chapters/04_memory_wall.ipynb.
"""

from __future__ import annotations

from . import units
from .training import training_state_bytes_per_param

RECOMPUTE = ("none", "selective", "full")


def zero_bytes_per_param(stage: int, n_dp: int, *, state: dict[str, float] | None = None) -> float:
    """Model-state bytes per parameter held by one GPU under ZeRO ``stage`` on ``n_dp`` ranks.

    ``state`` is the per-parameter breakdown of ``training.training_state_bytes_per_param``
    (default: BF16 weights and gradients, FP32 master weights and Adam moments, 16 bytes).

    >>> [round(zero_bytes_per_param(s, 64) * 7.5e9 / 1e9, 2) for s in range(4)]  # ZeRO fig. 1
    [120.0, 31.41, 16.64, 1.88]
    """
    if stage not in (0, 1, 2, 3):
        raise ValueError(f"stage must be 0, 1, 2 or 3, got {stage!r}")
    units.check_positive("n_dp", n_dp)
    s = training_state_bytes_per_param() if state is None else state
    w, g = s["weights"], s["gradients"]
    k = s["master_weights"] + s["optimizer_states"]
    return {0: w + g + k, 1: w + g + k / n_dp, 2: w + (g + k) / n_dp, 3: (w + g + k) / n_dp}[stage]


def model_state_bytes_per_gpu(
    n_params: float, *, tp: int = 1, pp: int = 1, dp: int = 1, zero_stage: int = 0
) -> float:
    """Bytes of weights, gradients and optimizer state on one GPU: psi / (t p) x ZeRO bytes.

    >>> round(model_state_bytes_per_gpu(405e9, tp=8, pp=16, dp=128, zero_stage=1) / 1e9, 1)
    13.0
    """
    units.check_positive("n_params", n_params)
    for name, v in (("tp", tp), ("pp", pp)):
        units.check_positive(name, v)
    return n_params / (tp * pp) * zero_bytes_per_param(zero_stage, dp)


def activation_bytes_per_layer(
    *,
    seq_len: int,
    micro_batch: int,
    d_model: int,
    n_heads: int,
    tp: int = 1,
    sequence_parallel: bool = True,
    recompute: str = "none",
    n_kv_heads: int | None = None,
    d_ff: int | None = None,
    gated_mlp: bool = False,
    dropout: bool = True,
) -> float:
    """Bytes of activations one transformer layer keeps for its backward pass (16-bit).

    Korthikanti et al. 2022 (arXiv:2205.05198, sec. 4.1) count, per token of a GPT layer
    (MHA, a 4h GELU MLP, dropout), s b h (34 + 5 a s / h) bytes. Counted tensor by tensor
    (2 bytes per value, 1 per dropout-mask entry), with h_kv = n_kv_heads h / a the K and V
    width and f the MLP width:

    * kept whole by every TP rank without sequence parallelism (norm inputs 4h, QKV and
      MLP inputs 2h + 2h, two dropout masks h + h): 8h + 2h [dropout];
    * split by t (Q 2h, K and V 2h_kv each, output-projection input 2h; the MLP's
      activation input and down-projection input 2f + 2f, plus the up-projection output
      2f when gated, as in SwiGLU): 4h + 4h_kv + (4 or 6) f;
    * the attention matrix, a s per token: softmax output 2, and with dropout its mask 1
      and the dropped-out copy 2, so (2 + 3 [dropout]) a s.

    GPT-3 (the defaults: h_kv = h, f = 4h, no gate, dropout) gives 34 and 5 a s / h. With
    sequence parallelism everything is divided by t. "selective" recomputation drops the
    attention-matrix term; "full" keeps only the layer input, 2 s b h (/ t with SP).

    >>> round(activation_bytes_per_layer(seq_len=2048, micro_batch=1, d_model=12288,
    ...                                  n_heads=96) / 2**30, 2)  # GiB, GPT-3 175B layer
    2.67
    >>> # Llama 3 405B
    >>> round(activation_bytes_per_layer(seq_len=8192, micro_batch=1, d_model=16384, n_heads=128,
    ...       tp=8, n_kv_heads=8, d_ff=53248, gated_mlp=True, dropout=False) / 1e9, 2)
    2.68
    """
    s, b, h, a = seq_len, micro_batch, d_model, n_heads
    kv = a if n_kv_heads is None else n_kv_heads
    f = 4 * h if d_ff is None else d_ff
    for name, v in (
        ("seq_len", s),
        ("micro_batch", b),
        ("d_model", h),
        ("n_heads", a),
        ("tp", tp),
        ("n_kv_heads", kv),
        ("d_ff", f),
    ):
        units.check_positive(name, v)
    if a % kv:
        raise ValueError(f"n_kv_heads={kv} must divide n_heads={a}")
    if recompute not in RECOMPUTE:
        raise ValueError(f"recompute={recompute!r} is not known; allowed: {', '.join(RECOMPUTE)}")
    if recompute == "full":
        return 2.0 * s * b * h / (tp if sequence_parallel else 1)
    replicated = 8.0 * h + (2.0 * h if dropout else 0.0)  # bytes per token
    split = 4.0 * h + 4.0 * h * kv / a + (6.0 if gated_mlp else 4.0) * f
    scores = 0.0 if recompute == "selective" else (5.0 if dropout else 2.0) * a * s
    per_token = (
        (replicated + split + scores) / tp
        if sequence_parallel
        else (replicated + (split + scores) / tp)
    )
    return s * b * per_token


def pipeline_bubble_fraction(n_stages: int, n_microbatches: int, *, n_chunks: int = 1) -> float:
    """Fraction of a pipelined step the GPUs sit idle: (p - 1) / (v m + p - 1).

    GPipe (Huang et al. 2019) for v = 1; interleaved 1F1B (Narayanan et al. 2021) for v > 1.

    >>> round(pipeline_bubble_fraction(16, 64), 3), round(
    ...     pipeline_bubble_fraction(16, 64, n_chunks=4), 3)
    (0.19, 0.055)
    """
    for name, v in (
        ("n_stages", n_stages),
        ("n_microbatches", n_microbatches),
        ("n_chunks", n_chunks),
    ):
        units.check_positive(name, v)
    p, m, v = n_stages, n_microbatches, n_chunks
    return (p - 1) / (v * m + p - 1)


def tp_bytes_per_layer(
    *, tokens: float, d_model: int, tp: int, bytes_per_element: float = 2.0
) -> float:
    """Bytes one GPU sends per layer for a micro-batch of ``tokens`` under tensor parallelism.

    Megatron's layer does two all-reduces of the (tokens x d) activation forward and two
    backward (Shoeybi et al. 2019); a ring all-reduce sends 2(t-1)/t of the buffer.

    >>> round(tp_bytes_per_layer(tokens=8192, d_model=16384, tp=8) / 1e9, 2)
    1.88
    """
    units.check_positive("tokens", tokens)
    units.check_positive("tp", tp)
    buffer = tokens * d_model * bytes_per_element
    return 4 * 2 * (tp - 1) / tp * buffer


def ep_bytes_per_layer(
    *, tokens: float, d_model: int, ep: int, top_k: int, bytes_per_element: float = 2.0
) -> float:
    """Bytes one GPU sends per MoE layer for ``tokens`` of its own under expert parallelism.

    Dispatch and combine are one all-to-all each, forward and backward (4 in all); each token
    goes to ``top_k`` experts, of which a fraction (e-1)/e live on other GPUs.

    >>> round(ep_bytes_per_layer(tokens=4096, d_model=7168, ep=64, top_k=8) / 1e9, 2)
    1.85
    """
    units.check_positive("tokens", tokens)
    units.check_positive("ep", ep)
    units.check_positive("top_k", top_k)
    return 4 * top_k * tokens * d_model * bytes_per_element * (ep - 1) / ep


# ------------------------------------------------------------------ pipeline schedules
# Bubble and activation memory of the schedules in use, in one unit: a forward pass of one
# micro-batch through one stage is F = 1, its backward B + W = 2 (input gradient B = 1, weight
# gradient W = 1). Sources: GPipe (Huang et al. 2019, arXiv:1811.06965); 1F1B (Narayanan et
# al. 2021, arXiv:2104.04473, sec. 2.2); interleaved 1F1B and its memory factor 1 + (p-1)/(p v)
# (Korthikanti et al. 2022, arXiv:2205.05198, sec. 4.2.3); zero-bubble ZB-H1 (Qi et al. 2023,
# arXiv:2401.10241, sec. 3.1); DualPipe (DeepSeek-AI 2024, arXiv:2412.19437, table 2).
SCHEDULES = ("gpipe", "1f1b", "interleaved", "zero_bubble", "dualpipe")


def pipeline_schedule(
    schedule: str, *, n_stages: int, n_microbatches: int, n_chunks: int = 1
) -> dict[str, float]:
    """Bubble fraction, micro-batches of activations held by the first stage, and weight copies.

    Idle time per step, in units of one micro-batch's forward through one stage. As in
    DeepSeek-V3's table 2, B is the full backward (2 units: input and weight gradients) and W
    its weight-gradient half (1 unit): GPipe and 1F1B (p-1)(F+B); interleaved (p-1)(F+B)/v;
    ZB-H1 (p-1)(F+B-2W) = p-1; DualPipe (p/2-1)(F&B+B-3W) with F&B = F+B, so 2(p/2-1) = p-2.
    The fraction is idle / (3 m + idle).
    Memory: GPipe keeps all m micro-batches, 1F1B and ZB-H1 p, interleaved p(1+(p-1)/(p v)),
    DualPipe p+1 with two copies of the weights.

    >>> s = pipeline_schedule("interleaved", n_stages=16, n_microbatches=16, n_chunks=4)
    >>> round(s["bubble_fraction"], 3), round(s["activation_microbatches"], 2)
    (0.19, 19.75)
    >>> zb = pipeline_schedule("zero_bubble", n_stages=16, n_microbatches=16)
    >>> round(zb["bubble_fraction"], 3)
    0.238
    """
    if schedule not in SCHEDULES:
        raise ValueError(f"schedule={schedule!r} is not known; allowed: {', '.join(SCHEDULES)}")
    for name, v in (
        ("n_stages", n_stages),
        ("n_microbatches", n_microbatches),
        ("n_chunks", n_chunks),
    ):
        if int(v) != v or v < 1:
            raise ValueError(f"{name} must be a positive integer, got {v!r}")
    p, m, v = n_stages, n_microbatches, n_chunks
    if schedule != "interleaved" and v != 1:
        raise ValueError(f"n_chunks={v} needs schedule='interleaved'; {schedule} has one chunk")
    if schedule == "dualpipe" and p % 2:
        raise ValueError(f"dualpipe needs an even n_stages, got {p}")
    idle = {
        "gpipe": 3.0 * (p - 1),
        "1f1b": 3.0 * (p - 1),
        "interleaved": 3.0 * (p - 1) / v,
        "zero_bubble": 1.0 * (p - 1),
        # (p/2-1)(F&B + B - 3W) with B the FULL backward (2 units) and F&B = F + B = 3
        # (DeepSeek-AI 2024, arXiv:2412.19437, table 2 and its caption): p - 2 units
        "dualpipe": 2.0 * (p / 2 - 1),
    }[schedule]
    held = {
        "gpipe": float(m),
        "1f1b": float(min(m, p)),
        "zero_bubble": float(min(m, p)),
        "interleaved": min(m, p) * (1 + (p - 1) / (p * v)),
        "dualpipe": float(p + 1),
    }[schedule]
    return {
        "bubble_fraction": idle / (3.0 * m + idle) if p > 1 else 0.0,
        "activation_microbatches": held if p > 1 else 1.0,
        "weight_copies": 2.0 if schedule == "dualpipe" and p > 1 else 1.0,
    }


def tokens_per_chip(global_batch_tokens: float, *, n_chips: int) -> float:
    """Tokens each chip's share of the batch holds: B / N (the feasibility limit of a batch).

    Pure data parallelism needs at least one sequence per chip; 4M tokens over 16,384 GPUs
    leaves 244 tokens each, less than one 2,048- or 8,192-token sequence.

    >>> round(tokens_per_chip(4e6, n_chips=16_384))
    244
    """
    units.check_positive("global_batch_tokens", global_batch_tokens)
    units.check_positive("n_chips", n_chips)
    return global_batch_tokens / n_chips
