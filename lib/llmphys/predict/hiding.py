"""When each parallelism dimension's traffic hides behind the compute it overlaps.

The closed-form thresholds of ``train_step``'s terms (``predict/terms.py``): per dimension, the
size above which its bytes cost less than the compute they can hide behind.

Home: chapters/04_memory_wall.ipynb, section "When each dimension's traffic hides behind compute".
"""

from __future__ import annotations

from ..specs import Accelerator, Model
from .efficiency import default_efficiencies
from .train import _accelerator, _model


def hiding_thresholds(
    model: Model | str,
    accelerator: Accelerator | str,
    *,
    tp: int = 8,
    cp: int = 16,
    ep: int = 64,
    dp_bytes_per_param: float = 4.0,
    dtype: str = "bf16",
    n_microbatches: int = 1,
) -> dict[str, dict[str, float | str | None]]:
    """Per parallelism dimension: the quantity whose size makes its traffic cost less than the
    compute it can hide behind, the threshold on this chip, and the model's value.

    With achieved compute R = P x GEMM_EFFICIENCY and link rate beta x COLLECTIVE_EFFICIENCY,
    and, as ``train_step`` charges it, DP traffic hidden only behind the last micro-batch's
    backward (2/3 of its compute; ``n_microbatches`` of them per step):

    DP/FSDP  tokens per data-parallel replica B/d >= k R m / (4 beta_out), k bytes per parameter
             sent (4 for a BF16 all-reduce, 6 for ZeRO-3 or Llama 3's FSDP)
    TP       d_model >= 16 (t-1) R / (72 beta) = 2 (t-1) R / (9 beta), on the link TP uses
    PP       layers per stage x d_model >= R / (18 beta_out); pipeline sends are not hidden
             by ``train_step`` (this is the size at which they cost under half the compute)
    EP       d_ff of an expert >= 8 (e-1)/e x R / (18 beta) (dispatch and combine of top-k
             copies against their SwiGLU FLOP), beta the link the expert group spans
    CP       seq_len >= 2 (cp-1) (g/H) R_attn / beta (K/V exchange against causal attention)

    >>> t = hiding_thresholds("llama31_405b", "h100_sxm", tp=8)
    >>> round(t["TP"]["threshold"]), int(t["TP"]["value"])
    (2608, 16384)
    """
    mdl, acc = _model(model), _accelerator(accelerator)
    eff = default_efficiencies()
    r = acc.peak_flop_per_s(dtype) * eff.gemm_fraction(acc.key, dtype)
    r_attn = acc.peak_flop_per_s("bf16") * eff.attention
    up = acc.scale_up_bytes_per_s_per_direction * eff.collective
    out = acc.scale_out_bytes_per_s_per_direction * eff.collective
    domain = acc.scale_up_domain_size
    ep_link = up if tp * ep <= domain else out
    cp_link = up if tp * cp <= domain else out
    rows = {
        "DP/FSDP": (
            "tokens per data-parallel replica",
            dp_bytes_per_param * r * n_microbatches / (4 * out),
            None,
        ),
        "TP": (
            "d_model",
            2
            * (tp - 1)
            * r
            / (9 * (up * eff.axis_link_fraction(acc.key) if tp <= domain else out)),
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
