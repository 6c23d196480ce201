"""The flags of ``llmphys train`` and ``llmphys serve`` (the layout, the step's options, the
deployment) and the checks every flag's value goes through (a positive integer, a whole
number, a fraction, a list of choices), which exit with status 2 naming the flag.
:mod:`llmphys.cli_args` builds the parser with them.

Home: chapters/your_own_model.ipynb.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from . import predict
from .cli_reports import KV_DTYPES
from .cli_step import GRAD_DTYPES


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a whole number >= 1, got {text!r}")
    return value


def _whole(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be a whole number >= 0, got {text!r}")
    return value


def _fraction(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0.0 <= value < 1.0:
        raise argparse.ArgumentTypeError(f"must be a fraction in [0, 1), got {text!r}")
    return value


MODEL_HELP = (
    "a registry key (see `llmphys models`), a path to a Hugging Face config.json or its "
    "folder, or a Hugging Face repo id (org/name) whose config.json is in the local cache"
)
CHIP_HELP = "a registry key (see `llmphys chips`) or a path to an accelerator TOML file"


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not value > 0.0:
        raise argparse.ArgumentTypeError(f"must be a number > 0, got {text!r}")
    return value


def _list_of(choices: Sequence[str]):
    """A comma-separated list of ``choices`` (argparse type)."""

    def parse(text: str) -> list[str]:
        items = [t for t in text.split(",") if t]
        bad = [t for t in items if t not in choices]
        if bad or not items:
            raise argparse.ArgumentTypeError(
                f"{text!r}: each must be one of {', '.join(choices)} (comma-separated)"
            )
        return items

    return parse


def _ints(text: str) -> list[int]:
    try:
        items = [int(t) for t in text.split(",") if t]
    except ValueError:
        items = []
    if not items or min(items) < 0:
        raise argparse.ArgumentTypeError(f"must be whole numbers, comma-separated, got {text!r}")
    return items


def _step_options(c: argparse.ArgumentParser) -> None:
    """The step model's kernel and dispatch options, flags of ``train`` and ``plan train``."""
    from .predict import policies as predict_terms

    c.add_argument(
        "--no-sequence-parallel",
        action="store_true",
        help="every TP rank repeats the norms and dropout on the whole sequence (2021 Megatron)",
    )
    c.add_argument(
        "--selective-policy",
        choices=predict_terms.SELECTIVE_POLICIES,
        default="attention",
        help="what --recompute selective recomputes: attention = Megatron's, the attention "
        "core only (free under a flash kernel); op = torchtitan's op-level policy, every "
        "second matmul of a block and its norms, activation and rotary run again; layer = "
        "torchtitan's every-other-layer checkpointing; moe = Megatron-Core's "
        "--recompute-modules moe, each MoE layer's forward (all-to-alls and experts) again; "
        "dots_no_batch = JAX's checkpoint_dots_with_no_batch_dims (MaxText's minimal), the "
        "weight matmuls' outputs kept; dots_no_batch_offloaded = the same kept in host memory",
    )
    c.add_argument(
        "--moe-dispatcher",
        choices=predict_terms.MOE_DISPATCHERS,
        default="alltoall",
        help="how expert parallelism moves tokens: alltoall = NCCL's all-to-all, every remote "
        "copy of a token sent on its own; deepep = DeepEP's node-deduplicated dispatch, a "
        "token sent once to each other node holding one of its experts, then forwarded over "
        "NVLink (the two differ only when --ep spans more than one scale-up domain)",
    )
    c.add_argument(
        "--fused-elementwise",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="fused norm, activation and rotary kernels; --no-fused-elementwise is eager "
        "PyTorch, each elementwise op its own kernel and its own trip through HBM",
    )
    c.add_argument(
        "--fp8-recipe",
        choices=predict.FP8_RECIPES[1:],
        default="delayed",
        help="FP8 scaling recipe with --dtype fp8: delayed = per-tensor scales from an amax "
        "history; tensorwise = current per-tensor scaling, which reads each input once more "
        "for its amax; blockwise = per-block scales; mxfp8 = MX 32-element block scales",
    )


def _train_args(c: argparse.ArgumentParser) -> None:
    """The flags of ``train`` and ``cost train``: every keyword of ``predict.train_step``."""
    from . import parallelism

    c.add_argument(
        "--pipeline-split",
        choices=predict.layout.PIPELINE_SPLITS,
        default="even",
        help="how layers fill the pipeline's chunks: even = layers split evenly, the output "
        "head on the last chunk; account_embedding_loss = embedding and loss counted as one "
        "layer each (Megatron's --account-for-*-in-pipeline-split); the busiest stage sets "
        "the pace",
    )
    c.add_argument(
        "--attention-kernel",
        choices=predict.efficiency.ATTENTION_KERNELS,
        default="flash2",
        help="the flash-attention kernel's published rate: flash2 = FlashAttention-2; cudnn = "
        "cuDNN's fused attention, which Transformer Engine (Megatron-Core) picks on Hopper",
    )
    c.add_argument(
        "--cp-rotate",
        choices=predict.ring.CP_ROTATIONS,
        default="p2p",
        help="how ring attention moves K/V under context parallelism: p2p = a send to the next "
        "rank per block, hidden behind attention; allgather = PyTorch's context_parallel, one "
        "all-gather hidden behind the first block only, with its FP32 merges",
    )
    c.add_argument(
        "--kv-repeat",
        action="store_true",
        help="K/V are repeated to the query heads before attention (torchtitan's repeat_kv), "
        "so the CP exchange moves query-head-wide K/V",
    )
    c.add_argument("model", metavar="MODEL", help=MODEL_HELP)
    c.add_argument("chip", metavar="CHIP", help=CHIP_HELP)
    c.add_argument("--chips", type=_positive_int, required=True, help="chips in the run")
    for flag, text in (
        ("tp", "tensor-parallel degree (divides the query and KV heads)"),
        ("pp", "pipeline stages"),
        ("cp", "context-parallel degree (divides --seq-len)"),
        ("ep", "expert-parallel degree (divides the routed experts and dp)"),
    ):
        c.add_argument(f"--{flag}", type=_positive_int, default=1, help=text)
    c.add_argument("--seq-len", type=_positive_int, required=True, help="tokens per sequence")
    c.add_argument(
        "--batch-tokens", type=_positive_int, required=True, help="global batch in tokens"
    )
    c.add_argument("--micro-batch", type=_positive_int, default=1, help="sequences per micro-batch")
    c.add_argument(
        "--interleave", type=_positive_int, default=1, help="model chunks per pipeline stage"
    )
    c.add_argument(
        "--schedule",
        choices=parallelism.SCHEDULES,
        default=None,
        help="pipeline schedule (default: interleaved when --interleave > 1, else 1f1b)",
    )
    c.add_argument(
        "--recompute",
        choices=parallelism.RECOMPUTE,
        default="none",
        help="activation recomputation",
    )
    c.add_argument("--zero-stage", type=int, choices=(0, 1, 2, 3), default=1, help="ZeRO stage")
    c.add_argument("--dtype", choices=("bf16", "fp8"), default="bf16", help="matrix precision")
    add_train_memory_flags(c)
    _step_options(c)
    c.add_argument(
        "--attention-flops",
        choices=predict.ATTENTION_FLOPS,
        default="causal",
        help="the FLOP count the MFU uses: causal = 6 N + 6 L H Q T per token (the mask halves "
        "the attention products); full = PaLM's 6 N + 12 L H Q T",
    )
    c.add_argument(
        "--memory-margin",
        type=_fraction,
        default=0.0,
        help="fraction of HBM held back from the layout (fragmentation, framework buffers)",
    )


def add_train_memory_flags(c: argparse.ArgumentParser) -> None:
    """The training step's memory and traffic flags shared by ``train`` and ``plan train``."""
    c.add_argument(
        "--grad-dtype",
        choices=tuple(GRAD_DTYPES),
        default="bf16",
        help="width of the gradients the data-parallel group reduces",
    )
    c.add_argument(
        "--fsdp-weight-gathers",
        type=int,
        choices=(1, 2),
        default=2,
        help="weight all-gathers per step under ZeRO-3 (1: kept through the backward pass)",
    )
    c.add_argument(
        "--zero3-collectives",
        choices=("per_layer", "per_tensor"),
        default="per_layer",
        help="ZeRO-3 collectives: one per layer, prefetched (FSDP2), or one per parameter "
        "tensor, unoverlapped (DeepSpeed ZeRO-3 of 2021)",
    )
    c.add_argument(
        "--no-flash-attention",
        action="store_true",
        help="materialise the attention scores (no fused flash kernel)",
    )
    c.add_argument(
        "--state-layout",
        choices=tuple(predict.memory.STATE_LAYOUTS),
        default="megatron",
        help="bytes per parameter of weights, gradients, optimizer: megatron = 2 + 4 + 12; "
        "fp32_params = JAX's FP32 parameters, gradients and Adam moments, 4 + 4 + 8",
    )
    c.add_argument(
        "--state-replicas",
        type=_positive_int,
        default=1,
        help="data-parallel replicas holding the same state shard (HSDP; MaxText's slices)",
    )


def add_request_lengths(c: argparse.ArgumentParser) -> None:
    """``--input`` and ``--output``: a request's prompt and generated tokens (serve, plan serve)."""
    c.add_argument("--input", type=_positive_int, required=True, help="prompt tokens")
    c.add_argument("--output", type=_positive_int, required=True, help="generated tokens")


def _serve_args(c: argparse.ArgumentParser) -> None:
    """The flags of ``serve`` and ``cost serve``."""

    c.add_argument("model", metavar="MODEL", help=MODEL_HELP)
    c.add_argument("chip", metavar="CHIP", help=CHIP_HELP)
    c.add_argument("--chips", type=_positive_int, required=True, help="chips, all replicas")
    for flag, text in (
        ("tp", "tensor-parallel degree per replica (divides the query and KV heads)"),
        ("ep", "expert-parallel degree per replica (divides the routed experts)"),
        ("pp", "pipeline stages per replica"),
    ):
        c.add_argument(f"--{flag}", type=_positive_int, default=1, help=text)
    c.add_argument(
        "--batch",
        type=_positive_int,
        default=None,
        help="concurrent sequences, whole deployment (default: the most that fit)",
    )
    add_request_lengths(c)
    c.add_argument(
        "--weights",
        choices=("bf16", "fp8", "int4", "fp4"),
        default="bf16",
        help="weight element type",
    )
    c.add_argument("--kv", choices=KV_DTYPES, default="bf16", help="KV-cache element type")
    c.add_argument(
        "--math-dtype",
        choices=("bf16", "fp16", "fp8", "fp4"),
        default=None,
        help="matmul precision (default: the weights', BF16 for int4)",
    )
    c.add_argument(
        "--no-chunked-prefill",
        action="store_true",
        help="prefill each prompt whole, stalling the batch (default: chunked)",
    )
    c.add_argument(
        "--chunk-tokens",
        type=_positive_int,
        default=predict.CHUNK_TOKENS,
        help="prompt tokens one step carries with chunked prefill",
    )
    c.add_argument(
        "--draft-tokens",
        type=_whole,
        default=0,
        help="speculative tokens drafted per step (0: no speculation)",
    )
    c.add_argument(
        "--acceptance-rate",
        type=_fraction,
        default=0.0,
        help="chance each drafted token is accepted",
    )
    c.add_argument(
        "--draft-model",
        metavar="MODEL",
        default=None,
        help="the draft model (default: a free drafter, e.g. an n-gram or MTP head)",
    )
    c.add_argument(
        "--prefill-chips",
        type=_whole,
        default=0,
        help="chips that only prefill (disaggregated layout)",
    )
    c.add_argument(
        "--memory-margin",
        type=_fraction,
        default=0.0,
        help="fraction of HBM held back from weights and KV cache",
    )
