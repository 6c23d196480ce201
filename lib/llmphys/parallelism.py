"""Memory per GPU and traffic per step under data, ZeRO, tensor, pipeline and expert parallelism.

Model state. Mixed-precision Adam keeps 2 + 2 + K bytes per parameter (BF16 weight and
gradient, K = 12 bytes of FP32 master weight and moments). ZeRO (Rajbhandari et al. 2020,
arXiv:1910.02054, fig. 1) shards across N_d data-parallel ranks

    stage 0: (2 + 2 + K) psi      stage 1: (2 + 2) psi + K psi / N_d
    stage 2: 2 psi + (2 + K) psi / N_d      stage 3: (2 + 2 + K) psi / N_d

Tensor (Shoeybi et al. 2019, arXiv:1909.08053) and pipeline parallelism divide psi by t and p.

Activations. A transformer layer stores s b h (34 + 5 a s / h) bytes in 16-bit training
(Korthikanti et al. 2022, arXiv:2205.05198); tensor parallelism with sequence
parallelism divides it by t; "selective" recomputation drops the 5as/h attention term;
full recomputation keeps only the layer input, 2 s b h bytes.

Pipeline bubble. With p stages and m micro-batches (GPipe, Huang et al. 2019,
arXiv:1811.06965) the idle fraction is (p - 1) / (m + p - 1); interleaving v model chunks
per stage (Narayanan et al. 2021, arXiv:2104.04473) gives (p - 1) / (v m + p - 1).

Home: chapters/04_memory_wall.ipynb.
"""

from __future__ import annotations

from . import units
from .training import training_state_bytes_per_param

RECOMPUTE = ("none", "selective", "full")


def zero_bytes_per_param(stage: int, n_dp: int, *,
                         state: dict[str, float] | None = None) -> float:
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
    return {0: w + g + k, 1: w + g + k / n_dp, 2: w + (g + k) / n_dp,
            3: (w + g + k) / n_dp}[stage]


def model_state_bytes_per_gpu(n_params: float, *, tp: int = 1, pp: int = 1, dp: int = 1,
                              zero_stage: int = 0) -> float:
    """Bytes of weights, gradients and optimizer state on one GPU: psi / (t p) x ZeRO bytes.

    >>> round(model_state_bytes_per_gpu(405e9, tp=8, pp=16, dp=128, zero_stage=1) / 1e9, 1)
    13.0
    """
    units.check_positive("n_params", n_params)
    for name, v in (("tp", tp), ("pp", pp)):
        units.check_positive(name, v)
    return n_params / (tp * pp) * zero_bytes_per_param(zero_stage, dp)


def activation_bytes_per_layer(*, seq_len: int, micro_batch: int, d_model: int, n_heads: int,
                               tp: int = 1, sequence_parallel: bool = True,
                               recompute: str = "none") -> float:
    """Bytes of activations one transformer layer keeps for its backward pass (16-bit).

    s b h (34 + 5 a s / h) / t with sequence parallelism; without it only 24 of the 34 are
    split by t. Korthikanti et al. 2022 (arXiv:2205.05198).

    >>> round(activation_bytes_per_layer(seq_len=2048, micro_batch=1, d_model=12288,
    ...                                  n_heads=96) / 2**30, 2)  # GiB, GPT-3 175B layer
    2.67
    """
    s, b, h, a = seq_len, micro_batch, d_model, n_heads
    for name, v in (("seq_len", s), ("micro_batch", b), ("d_model", h), ("n_heads", a),
                    ("tp", tp)):
        units.check_positive(name, v)
    if recompute not in RECOMPUTE:
        raise ValueError(f"recompute={recompute!r} is not known; allowed: {', '.join(RECOMPUTE)}")
    if recompute == "full":
        return 2.0 * s * b * h / (tp if sequence_parallel else 1)
    linear = 34.0 / tp if sequence_parallel else 10.0 + 24.0 / tp
    attention = 0.0 if recompute == "selective" else 5.0 * a * s / (h * tp)
    return s * b * h * (linear + attention)


def pipeline_bubble_fraction(n_stages: int, n_microbatches: int, *,
                             n_chunks: int = 1) -> float:
    """Fraction of a pipelined step the GPUs sit idle: (p - 1) / (v m + p - 1).

    GPipe (Huang et al. 2019) for v = 1; interleaved 1F1B (Narayanan et al. 2021) for v > 1.

    >>> round(pipeline_bubble_fraction(16, 64), 3), round(pipeline_bubble_fraction(16, 64, n_chunks=4), 3)
    (0.19, 0.055)
    """
    for name, v in (("n_stages", n_stages), ("n_microbatches", n_microbatches),
                    ("n_chunks", n_chunks)):
        units.check_positive(name, v)
    p, m, v = n_stages, n_microbatches, n_chunks
    return (p - 1) / (v * m + p - 1)


def tp_bytes_per_layer(*, tokens: float, d_model: int, tp: int,
                       bytes_per_element: float = 2.0) -> float:
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


def ep_bytes_per_layer(*, tokens: float, d_model: int, ep: int, top_k: int,
                       bytes_per_element: float = 2.0) -> float:
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


def llama405_tp_time_over_step(link: str) -> float:
    """Tensor-parallel traffic time over step compute in Llama 3 405B's layout (dimensionless).

    TP 8, PP 16, DP 128 on 16,384 H100s, 16M-token steps of 8,192-token sequences at 40% MFU
    (Dubey et al. 2024, arXiv:2407.21783, sec. 3.3); ``link`` is ``"scale_up"`` (NVLink) or
    ``"scale_out"`` (a 400 Gb/s network card).

    >>> round(llama405_tp_time_over_step("scale_out"), 2), round(llama405_tp_time_over_step("scale_up"), 3)
    (0.75, 0.084)
    """
    from . import accounting, comms, specs

    if link not in ("scale_up", "scale_out"):
        raise ValueError(f"link must be 'scale_up' or 'scale_out', got {link!r}")
    h100, m = specs.accelerator("h100_sxm"), specs.model("llama31_405b")
    tp, pp, dp, tokens = 8, 16, 128, 16 * 2**20
    per_layer = tp_bytes_per_layer(tokens=8192, d_model=m.d_model, tp=tp)
    traffic = per_layer * (m.n_layers / pp) * (tokens / 8192 / dp)
    bw = {"scale_up": h100.scale_up_bytes_per_s_per_direction,
          "scale_out": h100.scale_out_bytes_per_s_per_direction}[link]
    step = comms.dp_compute_time_s(n_gpus=tp * pp * dp, n_params=accounting.n_params(m),
                                   tokens_per_step=tokens,
                                   peak_flop_per_s=h100.peak_bf16_flop_per_s, mfu=0.4)
    return traffic / bw / step


def llama405_activation_bytes(recompute: str) -> float:
    """Activation bytes per GPU on Llama 3.1 405B's first pipeline stage.

    8,192-token sequences, micro-batch 1, TP 8, PP 16 with 1F1B: the first stage holds p = 16
    micro-batches of its L / p layers (:func:`activation_bytes_per_layer`).

    >>> llama405_activation_bytes("full") < llama405_activation_bytes("none")
    True
    """
    from . import specs

    m, pp = specs.model("llama31_405b"), 16
    per_layer = activation_bytes_per_layer(seq_len=8192, micro_batch=1, d_model=m.d_model,
                                           n_heads=m.n_heads, tp=8, recompute=recompute)
    return per_layer * (m.n_layers / pp) * pp
