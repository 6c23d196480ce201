"""Predicted step time and MFU of a training layout, built from the book's own pieces.

One step of a (TP, PP, CP, DP/FSDP, EP)-parallel run on n chips is timed as a sum of
seconds on one chip's critical path:

    compute        hardware FLOP of this chip's share / (P x GEMM_EFFICIENCY)
    tp_collectives Megatron's 4 all-reduces per layer forward+backward (6 with full
                   recomputation) of the s b h activation over the scale-up link
    pipeline_p2p   the activation sent to the next stage and its gradient back
    pipeline_bubble the schedule's idle fraction f of the busy time: f/(1-f) x busy
    dp_fsdp        gradient reduce-scatter / all-reduce and ZeRO-3 weight gathers, less
                   the compute they can hide behind
    cp_attention   context parallelism's K/V exchange, less the attention it hides behind
    ep_all_to_all  expert dispatch and combine
    optimizer      Adam's memory-bound update of this chip's shard of the state

with collectives from ``comms`` (alpha-beta rings), memory, bubble and traffic from
``parallelism``, FLOP from ``accounting`` and ``mfu``. MFU follows PaLM (Chowdhery et al.
2022, arXiv:2204.02311, app. B): (6 N + 12 L H Q T) per token, no recomputation, over
chips x dense peak at ``dtype`` x step time. HFU adds the recomputed forward pass, counted
the same way. The time model itself charges the FLOP the chip executes: causal attention
(half of PaLM's full-T count, as fused kernels skip the masked half) plus recomputation.

The efficiency constants below are the whole of the model's empirical content, one set for
every chip and run; ``GEMM_EFFICIENCY`` is fitted on a named calibration subset of
``data/training_runs.toml`` (``CALIBRATION_RUNS``) and every other run is a prediction.

Home: chapters/04_memory_wall.ipynb, section "Does the model predict real runs?".
"""

from __future__ import annotations

import dataclasses
import functools
import math
import statistics
import tomllib
from typing import Any

from .. import accounting, comms, mfu, parallelism, specs, units
from ..specs import Accelerator, Model

# ---------------------------------------------------------------- efficiency constants
GEMM_EFFICIENCY = 0.68
"""Fraction of the dense peak a training step's matmuls sustain end to end. Fitted (one
number, least squares in log MFU) on CALIBRATION_RUNS only; see ``calibrate_gemm_efficiency``.
It has to sit above the best end-to-end HFU, Megatron's 57% (Korthikanti et al. 2022,
arXiv:2205.05198, table 5), since the other terms of the step take the rest."""

COLLECTIVE_EFFICIENCY = 0.8
"""Bus bandwidth NCCL's ring collectives reach, as a fraction of the link's per-direction
rate: nccl-tests all_reduce_perf gives 230-250 GB/s busbw on 8 A100 SXM4 (NVLink 3, 300 GB/s
per direction), 0.77-0.83 (nccl-tests' busbw definition: NVIDIA/nccl-tests
doc/PERFORMANCE.md; figures from docs.alayanew.com 'NCCL-tests in practice', 2026)."""

LINK_LATENCY_S = 10e-6
"""Per-hop latency alpha of a collective over the scale-out network; Llama 3's network has
'latency up to tens of microseconds' on its multi-hop paths (Dubey et al. 2024, sec. 3.3.3)."""

SCALE_UP_LATENCY_S = 3e-6
"""Per-hop latency inside a scale-up domain (NVLink/NVSwitch, ICI): a few microseconds."""

CALIBRATION_RUNS = ("korthikanti_22b", "korthikanti_175b", "korthikanti_530b", "korthikanti_1t")
"""The runs GEMM_EFFICIENCY is fitted on: Korthikanti et al.'s data-parallel-free benchmarks,
which isolate compute, tensor and pipeline terms. Every other run is held out."""

ADAM_BYTES_PER_PARAM = 32.0
"""Bytes the fused Adam update reads and writes per parameter it owns: FP32 master weight,
two moments and the gradient read (16 B) and the first three plus a BF16 copy written
(14 B), rounded up (Rajbhandari et al. 2020, sec. 3.1 for the state)."""

ATTENTION_EFFICIENCY = 0.5
"""Fraction of the dense peak a fused (flash) attention kernel sustains, forward and backward
together: FlashAttention-2 reaches 50-73% of the A100's peak forward and less backward (Dao
2023, arXiv:2307.08691, abstract and sec. 4.1); the low end is taken. Unfused attention
(materialised scores) runs as batched GEMMs at GEMM_EFFICIENCY plus its softmax traffic."""

HIERARCHICAL_DP_VENDORS = ("Google",)
"""Vendors whose software reduces gradients hierarchically across scale-up domains. PaLM's
cross-pod step sends each pod's reduced shard over the data-centre network (Chowdhery et al.
2022, sec. 4); NCCL's multi-node rings instead run at the per-GPU NIC rate (nccl-tests'
inter-node all_reduce busbw is the NIC bandwidth), so GPU groups are one flat ring."""

BACKWARD_SHARE = 2.0 / 3.0
"""Share of a micro-batch's compute in its backward pass (4 of 6 FLOP per weight): the
window in which bucketed gradient reduction (DDP, ZeRO, FSDP) overlaps computation. Only the
last micro-batch's backward can hide it: earlier ones have not finished the gradients."""

ELEMENTWISE_BYTES_PER_H = {"gelu": 38.0, "swiglu": 38.0, "geglu": 38.0}
"""HBM bytes per token, per layer and per unit of d_model that a forward pass's memory-bound
kernels move besides the matmuls, counted kernel by kernel for Megatron's fused layer
(Narayanan et al. 2021, sec. 4.2): two LayerNorms (read 2, write 2 each), two
bias-dropout-adds (read 4, write 2, mask 1 each) and the 4h bias-GeLU (read 8, write 8). The
MLP activation is rescaled to the model's d_ff/d_model (SwiGLU reads two inputs: 6 d_ff).
The backward pass moves twice the forward's bytes."""

SOFTMAX_BYTES_PER_SCORE = 9.0
"""HBM bytes per attention score a forward pass moves when the score matrix is materialised
(no fused flash kernel): Megatron's fused scale-mask-softmax reads and writes 2 bytes each,
dropout reads 2, writes 2 and a 1-byte mask (Narayanan et al. 2021, sec. 4.2). Flash
attention (Dao et al. 2022, arXiv:2205.14135) keeps scores on chip: 0."""


@dataclasses.dataclass(frozen=True, kw_only=True)
class TrainStep:
    """One predicted training step: its time, utilisation, memory and time budget."""

    step_time_s: float
    mfu: float  # PaLM's model FLOP over chips x dense peak x step time
    hfu: float  # FLOP the chips execute (recomputation included) over the same
    tokens_per_s: float
    memory_per_chip_bytes: float
    hbm_bytes: float
    dp: int
    n_microbatches: int
    parts: dict[str, float]  # seconds on one chip's critical path, summing to step_time_s
    memory_parts: dict[str, float]  # bytes per chip by kind, summing to memory_per_chip_bytes

    @property
    def fits(self) -> bool:
        """Whether the layout's memory fits in one chip's HBM."""
        return self.memory_per_chip_bytes <= self.hbm_bytes


class LayoutDoesNotFit(ValueError):
    """A layout whose per-chip memory exceeds the chip's HBM; the message gives the bytes."""


def _model(value: Model | str) -> Model:
    if isinstance(value, str):
        return specs.model_spec(value)
    if not isinstance(value, Model):
        raise TypeError(f"model must be a Model or a registry key, got {type(value).__name__}")
    return value


def _accelerator(value: Accelerator | str) -> Accelerator:
    if isinstance(value, str):
        return specs.accelerator(value)
    if not isinstance(value, Accelerator):
        raise TypeError(
            f"accelerator must be an Accelerator or a registry key, got {type(value).__name__}"
        )
    return value


def model_flop_per_token(model: Model, *, seq_len: int) -> float:
    """PaLM's training FLOP per token: 6 N + 12 L H Q T, N the active parameters.

    >>> round(model_flop_per_token(specs.model_spec("palm_540b"), seq_len=2048) / 1e12, 3)
    3.278
    """
    return mfu.palm_flop_per_token(
        accounting.n_active_params(model),
        n_layers=model.n_layers,
        n_heads=model.n_heads,
        d_head=model.d_head,
        seq_len=seq_len,
    )


def _layout(
    n_chips: int,
    tp: int,
    pp: int,
    cp: int,
    ep: int,
    seq_len: int,
    global_batch_tokens: float,
    micro_batch_size: int,
    interleave: int,
    model: Model,
) -> tuple[int, int]:
    for name, v in (
        ("n_chips", n_chips),
        ("tp", tp),
        ("pp", pp),
        ("cp", cp),
        ("ep", ep),
        ("seq_len", seq_len),
        ("micro_batch_size", micro_batch_size),
        ("interleave", interleave),
    ):
        if isinstance(v, bool) or int(v) != v or v < 1:
            raise ValueError(f"{name} must be a positive integer, got {v!r}")
    if n_chips % (tp * pp * cp):
        raise ValueError(
            f"n_chips={n_chips} is not divisible by tp*pp*cp = {tp}*{pp}*{cp} "
            f"= {tp * pp * cp}; the data-parallel degree must be an integer"
        )
    dp = n_chips // (tp * pp * cp)
    if dp % ep:
        raise ValueError(
            f"ep={ep} must divide the data-parallel degree {dp} "
            f"(= n_chips / (tp*pp*cp)); experts shard inside it"
        )
    if ep > 1 and model.moe is None:
        raise ValueError(f"ep={ep} needs a mixture-of-experts model; {model.key} is dense")
    if seq_len % cp:
        raise ValueError(f"seq_len={seq_len} is not divisible by cp={cp}")
    n_seqs = global_batch_tokens / seq_len
    if n_seqs != int(n_seqs):
        raise ValueError(
            f"global_batch_tokens={global_batch_tokens:g} is not a whole number "
            f"of {seq_len}-token sequences"
        )
    per_rank = int(n_seqs) / dp
    if per_rank < 1:
        raise ValueError(
            f"global_batch_tokens={global_batch_tokens:g} over dp={dp} replicas is "
            f"{global_batch_tokens / dp:g} tokens each, less than one "
            f"{seq_len}-token sequence: the batch cannot feed this many replicas"
        )
    if per_rank != int(per_rank) or int(per_rank) % micro_batch_size:
        raise ValueError(
            f"{int(n_seqs)} sequences over dp={dp} ranks in micro-batches of "
            f"{micro_batch_size} do not divide: each rank needs a whole number "
            f"of micro-batches"
        )
    if model.n_layers + 2 < pp * interleave:  # the embedding and the head may be chunks
        raise ValueError(
            f"pp*interleave = {pp}*{interleave} exceeds the model's "
            f"{model.n_layers} layers plus embedding and head"
        )
    return dp, int(per_rank) // micro_batch_size


def train_step(
    model: Model | str,
    accelerator: Accelerator | str,
    *,
    n_chips: int,
    tp: int = 1,
    pp: int = 1,
    cp: int = 1,
    ep: int = 1,
    seq_len: int,
    global_batch_tokens: float,
    micro_batch_size: int = 1,
    interleave: int = 1,
    recompute: str = "none",
    zero_stage: int = 1,
    dtype: str = "bf16",
    schedule: str | None = None,
    grad_bytes: float = 2.0,
    fsdp_weight_gathers: int = 2,
    flash_attention: bool = True,
    check_memory: bool = True,
) -> TrainStep:
    """Predicted time (s), MFU and memory of one training step of ``model`` on ``n_chips``.

    DP = n_chips / (tp pp cp); each DP rank runs m = B / (s dp b) micro-batches. ``schedule``
    defaults to "interleaved" when interleave > 1, else "1f1b" (see
    ``parallelism.pipeline_schedule``). ``grad_bytes`` is the width of the gradients the
    data-parallel group reduces (Llama 3: FP32, 4); ``fsdp_weight_gathers`` how often ZeRO-3
    gathers the weights per step (Llama 3 keeps them through the backward pass: 1). Raises
    ``LayoutDoesNotFit`` with the bytes when the layout overflows HBM (``check_memory=False``
    times it anyway). Terms and constants: module docstring.

    >>> s = train_step("llama31_405b", "h100_sxm", n_chips=16_384, tp=8, pp=16, seq_len=8192,
    ...                global_batch_tokens=16 * 2**20, interleave=8, zero_stage=3,
    ...                grad_bytes=4.0, fsdp_weight_gathers=1, check_memory=False)
    >>> s.dp, s.n_microbatches, round(s.mfu, 2), round(s.memory_per_chip_bytes / 1e9)
    (128, 16, 0.47, 87)
    """
    mdl, acc = _model(model), _accelerator(accelerator)
    if recompute not in parallelism.RECOMPUTE:
        raise ValueError(
            f"recompute={recompute!r} is not known; allowed: {', '.join(parallelism.RECOMPUTE)}"
        )
    if zero_stage not in (0, 1, 2, 3):
        raise ValueError(f"zero_stage must be 0, 1, 2 or 3, got {zero_stage!r}")
    units.check_positive("global_batch_tokens", global_batch_tokens)
    dp, m = _layout(
        n_chips, tp, pp, cp, ep, seq_len, global_batch_tokens, micro_batch_size, interleave, mdl
    )
    schedule = schedule or ("interleaved" if interleave > 1 else "1f1b")
    peak = acc.peak_flop_per_s(dtype)
    bpe = units.bytes_per_element("bf16")

    # --- FLOP: PaLM's count for MFU; what the chip executes (causal attention) for time
    n_active = accounting.n_active_params(mdl)
    attn_full = 12.0 * mdl.n_layers * mdl.n_heads * mdl.d_head * seq_len
    f_model = model_flop_per_token(mdl, seq_len=seq_len)
    extra = {
        "none": 0.0,
        "selective": attn_full / 2 / 3,
        "full": (6.0 * n_active + attn_full / 2) / 3,
    }[recompute]
    f_exec = 6.0 * n_active + attn_full / 2 + extra  # causal kernels skip the masked half
    f_hw = (
        f_model
        + {
            "none": 0.0,
            "selective": attn_full / 3,  # HFU: PaLM's count plus the
            "full": f_model / 3,
        }[recompute]
    )  # recomputed forward (full T)
    tokens_per_chip = global_batch_tokens / n_chips
    attn_exec = attn_full / 2 * (1.0 + (1.0 / 3.0 if recompute != "none" else 0.0))
    attn_eff = ATTENTION_EFFICIENCY if flash_attention else GEMM_EFFICIENCY
    compute = (
        ((f_exec - attn_exec) / GEMM_EFFICIENCY + attn_exec / attn_eff) * tokens_per_chip / peak
    )
    passes = 3.0 + (1.0 if recompute == "full" else 0.0)  # forward, backward = 2 forwards
    h = mdl.d_model
    mlp_scale = (6.0 if mdl.mlp in ("swiglu", "geglu") else 4.0) * mdl.d_ff / (16.0 * h)
    per_h = ELEMENTWISE_BYTES_PER_H[mdl.mlp] - 16.0 + 16.0 * mlp_scale
    scores = (
        0.0
        if flash_attention
        else (
            SOFTMAX_BYTES_PER_SCORE
            * mdl.n_heads
            * seq_len
            * (1.0 if recompute == "none" else 4.0 / 3.0)
        )
    )
    # each chip runs n_layers/pp layers over tp*pp*tokens_per_chip tokens, sharded tp ways
    memory_bound = (
        (passes * per_h * h + 3.0 * scores) * mdl.n_layers * tokens_per_chip / acc.hbm_bytes_per_s
    )

    # --- tensor parallelism: 4 all-reduce-equivalents per layer (6 with full recompute)
    layers_per_stage = mdl.n_layers / pp
    tokens_mb = micro_batch_size * seq_len / cp
    up_bw = acc.scale_up_bytes_per_s_per_direction * COLLECTIVE_EFFICIENCY
    out_bw = acc.scale_out_bytes_per_s_per_direction * COLLECTIVE_EFFICIENCY
    tp_s = 0.0
    if tp > 1:
        link = up_bw if tp <= acc.scale_up_domain_size else out_bw
        per_layer = parallelism.tp_bytes_per_layer(
            tokens=tokens_mb, d_model=mdl.d_model, tp=tp, bytes_per_element=bpe
        )
        if recompute == "full":
            per_layer *= 1.5
        n_coll = 8 * (1.5 if recompute == "full" else 1.0)  # reduce-scatters + all-gathers
        tp_s = m * layers_per_stage * (per_layer / link + n_coll * (tp - 1) * SCALE_UP_LATENCY_S)

    # --- context parallelism: K/V exchange, hidden behind the attention it feeds
    cp_s = 0.0
    if cp > 1:
        kv = (
            comms.ring_attention_bytes(
                seq_len=seq_len,
                micro_batch=micro_batch_size,
                n_kv_heads=mdl.n_kv_heads,
                d_head=mdl.d_head,
                cp=cp,
                bytes_per_element=bpe,
            )
            / tp
        )
        link = up_bw if tp * cp <= acc.scale_up_domain_size else out_bw
        t_kv = m * layers_per_stage * kv / link
        t_attn = attn_exec * tokens_per_chip / (peak * attn_eff)
        cp_s = max(0.0, t_kv - t_attn) + m * layers_per_stage * 3 * (cp - 1) * LINK_LATENCY_S

    # --- expert parallelism: dispatch + combine all-to-alls, exposed
    ep_s = 0.0
    if ep > 1:
        moe = mdl.moe
        assert moe is not None  # _layout refuses ep > 1 for a dense model
        n_moe = mdl.n_layers - moe.n_dense_layers
        per_layer = (
            parallelism.ep_bytes_per_layer(
                tokens=tokens_mb,
                d_model=mdl.d_model,
                ep=ep,
                top_k=moe.n_experts_per_token,
                bytes_per_element=bpe,
            )
            / tp
        )
        link = up_bw if tp * cp * ep <= acc.scale_up_domain_size else out_bw
        ep_s = m * (n_moe / pp) * (per_layer / link + 4 * (ep - 1) * LINK_LATENCY_S)

    # --- pipeline: point-to-point sends, then the schedule's bubble over the busy time
    p2p_s = 0.0
    if pp > 1:
        act = tokens_mb * mdl.d_model * bpe / tp  # scatter/gather: each TP rank sends 1/t
        p2p_s = m * interleave * 2 * (act / out_bw + LINK_LATENCY_S)
    sched = parallelism.pipeline_schedule(
        schedule, n_stages=pp, n_microbatches=m, n_chunks=interleave
    )
    busy = compute + memory_bound + tp_s + cp_s + ep_s + p2p_s
    f = sched["bubble_fraction"]
    bubble_s = f / (1.0 - f) * busy

    # --- data parallelism / ZeRO / FSDP: the gradient (and weight) traffic of this chip's
    # shard, hidden behind the compute it runs beside: the last micro-batch for a gradient
    # reduce after accumulation, the whole step for ZeRO-3's per-layer prefetch
    n_local = accounting.n_params(mdl) / (tp * pp)
    dp_s = 0.0
    if dp > 1:
        per_param = comms.zero_dp_bytes_per_param(
            zero_stage,
            grad_bytes=grad_bytes,
            weight_bytes=bpe,
            n_weight_gathers=fsdp_weight_gathers,
        )
        # NCCL: one ring over the group, on NVLink inside a scale-up domain, else through
        # each GPU's own NIC, whose rate sets the ring's bus bandwidth. XLA on a TPU pod
        # reduces over ICI first and sends only the pod's shard across pods.
        n_bytes = per_param / 2 * n_local  # a buffer whose all-reduce sends per_param bytes
        room = max(1, acc.scale_up_domain_size // (tp * pp * cp))
        inner = max(d for d in range(1, min(dp, room) + 1) if dp % d == 0)
        if inner == dp:
            t_dp = comms.ring_all_reduce_time_s(
                n_bytes, dp, link_bytes_per_s=up_bw, latency_s=SCALE_UP_LATENCY_S
            )
        elif acc.vendor in HIERARCHICAL_DP_VENDORS:
            t_dp = comms.hierarchical_all_reduce_time_s(
                n_bytes,
                n_nodes=dp // inner,
                gpus_per_node=inner,
                intra_bytes_per_s=up_bw,
                inter_bytes_per_s=out_bw,
                intra_latency_s=SCALE_UP_LATENCY_S,
                inter_latency_s=LINK_LATENCY_S,
            )
        else:
            t_dp = comms.ring_all_reduce_time_s(
                n_bytes, dp, link_bytes_per_s=out_bw, latency_s=LINK_LATENCY_S
            )
        window = BACKWARD_SHARE * compute / m  # the last micro-batch's backward
        dp_s = max(0.0, t_dp - window)

    # --- optimizer: memory-bound Adam over the state this chip owns
    owned = n_local / (dp if zero_stage >= 1 else 1)
    opt_s = ADAM_BYTES_PER_PARAM * owned / acc.hbm_bytes_per_s

    parts = {
        "compute": compute,
        "memory_bound": memory_bound,
        "tp_collectives": tp_s,
        "pipeline_p2p": p2p_s,
        "pipeline_bubble": bubble_s,
        "dp_fsdp": dp_s,
        "cp_attention": cp_s,
        "ep_all_to_all": ep_s,
        "optimizer": opt_s,
    }
    step = sum(parts.values())

    # --- memory per chip: model state, activations of the micro-batches in flight
    state = parallelism.model_state_bytes_per_gpu(
        accounting.n_params(mdl), tp=tp, pp=pp, dp=dp, zero_stage=zero_stage
    )
    if zero_stage == 3 and fsdp_weight_gathers == 1:
        state += bpe * n_local * (1 - 1 / dp)  # gathered BF16 weights kept for the backward
    act = parallelism.activation_bytes_per_layer(
        seq_len=seq_len // cp,
        micro_batch=micro_batch_size,
        d_model=mdl.d_model,
        n_heads=mdl.n_heads,
        tp=tp,
        recompute="selective" if recompute == "none" and flash_attention else recompute,
    )
    act_bytes = act * layers_per_stage * sched["activation_microbatches"]
    weights_extra = (sched["weight_copies"] - 1) * bpe * n_local
    memory_parts = {"model state": state + weights_extra, "activations": act_bytes}
    memory = sum(memory_parts.values())
    if check_memory and memory > acc.hbm_bytes:
        raise LayoutDoesNotFit(
            f"{mdl.key} on {acc.key} with tp={tp}, pp={pp}, cp={cp}, dp={dp}, "
            f"recompute={recompute!r}, zero_stage={zero_stage} needs "
            f"{units.fmt_bytes(memory)} per chip ({units.fmt_bytes(state)} model state, "
            f"{units.fmt_bytes(act_bytes)} activations); the chip has "
            f"{units.fmt_bytes(acc.hbm_bytes)}"
        )
    tokens_per_s = global_batch_tokens / step
    return TrainStep(
        step_time_s=step,
        mfu=tokens_per_s * f_model / (n_chips * peak),
        hfu=tokens_per_s * f_hw / (n_chips * peak),
        tokens_per_s=tokens_per_s,
        memory_per_chip_bytes=memory,
        hbm_bytes=acc.hbm_bytes,
        dp=dp,
        n_microbatches=m,
        parts=parts,
        memory_parts=memory_parts,
    )


# ------------------------------------------------------------------ published runs
FLOP_COUNTS = ("palm", "palm_causal", "megatron_eq3", "megatron_mfu")
MEASURED_UNITS = ("tflop_per_s_per_chip", "mfu", "tokens_per_s")


@dataclasses.dataclass(frozen=True, kw_only=True)
class TrainingRun:
    """A published training run: model, chips, full layout and the figure as published."""

    key: str
    model: str
    accelerator: str
    n_chips: int
    tp: int
    pp: int
    cp: int
    ep: int
    dp: int
    interleave: int
    schedule: str
    micro_batch_size: int
    zero_stage: int
    fsdp_weight_gathers: int
    grad_bytes: float
    flash_attention: bool
    recompute: str
    seq_len: int
    global_batch_tokens: float
    dtype: str
    measured_value: float
    measured_unit: str
    flop_count: str
    source: str
    table: str
    notes: str
    published_mfu: float | None = None
    published_hfu: float | None = None


@functools.cache
def training_runs() -> dict[str, TrainingRun]:
    """Every run in ``data/training_runs.toml``, keyed by run key (checked field by field)."""
    path = specs.data_dir() / "training_runs.toml"
    with open(path, "rb") as f:
        raw = tomllib.load(f)
    runs = {}
    for key, entry in raw.items():
        # (no longer in the file: whole-run facts live in models/prices.toml)
        if key == "run_totals":
            continue
        run = specs.build_spec(TrainingRun, entry, f"training_runs.toml[{key}]", key=key)
        for field, allowed in (
            ("flop_count", FLOP_COUNTS),
            ("measured_unit", MEASURED_UNITS),
            ("schedule", parallelism.SCHEDULES),
            ("recompute", parallelism.RECOMPUTE),
        ):
            if getattr(run, field) not in allowed:
                raise ValueError(
                    f"training_runs.toml[{key}].{field}: "
                    f"{getattr(run, field)!r} is not one of {allowed}"
                )
        runs[key] = run
    return runs


def source_flop_per_token(run: TrainingRun) -> float:
    """FLOP per token under the run's own published count (``run.flop_count``).

    megatron_eq3: 96 l h^2 (1 + s/(6h) + V/(16 l h)) (Narayanan et al. 2021, eq. 3, with the
    recomputation forward pass); megatron_mfu: 72 l h^2 (1 + s/(6h) + V/(12 l h))
    (Korthikanti et al. 2022, sec. 6.3); palm: 6N + 12 L H Q T; palm_causal: 6N + 6 L H Q T,
    attention halved by the causal mask.

    >>> round(source_flop_per_token(training_runs()["megatron_1t"]) / 1e12, 2)
    8.17
    """
    m = specs.model_spec(run.model)
    n_l, h, s, v = m.n_layers, m.d_model, run.seq_len, 51200  # Megatron pads V to 51,200
    if run.flop_count == "megatron_eq3":
        return 96.0 * n_l * h**2 * (1 + s / (6 * h) + v / (16 * n_l * h))
    if run.flop_count == "megatron_mfu":
        return 72.0 * n_l * h**2 * (1 + s / (6 * h) + v / (12 * n_l * h))
    if run.flop_count == "palm_causal":
        f = model_flop_per_token(m, seq_len=s)
        return f - 6.0 * m.n_layers * m.n_heads * m.d_head * s  # attention halved by the mask
    return model_flop_per_token(m, seq_len=s)


def measured_tokens_per_s(run: TrainingRun) -> float:
    """Tokens per second implied by the published figure under the source's own FLOP count."""
    peak = specs.accelerator(run.accelerator).peak_flop_per_s(run.dtype)
    if run.measured_unit == "tokens_per_s":
        return run.measured_value
    per_chip = (
        run.measured_value * units.TERA
        if run.measured_unit == "tflop_per_s_per_chip"
        else run.measured_value * peak
    )
    return per_chip * run.n_chips / source_flop_per_token(run)


def measured_mfu(run: TrainingRun) -> float:
    """The published figure as PaLM's MFU: tokens/s x (6N + 12 L H Q T) / (n x peak).

    Megatron's 1T benchmark: 163 TFLOP/s per A100 under eq. 3 (recomputation counted) is
    0.39 of the 312 TFLOP/s peak as model FLOP:

    >>> round(measured_mfu(training_runs()["megatron_1t"]), 3)
    0.392
    """
    peak = specs.accelerator(run.accelerator).peak_flop_per_s(run.dtype)
    f = model_flop_per_token(specs.model_spec(run.model), seq_len=run.seq_len)
    return measured_tokens_per_s(run) * f / (run.n_chips * peak)


def predict_run(run: TrainingRun | str) -> TrainStep:
    """``train_step`` on a published run's layout, nothing else taken from the run."""
    r = training_runs()[run] if isinstance(run, str) else run
    return train_step(
        r.model,
        r.accelerator,
        n_chips=r.n_chips,
        tp=r.tp,
        pp=r.pp,
        cp=r.cp,
        ep=r.ep,
        seq_len=r.seq_len,
        global_batch_tokens=r.global_batch_tokens,
        micro_batch_size=r.micro_batch_size,
        interleave=r.interleave,
        recompute=r.recompute,
        zero_stage=r.zero_stage,
        dtype=r.dtype,
        schedule=r.schedule,
        grad_bytes=r.grad_bytes,
        fsdp_weight_gathers=r.fsdp_weight_gathers,
        flash_attention=r.flash_attention,
        check_memory=False,
    )


def residuals() -> list[dict]:
    """One row per published run: measured and predicted MFU, their relative error.

    ``calibration`` marks the runs GEMM_EFFICIENCY was fitted on.
    """
    rows = []
    for key, run in training_runs().items():
        step, meas = predict_run(run), measured_mfu(run)
        pred = step.mfu
        rows.append(
            {
                "run": key,
                "accelerator": run.accelerator,
                "n_chips": run.n_chips,
                "fits": step.fits,
                "memory_per_chip_bytes": step.memory_per_chip_bytes,
                "measured_mfu": meas,
                "predicted_mfu": pred,
                "rel_error": (pred - meas) / meas,
                "calibration": key in CALIBRATION_RUNS,
            }
        )
    return rows


def held_out_errors(rows: list[dict[str, Any]]) -> dict[str, float]:
    """Median and worst |rel_error| over the rows not marked ``calibration`` (residual tables of
    this module and of ``predict.serve``)."""
    errs = [abs(r["rel_error"]) for r in rows if not r["calibration"]]
    if not errs:
        raise ValueError("rows: no held-out row (every row is a calibration run)")
    return {"n_runs": len(errs), "median": statistics.median(errs), "worst": max(errs)}


def held_out_summary() -> dict[str, float]:
    """Median and worst |predicted - measured| / measured MFU over the runs not fitted on."""
    return held_out_errors(residuals())


def golden_section_min(loss: Any, lo: float, hi: float, *, n_iter: int) -> float:
    """The minimiser of a unimodal ``loss`` on [lo, hi] by golden-section search.

    >>> round(golden_section_min(lambda x: (x - 0.7) ** 2, 0.2, 1.0, n_iter=60), 6)
    0.7
    """
    for _ in range(n_iter):
        a, b = hi - 0.618 * (hi - lo), lo + 0.618 * (hi - lo)
        lo, hi = (lo, b) if loss(a) < loss(b) else (a, hi)
    return (lo + hi) / 2


def calibrate_gemm_efficiency() -> float:
    """The GEMM_EFFICIENCY that best fits CALIBRATION_RUNS (least squares in log MFU).

    Every other term is fixed by datasheets and microbenchmarks, and with them fixed the
    predicted step is affine in 1/eta, so the fit is a one-dimensional search.
    """
    global GEMM_EFFICIENCY
    saved, runs = GEMM_EFFICIENCY, [training_runs()[k] for k in CALIBRATION_RUNS]

    def loss(eta: float) -> float:
        global GEMM_EFFICIENCY
        GEMM_EFFICIENCY = eta
        return sum(math.log(predict_run(r).mfu / measured_mfu(r)) ** 2 for r in runs)

    try:
        return golden_section_min(loss, 0.3, 1.0, n_iter=60)
    finally:
        GEMM_EFFICIENCY = saved


# ------------------------------------------------------------------ when communication hides
def hiding_thresholds(
    model: Model | str,
    accelerator: Accelerator | str,
    *,
    tp: int = 8,
    cp: int = 16,
    ep: int = 64,
    dp_bytes_per_param: float = 4.0,
    dtype: str = "bf16",
) -> dict[str, dict[str, float | str | None]]:
    """Per parallelism dimension: the quantity whose size makes its traffic cost less than the
    compute beside it, the threshold on this chip, and the model's value (when it has one).

    With achieved compute R = P x GEMM_EFFICIENCY and link rate beta x COLLECTIVE_EFFICIENCY:

    DP/FSDP  tokens per data-parallel replica B/d >= k R / (6 beta_out), k bytes per parameter
             sent (4 for a BF16 all-reduce, 6 for ZeRO-3 or Llama 3's FSDP)
    TP       d_model >= 16 (t-1) R / (72 beta) = 2 (t-1) R / (9 beta), on the link TP uses
    PP       layers per stage x d_model >= R / (18 beta_out) (one activation each way per
             micro-batch and stage)
    EP       d_ff of an expert >= 8 (e-1)/e x R / (18 beta) (dispatch and combine of top-k
             copies against their SwiGLU FLOP), beta the link the expert group spans
    CP       seq_len >= 2 (cp-1) (g/H) R_attn / beta (K/V exchange against causal attention)

    Each follows from equating the bytes a chip sends per unit of work to the FLOP it does for
    that work (the method of jax-ml's scaling book, applied per dimension).

    >>> t = hiding_thresholds("llama31_405b", "h100_sxm", tp=8)
    >>> round(t["TP"]["threshold"]), int(t["TP"]["value"])
    (2907, 16384)
    """
    mdl, acc = _model(model), _accelerator(accelerator)
    r = acc.peak_flop_per_s(dtype) * GEMM_EFFICIENCY
    r_attn = acc.peak_flop_per_s(dtype) * ATTENTION_EFFICIENCY
    up = acc.scale_up_bytes_per_s_per_direction * COLLECTIVE_EFFICIENCY
    out = acc.scale_out_bytes_per_s_per_direction * COLLECTIVE_EFFICIENCY
    domain = acc.scale_up_domain_size
    ep_link = up if tp * ep <= domain else out
    cp_link = up if tp * cp <= domain else out
    rows = {
        "DP/FSDP": ("tokens per data-parallel replica", dp_bytes_per_param * r / (6 * out), None),
        "TP": (
            "d_model",
            2 * (tp - 1) * r / (9 * (up if tp <= domain else out)),
            float(mdl.d_model),
        ),
        "PP": ("layers per stage x d_model", r / (18 * out), None),
        "EP": (
            "d_ff of one expert",
            8 * (ep - 1) / ep * r / (18 * ep_link),
            float(mdl.moe.d_ff_expert) if mdl.moe is not None else None,
        ),
        "CP": ("seq_len", 2 * (cp - 1) * mdl.n_kv_heads / mdl.n_heads * r_attn / cp_link, None),
    }
    return {k: {"quantity": q, "threshold": th, "value": v} for k, (q, th, v) in rows.items()}


def format_budget(step: TrainStep) -> str:
    """The step budget as text: seconds and share of each part, MFU, HFU and memory."""
    lines = [
        f"{name:<16} {t:8.3f} s  {t / step.step_time_s:6.1%}"
        for name, t in step.parts.items()
        if t > 0
    ]
    fits = "fits" if step.fits else "DOES NOT FIT"
    lines += [
        f"{'step':<16} {step.step_time_s:8.3f} s",
        (
            f"MFU {step.mfu:.1%}, HFU {step.hfu:.1%}, {step.tokens_per_s / 1e6:.2f}M "
            f"tokens/s, dp {step.dp}, {step.n_microbatches} micro-batches per rank"
        ),
        (
            f"memory {step.memory_per_chip_bytes / units.GB:.1f} GB per chip of "
            f"{step.hbm_bytes / units.GB:.0f} GB ({fits})"
        ),
    ]
    return "\n".join(lines)
