"""Chapter 6's scale-up studies: the scale-out gap, pipelined decode, domain growth.

The mechanisms are :mod:`llmphys.scale_up`; each function here takes the chips, models and
rack (a scenario) it compares as arguments.

Home: chapters/06_economics.ipynb.
"""

from __future__ import annotations

from .. import accounting, economics, inference, scale_up, specs, units
from ..specs import Accelerator, Model, RackCase


def scale_out_gap(
    *, hopper: Accelerator, blackwell: Accelerator, ampere: Accelerator
) -> dict[str, float]:
    """How many times slower scale-out is than scale-up, per direction per GPU, by system.

    ``hopper``: HGX H100 (NVLink 4 over one 400 Gb/s ConnectX-7); ``blackwell_800g``: a B200's
    NVLink 5 over the 800 Gb/s ConnectX-8 of GB300-class systems; ``b200_400g``: an HGX B200
    that keeps the 400 Gb/s NIC; ``a100``: HGX A100; ``h800_measured``: the NVLink and
    InfiniBand bandwidths DeepSeek measured on its export-limited H800s (DeepSeek-AI 2024,
    arXiv:2412.19437, sec. 3.2.2). One computation for every claim about the gap
    (dimensionless).

    >>> h100, b200, a100 = (specs.accelerator(k) for k in ("h100_sxm", "b200", "a100_sxm"))
    >>> gap = scale_out_gap(hopper=h100, blackwell=b200, ampere=a100)
    >>> {k: round(v, 1) for k, v in gap.items()}
    {'hopper': 9.0, 'blackwell_800g': 9.0, 'b200_400g': 18.0, 'a100': 12.0, 'h800_measured': 3.2}
    """
    return {
        "hopper": scale_up.scale_up_to_out_ratio(hopper),
        "blackwell_800g": blackwell.scale_up_bytes_per_s_per_direction
        / economics.price("link_bytes_per_s.connectx8_800g").value,
        "b200_400g": scale_up.scale_up_to_out_ratio(blackwell),
        "a100": scale_up.scale_up_to_out_ratio(ampere),
        "h800_measured": economics.price("link_bytes_per_s.h800_nvlink_achieved").value
        / economics.price("link_bytes_per_s.h800_infiniband").value,
    }


def pipelining_ratio(model: Model, acc: Accelerator, quantity: str, *, n_stages: int = 4) -> float:
    """A pipelined decode's ``quantity`` with ``n_stages`` stages over its value with one.

    Stages of 8 chips, micro-batches of 32 at 8,192 tokens. ``quantity`` is a key of
    ``scale_up.pipelined_decode`` (``"weight_bytes_per_chip"``, ``"kv_bytes_per_chip"``,
    ``"token_latency_s"``, ``"tokens_per_s_per_chip"``, ...).

    >>> m, a = specs.model("llama3_70b"), specs.accelerator("h100_sxm")
    >>> pipelining_ratio(m, a, "weight_bytes_per_chip"), pipelining_ratio(m, a, "kv_bytes_per_chip")
    (0.25, 1.0)
    """
    p1, ps = (
        scale_up.pipelined_decode(
            model, acc, n_stages=s, chips_per_stage=8, batch_size=32, context_tokens=8192
        )[quantity]
        for s in (1, n_stages)
    )
    return ps / p1


def pipelining_against_wide(
    model: Model, acc: Accelerator, quantity: str, *, n_stages: int = 4
) -> float:
    """A pipelined decode's ``quantity`` over the same chips and sequences without pipelining.

    At 8,192 tokens: ``n_stages`` stages of 8 chips with micro-batches of
    32 against one stage of 8 ``n_stages`` chips with all 32 ``n_stages`` sequences, whose
    collectives' latency the roofline leaves out (a scale-up domain such as a GB200 NVL72 spans
    them). Per chip the cache is the same; a token crosses every stage, each reading its weights
    on 8 chips, where the wide stage reads them on all. ``quantity`` as for
    ``scale_up.pipelined_decode``.

    >>> m, gb200 = specs.model("llama3_70b"), specs.accelerator("gb200")
    >>> round(pipelining_against_wide(m, gb200, "token_latency_s"), 2)
    1.86
    >>> pipelining_against_wide(m, gb200, "kv_bytes_per_chip")
    1.0
    """
    units.check_positive("n_stages", n_stages)
    piped = scale_up.pipelined_decode(
        model, acc, n_stages=n_stages, chips_per_stage=8, batch_size=32, context_tokens=8192
    )
    wide = scale_up.pipelined_decode(
        model,
        acc,
        n_stages=1,
        chips_per_stage=8 * n_stages,
        batch_size=32 * n_stages,
        context_tokens=8192,
    )
    return piped[quantity] / wide[quantity]


def domain_growth(server: Accelerator, rack: RackCase, quantity: str) -> float:
    """Growth of a scale-up domain from one ``server``'s domain to a rack (a scenario).

    quantity: "gpus", "hbm_bandwidth" or "hbm_capacity" (summed over the domain), or "link"
    (one GPU's scale-up bandwidth, one way). Dimensionless. From an HGX H100 (8 GPUs) to a
    GB200 NVL72:

    >>> h100, nvl72 = specs.accelerator("h100_sxm"), specs.scenario("nvl72")
    >>> domain_growth(h100, nvl72, "gpus"), domain_growth(h100, nvl72, "link")
    (9.0, 2.0)
    """
    big = specs.accelerator(rack.accelerator)
    if quantity == "link":
        return big.scale_up_bytes_per_s_per_direction / server.scale_up_bytes_per_s_per_direction
    per_gpu = {
        "gpus": lambda a: 1.0,
        "hbm_bandwidth": lambda a: a.hbm_bytes_per_s,
        "hbm_capacity": lambda a: a.hbm_bytes,
    }
    if quantity not in per_gpu:
        raise ValueError(
            f"quantity must be gpus, hbm_bandwidth, hbm_capacity or link, got {quantity!r}"
        )
    f = per_gpu[quantity]
    return (rack.n_chips * f(big)) / (server.scale_up_domain_size * f(server))


def pipeline_product_needed(model: Model, acc: Accelerator) -> float:
    """Smallest k_e x L_stage at which a pipeline boundary hides behind a MoE model's experts.

    ``scale_up.pipeline_boundary_slack`` is 2 k_e L_stage W_out / W_up; the product that makes
    it 1 is W_up / (2 W_out).

    >>> pipeline_product_needed(specs.model("deepseek_v3"), specs.accelerator("h100_sxm"))
    4.5
    """
    if model.moe is None:
        raise ValueError(f"model {model.key!r} has no MoE block")
    return model.moe.n_experts_per_token / scale_up.pipeline_boundary_slack(
        model, acc, layers_per_stage=1
    )


def size_over_domain_hbm(model: Model, acc: Accelerator) -> float:
    """A model's FP8 weights over the whole HBM of one scale-up domain of ``acc``.

    One byte per parameter against every byte of HBM in the domain (8 GPUs for an HGX H100).

    >>> round(size_over_domain_hbm(specs.model("deepseek_v3"), specs.accelerator("h100_sxm")), 2)
    0.98
    """
    return accounting.n_params(model) / scale_up.max_total_params(
        acc, n_chips=acc.scale_up_domain_size, weight_bytes_per_param=1.0, weight_fraction=1.0
    )


def expert_all_to_all_over_compute(
    model: Model,
    acc: Accelerator,
    *,
    n_chips: int,
    fabric: str,
    destinations_per_token: float | None = None,
) -> float:
    """A MoE model's expert all-to-all time over its FP8 compute time per decode step.

    Experts spread over ``n_chips`` chips of ``acc``; FP8 dispatch and BF16 combine
    (:func:`llmphys.scale_up.expert_all_to_all`). ``fabric="scale_up"``: every chip reaches
    every expert over its scale-up links; ``"scale_out"``: scale-up domains of ``acc`` (8-GPU
    nodes for an HGX H100) joined by one NIC per GPU, at most ``destinations_per_token``
    domains per token if given. Both times grow as the batch, so the ratio does not depend on
    it: it is taken at one sequence per chip. Dimensionless. DeepSeek-V3 over the 320 GPUs of
    its decode deployment (DeepSeek-AI 2024, arXiv:2412.19437, sec. 3.4.2):

    >>> dsv3, h100 = specs.model("deepseek_v3"), specs.accelerator("h100_sxm")
    >>> n = int(economics.price("deployment_n_gpus.deepseek_v3_decode").value)
    >>> round(expert_all_to_all_over_compute(dsv3, h100, n_chips=n, fabric="scale_up"), 2)
    0.6
    """
    if fabric not in ("scale_up", "scale_out"):
        raise ValueError(f"fabric must be 'scale_up' or 'scale_out', got {fabric!r}")
    units.check_positive("n_chips", n_chips)
    up = fabric == "scale_up"
    batch = float(n_chips)  # one sequence per chip; the ratio is the same at any batch
    comm_s = scale_up.expert_all_to_all(
        model,
        batch_size=batch,
        n_chips=n_chips,
        link_bytes_per_s=(
            acc.scale_up_bytes_per_s_per_direction
            if up
            else acc.scale_out_bytes_per_s_per_direction
        ),
        chips_per_domain=1 if up else acc.scale_up_domain_size,
        destinations_per_token=destinations_per_token,
    )["time_s"]
    compute_s = inference.decode_step(
        model, acc, batch_size=batch, context_tokens=0, n_chips=n_chips, weight_dtype="fp8"
    )["compute_time_s"]
    return comm_s / compute_s
