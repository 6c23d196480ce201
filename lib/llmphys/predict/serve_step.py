"""One serving step of a replica, term by term: the cost every ``predict.serve`` steady state
and every ``predict.simulate_serving`` step is timed with (module ``serve_model``'s docstring
lists the terms).

Home: chapters/06_economics.ipynb, section "Does the model predict real deployments?".
"""

from __future__ import annotations

import dataclasses
import functools

from .. import accounting, comms, kv_cache, units
from ..specs import Accelerator, Model
from . import train as _train
from .serve_terms import (
    ACTIVATION_BYTES,
    CONSTANTS,
    Layout,
    ServeConstants,
    _expert_params,
    _int,
    dense_params,
    expert_load_imbalance,
    n_moe_layers,
    resolve_accelerator,
    resolve_model,
    small_collective_latency_s,
)


@dataclasses.dataclass(frozen=True)
class StepCost:
    """Per-step cost terms of one replica, precomputed once so a simulator can call it per step.

    ``parts(n_decode, kv_tokens, n_prefill, prefill_attn_flop)`` gives each term's seconds:
    ``n_decode`` sequences decoding, ``kv_tokens`` cached positions they read in all,
    ``n_prefill`` prompt tokens in the step and the FLOP of their causal attention.
    """

    model: Model
    acc: Accelerator
    layout: Layout
    weight_bytes: float
    kv_bytes_per_token: float
    peak_flop_per_s: float
    attention_peak_flop_per_s: float  # attention runs its matmuls in BF16 whatever the weights
    constants: ServeConstants
    tokens_per_decode: int = 1  # k + 1 with speculation
    draft_s_per_seq: tuple[float, float] = (0.0, 0.0)  # (fixed, per sequence) seconds of drafts

    @functools.cached_property
    def _counts(self) -> tuple[float, float, int, float, float]:
        """(dense parameters, parameters of one expert, MoE layers, decode attention FLOP per
        cached position, small-collective latency): fixed for the replica, counted once."""
        m = self.model
        return (
            dense_params(m),
            _expert_params(m) if m.moe is not None else 0.0,
            n_moe_layers(m),
            kv_cache.decode_attention_flop_per_context_token(m),
            small_collective_latency_s(),
        )

    @property
    def kv_replication(self) -> float:
        """Copies of each KV head across the TP group: tp / min(tp, KV heads); MLA: tp."""
        tp, m = self.layout.tp, self.model
        heads = 1 if m.attention == "mla" else m.n_kv_heads
        return tp / min(tp, heads)

    def parts(
        self, n_decode: float, kv_tokens: float, n_prefill: float, prefill_attn_flop: float
    ) -> dict[str, float]:
        """Seconds of one step by term (summing to the step, see :meth:`step_s`)."""
        m, a, lay, c = self.model, self.acc, self.layout, self.constants
        s = lay.stage_chips
        bw = a.hbm_bytes_per_s * c.hbm_efficiency
        p_attn = self.attention_peak_flop_per_s * c.attention_efficiency
        tokens = n_decode * self.tokens_per_decode + n_prefill
        n_dense, n_expert, n_moe, attn_per_pos, _ = self._counts
        # two micro-batches run every layer's GEMMs once each, so each weight streams from HBM
        # twice a step (a layer's weights dwarf the 50 MB L2); one batch streams them once
        n_mb = 2 if lay.two_batch_overlap else 1
        # dense operators: each data-parallel group of tp chips reads the whole dense part
        dense_mem = n_mb * n_dense * self.weight_bytes / (lay.tp * bw)
        p = self.peak_flop_per_s * c.gemm_efficiency
        dense_cmp = 2.0 * n_dense * tokens / (s * p)
        exp_mem = exp_cmp = 0.0
        if m.moe is not None:
            e, k = m.moe.n_experts, m.moe.n_experts_per_token
            t_mb = max(tokens / n_mb, 1.0)  # tokens of one micro-batch
            touched = e * (1.0 - (1.0 - k / e) ** t_mb)  # inference.experts_touched
            exp_mem = n_mb * n_moe * touched * n_expert * self.weight_bytes / (s * bw)
            imb = expert_load_imbalance(n_tokens=tokens, k=k, ep=lay.ep)
            # grouped GEMMs with routing and permutes around them, at the fitted rate (below
            # DeepGEMM's large-m tables, EXPERT_GEMM_CEILING)
            p_e = self.peak_flop_per_s * c.expert_gemm_efficiency
            exp_cmp = 2.0 * n_moe * k * n_expert * tokens * imb / (s * p_e)
        kv_s = kv_tokens * self.kv_bytes_per_token * self.kv_replication / (s * bw)
        attn_c = self.tokens_per_decode * kv_tokens * attn_per_pos / (s * p_attn)
        pre_s = prefill_attn_flop / (s * p_attn)
        tp_s, ep_s = self._collectives_s(tokens)
        # the experts' grouped GEMMs do not overlap their weight stream with their math: each
        # expert's few rows leave too little work per weight tile (DeepGEMM's grouped tables
        # sit near bytes time + FLOP time, not their max), so the two add
        compute = max(dense_mem, dense_cmp) + exp_mem + exp_cmp + max(kv_s, attn_c) + pre_s
        if lay.two_batch_overlap:
            ep_s = max(0.0, ep_s - compute)  # the other micro-batch computes while this one sends
        fixed, per_seq = self.draft_s_per_seq
        return {
            "weights": (dense_mem if dense_mem >= dense_cmp else 0.0) + exp_mem,
            "compute": (dense_cmp if dense_cmp > dense_mem else 0.0)
            + exp_cmp
            + (attn_c if attn_c > kv_s else 0.0),
            "kv_reads": kv_s if kv_s >= attn_c else 0.0,
            "prefill_attention": pre_s,
            "tp_collectives": tp_s,
            "ep_collectives": ep_s,
            "draft": (fixed + per_seq * n_decode) if n_decode > 0 else 0.0,
            "overhead": c.step_overhead_s,
        }

    def step_s(self, n_decode: float, kv_tokens: float, n_prefill: float, prefill_attn_flop: float):
        """Seconds of one step: the sum of :meth:`parts`."""
        return sum(self.parts(n_decode, kv_tokens, n_prefill, prefill_attn_flop).values())

    def collectives_s(self, tokens: float) -> tuple[float, float]:
        """TP all-reduce and EP all-to-all seconds of a step of ``tokens`` (before any overlap)."""
        return self._collectives_s(tokens)

    def _collectives_s(self, tokens: float) -> tuple[float, float]:
        """TP all-reduce and EP all-to-all seconds of one step of ``tokens`` in the replica."""
        m, a, lay, c = self.model, self.acc, self.layout, self.constants
        s = lay.stage_chips
        up = a.scale_up_bytes_per_s_per_direction * c.link_efficiency
        out = a.scale_out_bytes_per_s_per_direction * c.link_efficiency
        lat_up, lat_out = self._counts[4], _train.LINK_LATENCY_S
        tp_s = ep_s = 0.0
        if lay.tp > 1:
            inside = lay.tp <= a.scale_up_domain_size
            link, lat = (up, lat_up) if inside else (out, lat_out)
            group_bytes = tokens * lay.tp / s * m.d_model * ACTIVATION_BYTES  # one DP group's
            one = 2.0 * (lay.tp - 1) / lay.tp * group_bytes / link + lat
            tp_s = 2 * m.n_layers * one
        groups = s // lay.tp  # attention's data-parallel groups in the stage
        if lay.ep > 1 and m.moe is not None and groups > 1:
            # tokens cross between attention groups only: inside a TP group every rank already
            # holds every token (no dispatch) and the experts' partial sums ride the TP
            # all-reduce counted above (no combine), so TP8 with EP8 on one box has no
            # all-to-all, and DP attention (tp = 1) exchanges over all ep ranks
            inside = s <= a.scale_up_domain_size
            link, lat = (up, lat_up) if inside else (out, lat_out)
            rank_el = tokens / s * m.moe.n_experts_per_token * m.d_model  # k copies per token
            dispatch = min(ACTIVATION_BYTES, self.weight_bytes) * rank_el
            combine = ACTIVATION_BYTES * rank_el
            ep_s = self._counts[2] * sum(
                comms.all_to_all_time_s(
                    b, groups, link_bytes_per_s=link, latency_s=lat, one_shot=True
                )
                for b in (dispatch, combine)
            )
        return tp_s, ep_s


def prefill_attention_flop(model: Model, *, n_tokens: float, prompt_tokens: int) -> float:
    """Causal attention FLOP of ``n_tokens`` prompt tokens of prompts ``prompt_tokens`` long
    (each attends to (S + 1)/2 positions on average)."""
    ctx = (kv_cache.cached_positions(model, n_tokens=prompt_tokens) + 1) / 2
    return n_tokens * accounting.attention_flop_per_token(model, context_tokens=ctx)


def step_cost(
    model: Model | str,
    accelerator: Accelerator | str,
    *,
    layout: Layout,
    weight_dtype: str = "bf16",
    kv_dtype: str = "bf16",
    math_dtype: str | None = None,
    constants: ServeConstants = CONSTANTS,
    draft_tokens: int = 0,
    draft_model: Model | str | None = None,
) -> StepCost:
    """The :class:`StepCost` of one replica (``math_dtype`` defaults to the weights' dtype; 4-bit
    weights are dequantised to BF16)."""
    mdl, acc = resolve_model(model), resolve_accelerator(accelerator)
    if math_dtype is None:
        math_dtype = weight_dtype if weight_dtype in ("bf16", "fp16", "fp8", "fp4") else "bf16"
    peak = acc.peak_flop_per_s("bf16" if math_dtype == "fp16" else math_dtype)
    wbytes = units.bytes_per_element(weight_dtype)
    kvb = kv_cache.kv_bytes_per_token(mdl, bytes_per_element=units.bytes_per_element(kv_dtype))
    k = _int("draft_tokens", draft_tokens, 0)
    draft = (0.0, 0.0)
    if k > 0 and draft_model is not None:
        d = resolve_model(draft_model)
        s = layout.stage_chips
        bw = acc.hbm_bytes_per_s * constants.hbm_efficiency
        # each draft step reads the draft's weights and pays its TP all-reduces' latency; the
        # step overhead (scheduling, sampling, the host's sync) is paid once per engine
        # iteration, which the verification step already carries, so the drafts add none of it
        # (a stated bound, not a fit). Their GEMMs run at the dense GEMM efficiency, fitted on
        # FP8 rows: price drafts in FP8.
        lat = 2 * d.n_layers * small_collective_latency_s() if layout.tp > 1 else 0.0
        fixed = k * (dense_params(d) * wbytes / (layout.tp * bw) + lat)
        per = k * 2.0 * dense_params(d) / (s * peak * constants.gemm_efficiency)
        draft = (fixed, per)
    return StepCost(
        model=mdl,
        acc=acc,
        layout=layout,
        weight_bytes=wbytes,
        kv_bytes_per_token=kvb,
        peak_flop_per_s=peak,
        attention_peak_flop_per_s=acc.peak_flop_per_s("bf16"),
        constants=constants,
        tokens_per_decode=k + 1,
        draft_s_per_seq=draft,
    )
