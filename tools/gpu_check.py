"""Time one GPU against the book's predictions and write one TOML record (issue 31).

    python tools/gpu_check.py --out /tmp/h200.toml                 # on the GPU: PyTorch + CUDA
    python tools/gpu_check.py --backend numpy --quick --out r.toml # anywhere: the stand-in
    python tools/gpu_check.py --backend torch --device cpu --quick # PyTorch's code on a CPU

What it measures (sizes are the full run's; ``--quick`` shrinks all of them):
  * ceilings: device-to-device copy of 0.5-4 GB buffers (bytes read + written, far past the
    L2), BF16 and FP8 matmul at 8192^3 on random data, and the efficiency-by-shape grid,
    m, n, k in {256, 1024, 4096, 16384} for BF16 and FP8;
  * one Llama-style block at the model's width (Llama 3 8B: d 4096, 32/8 heads, d_ff 14336),
    sequence 4096, micro-batch 1-4, BF16, SDPA, forward + backward;
  * one decode step of the whole random-weight model at batch 1-256 and context 1K-32K, with
    a static KV cache and a CUDA graph where the device has them (cases whose cache does not
    fit are skipped and listed);
  * prefill of 1K-16K tokens.

Correctness first: before a kernel is timed its output on fresh random inputs is compared
with a float32 reference (relative error of the norms; a failure is recorded, not hidden).
Timings: warm-up calls, then ``--repeats`` CUDA-event timings (each long enough to dwarf the
event's resolution); the record keeps every raw time, the median and the spread. The book's
prediction for each case comes from ``llmphys.gpu_record.book_prediction``. A time limit
(default 450 s) skips what is left, by name, so that the run ends inside 8 minutes.

On the lent H200 (python3 there holds PyTorch; nothing to install), as one call:
    PYTHONUNBUFFERED=1 timeout 540 python3 tools/gpu_check.py --out $OUT/h200.toml 2>&1 \
        | tee $OUT/log
then copy the record to data/bench/h200.toml. Exit status 1 when a case failed its check.

Home: chapters/04_memory_wall.ipynb.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import math
import platform
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "lib"))  # a tool run from a clone, before `pip install -e lib`

from llmphys import __version__, gpu_record, specs, units  # noqa: E402

GIB = 2**30
FULL = {
    "copy_bytes": [GIB // 2, GIB, 2 * GIB, 4 * GIB],
    "headline": 8192,
    "grid": [256, 1024, 4096, 16384],
    "seq_len": 4096,
    "micro_batches": [1, 2, 3, 4],
    "decode_batches": [1, 4, 16, 64, 128, 256],
    "decode_contexts": [1024, 4096, 16384, 32768],
    "prefill_tokens": [1024, 2048, 4096, 8192, 16384],
}
QUICK = {
    "copy_bytes": [2**20, 2**22],
    "headline": 64,
    "grid": [16, 64],
    "seq_len": 32,
    "micro_batches": [1, 2],
    "decode_batches": [1, 4],
    "decode_contexts": [16, 64],
    "prefill_tokens": [16, 64],
}
TINY = {"d_model": 64, "n_heads": 4, "n_kv_heads": 2, "d_head": 16, "d_ff": 128, "n_layers": 2,
        "vocab_size": 256}  # the model a quick run builds: every shape of the real one, small
# Relative error (norm of the difference over the norm of the reference) allowed against the
# float32 reference: a BF16 result rounds to 2^-9 relative; a whole block, its backward and a
# 32-layer forward accumulate that over a few hundred roundings, FP8 inputs round to 2^-4.
TOLERANCE = {"copy": 0.0, "bf16": 1e-2, "fp8": 2e-2, "block": 5e-2, "model": 5e-2}
MIN_TIMED_S = 1e-3  # a timed repeat runs the kernel enough times to last this long
KV_HEADROOM = 0.85  # share of free device memory a decode case's cache may take


def rel_error(out: np.ndarray, ref: np.ndarray) -> float:
    """||out - ref|| / ||ref|| in float64 (0 for an exact copy)."""
    out, ref = np.asarray(out, dtype=np.float64), np.asarray(ref, dtype=np.float64)
    den = float(np.linalg.norm(ref))
    return float(np.linalg.norm(out - ref)) / (den if den else 1.0)


# ----------------------------------------------------------------- numpy stand-in
def _round_mantissa(x: np.ndarray, bits: int) -> np.ndarray:
    """Round float32 ``x`` to ``bits`` explicit mantissa bits (BF16: 7, FP8 E4M3: 3)."""
    m, e = np.frexp(x.astype(np.float32))
    scale = 2.0 ** (bits + 1)
    return np.ldexp(np.round(m * scale) / scale, e).astype(np.float32)


class NumpyBackend:
    """The timed kernels in numpy on tiny shapes: the same record, no GPU (CPU tests).

    Low precision is emulated: BF16 and FP8 inputs are rounded to their mantissa widths and
    multiplied in float16; the reference multiplies the same rounded inputs in float32. The
    block's backward is stood in for by its two matmuls per weight (no autograd)."""

    name = "numpy"
    cuda = False

    def __init__(self, *, seed: int, n_warmup: int, n_repeats: int):
        self.rng = np.random.default_rng(seed)
        self.n_warmup, self.n_repeats = n_warmup, n_repeats
        self.weights: dict[str, Any] | None = None

    def info(self) -> dict[str, Any]:
        device = {"name": f"numpy stand-in on {platform.processor() or platform.machine()}",
                  "driver": "none", "runtime": f"numpy {np.__version__}"}
        return {"device": device, "versions": {"numpy": np.__version__}}

    def time(self, fn: Callable[[], object]) -> list[float]:
        for _ in range(self.n_warmup):
            fn()
        t0 = time.perf_counter()
        fn()
        iters = max(1, math.ceil(MIN_TIMED_S / max(time.perf_counter() - t0, 1e-9)))
        out = []
        for _ in range(self.n_repeats):
            t0 = time.perf_counter()
            for _ in range(iters):
                fn()
            out.append((time.perf_counter() - t0) / iters)
        return out

    def copy(self, n_bytes: int) -> dict[str, Any]:
        src = self.rng.standard_normal(n_bytes // 4, dtype=np.float32)
        dst = np.empty_like(src)
        np.copyto(dst, src)
        return {"error": rel_error(dst, src), "times_s": self.time(lambda: np.copyto(dst, src))}

    def matmul(self, m: int, n: int, k: int, dtype: str) -> dict[str, Any]:
        bits = {"bf16": 7, "fp8": 3}[dtype]
        a = _round_mantissa(self.rng.standard_normal((m, k), dtype=np.float32), bits)
        b = _round_mantissa(self.rng.standard_normal((k, n), dtype=np.float32), bits)
        a16, b16 = a.astype(np.float16), b.astype(np.float16)
        err = rel_error(a16 @ b16, a @ b)
        return {"error": err, "times_s": self.time(lambda: a16 @ b16)}

    def _linear(self, d_in: int, d_out: int) -> np.ndarray:
        return (self.rng.standard_normal((d_in, d_out)) / math.sqrt(d_in)).astype(np.float32)

    def _layer(self, m: specs.Model) -> dict[str, np.ndarray]:
        d, q, kv = m.d_model, m.n_heads * m.d_head, m.n_kv_heads * m.d_head
        return {"wq": self._linear(d, q), "wk": self._linear(d, kv), "wv": self._linear(d, kv),
                "wo": self._linear(q, d), "w1": self._linear(d, m.d_ff),
                "w3": self._linear(d, m.d_ff), "w2": self._linear(m.d_ff, d)}

    @staticmethod
    def _block(m: specs.Model, w: dict, x: np.ndarray, dtype, k_past=None, v_past=None):
        """One pre-norm block on x [b, s, d]; with a cache, s new positions after its own."""
        def norm(z):
            return (z / np.sqrt(np.mean(z.astype(np.float32) ** 2, -1, keepdims=True) + 1e-6)
                    ).astype(dtype)
        b, s, _ = x.shape
        hq, g, c = m.n_heads, m.n_kv_heads, m.d_head
        h = norm(x)
        q = (h @ w["wq"].astype(dtype)).reshape(b, s, g, hq // g, c)
        k = (h @ w["wk"].astype(dtype)).reshape(b, s, g, c)
        v = (h @ w["wv"].astype(dtype)).reshape(b, s, g, c)
        if k_past is not None:
            k, v = np.concatenate([k_past.astype(dtype), k], 1), np.concatenate(
                [v_past.astype(dtype), v], 1)
        t = k.shape[1]
        scores = np.einsum("bsgrc,btgc->bgrst", q, k).astype(np.float32) / math.sqrt(c)
        mask = np.arange(t)[None, :] > (np.arange(s)[:, None] + t - s)
        scores = np.where(mask, -np.inf, scores)
        p = np.exp(scores - scores.max(-1, keepdims=True))
        p = (p / p.sum(-1, keepdims=True)).astype(dtype)
        o = np.einsum("bgrst,btgc->bsgrc", p, v).reshape(b, s, hq * c)
        x = x + o @ w["wo"].astype(dtype)
        h = norm(x)
        a, u = h @ w["w1"].astype(dtype), h @ w["w3"].astype(dtype)
        return x + ((a / (1 + np.exp(-a.astype(np.float32)))).astype(dtype) * u) @ w[
            "w2"].astype(dtype)

    def train_block(self, m: specs.Model, micro_batch: int, seq_len: int) -> dict[str, Any]:
        w = self._layer(m)
        x = self.rng.standard_normal((micro_batch, seq_len, m.d_model), dtype=np.float32)
        err = rel_error(self._block(m, w, x.astype(np.float16), np.float16),
                        self._block(m, w, x, np.float32))
        x16 = x.astype(np.float16)
        w16 = {k: v.astype(np.float16) for k, v in w.items()}

        def step():
            y = self._block(m, w, x16, np.float16)
            gy = y.reshape(-1, m.d_model)
            for name in ("wo", "w2"):  # the stand-in backward: dX = dY W^T, dW = X^T dY
                gx = gy @ w16[name].T
                gx.T @ gy
            return y
        return {"error": err, "times_s": self.time(step)}

    def load_model(self, m: specs.Model) -> None:
        self._model(m)

    def _model(self, m: specs.Model) -> dict[str, Any]:
        if self.weights is None:
            self.weights = {"layers": [self._layer(m) for _ in range(m.n_layers)],
                            "emb": self.rng.standard_normal((m.vocab_size, m.d_model),
                                                            dtype=np.float32),
                            "head": self._linear(m.d_model, m.vocab_size)}
        return self.weights

    def _forward(self, m, wts, ids, dtype, caches=None):
        x = wts["emb"][ids].astype(dtype)
        for i, w in enumerate(wts["layers"]):
            kp, vp = caches[i] if caches is not None else (None, None)
            x = self._block(m, w, x, dtype, kp, vp)
        return x[:, -1] @ wts["head"].astype(dtype)

    def decode(self, m: specs.Model, batch: int, context: int, graphs: bool) -> dict[str, Any]:
        wts = self._model(m)
        shape = (batch, context - 1, m.n_kv_heads, m.d_head)
        caches = [(self.rng.standard_normal(shape, dtype=np.float32),
                   self.rng.standard_normal(shape, dtype=np.float32)) for _ in wts["layers"]]
        ids = self.rng.integers(0, m.vocab_size, (batch, 1))
        err = rel_error(self._forward(m, wts, ids, np.float16, caches),
                        self._forward(m, wts, ids, np.float32, caches))
        c16 = [(k.astype(np.float16), v.astype(np.float16)) for k, v in caches]
        return {"error": err, "times_s": self.time(
            lambda: self._forward(m, wts, ids, np.float16, c16)), "cuda_graphs": False}

    def prefill(self, m: specs.Model, tokens: int) -> dict[str, Any]:
        wts = self._model(m)
        ids = self.rng.integers(0, m.vocab_size, (1, tokens))
        err = rel_error(self._forward(m, wts, ids, np.float16),
                        self._forward(m, wts, ids, np.float32))
        return {"error": err, "times_s": self.time(
            lambda: self._forward(m, wts, ids, np.float16))}

    def free_bytes(self) -> float:
        return float("inf")


# ----------------------------------------------------------------- PyTorch on a GPU
class TorchBackend:
    """The timed kernels in PyTorch: CUDA events on a GPU (``device='cpu'`` for a dry run)."""

    name = "torch"

    def __init__(self, *, seed: int, n_warmup: int, n_repeats: int, device: str = "cuda"):
        import torch

        self.torch = torch
        self.dev = torch.device(device)
        self.cuda = self.dev.type == "cuda"
        if self.cuda and not torch.cuda.is_available():
            raise SystemExit("gpu_check: PyTorch sees no CUDA device (try --device cpu)")
        torch.backends.cuda.matmul.allow_tf32 = False  # float32 references stay float32
        torch.backends.cudnn.allow_tf32 = False
        self.gen = torch.Generator(device=self.dev).manual_seed(seed)
        self.n_warmup, self.n_repeats = n_warmup, n_repeats
        self.weights: dict[str, Any] | None = None

    def info(self) -> dict[str, Any]:
        torch = self.torch
        versions = {"torch": torch.__version__, "numpy": np.__version__}
        if self.cuda:
            name = torch.cuda.get_device_name(0)
            try:
                driver = subprocess.run(
                    ["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                    capture_output=True, text=True, timeout=30, check=False,
                ).stdout.strip().splitlines()[0]
            except (OSError, IndexError, subprocess.SubprocessError):
                driver = "unknown"
            runtime = f"CUDA {torch.version.cuda}"
            versions["cudnn"] = str(torch.backends.cudnn.version())
            cap = torch.cuda.get_device_capability(0)
            versions["compute_capability"] = f"{cap[0]}.{cap[1]}"
        else:
            name, driver, runtime = f"CPU ({platform.machine()})", "none", "cpu"
        return {"device": {"name": name, "driver": driver, "runtime": runtime},
                "versions": versions}

    def _sync(self) -> None:
        if self.cuda:
            self.torch.cuda.synchronize()

    def time(self, fn: Callable[[], object]) -> list[float]:
        """Per-call seconds of ``n_repeats`` timed repeats, after ``n_warmup`` calls."""
        for _ in range(self.n_warmup):
            fn()
        self._sync()
        t0 = time.perf_counter()
        fn()
        self._sync()
        iters = max(1, min(1000, math.ceil(MIN_TIMED_S / max(time.perf_counter() - t0, 1e-9))))
        out = []
        for _ in range(self.n_repeats):
            if self.cuda:
                start = self.torch.cuda.Event(enable_timing=True)
                end = self.torch.cuda.Event(enable_timing=True)
                start.record()
                for _ in range(iters):
                    fn()
                end.record()
                end.synchronize()
                out.append(start.elapsed_time(end) / 1e3 / iters)  # elapsed_time is in ms
            else:
                t0 = time.perf_counter()
                for _ in range(iters):
                    fn()
                out.append((time.perf_counter() - t0) / iters)
        return out

    def _randn(self, *shape, dtype=None, scale: float = 1.0):
        t = self.torch.randn(*shape, generator=self.gen, device=self.dev,
                             dtype=self.torch.float32)
        t = t * scale if scale != 1.0 else t
        return t.to(dtype) if dtype is not None else t

    def _err(self, out, ref) -> float:
        out, ref = out.double(), ref.double()
        den = ref.norm().item()
        return (out - ref).norm().item() / (den if den else 1.0)

    def free_bytes(self) -> float:
        if not self.cuda:
            return float("inf")
        self.torch.cuda.empty_cache()
        return float(self.torch.cuda.mem_get_info()[0])

    def copy(self, n_bytes: int) -> dict[str, Any]:
        torch = self.torch
        src = self._randn(n_bytes // 2, dtype=torch.bfloat16)
        dst = torch.empty_like(src)
        dst.copy_(src)
        err = float((dst != src).any().item())
        times = self.time(lambda: dst.copy_(src))
        return {"error": err, "times_s": times}

    def matmul(self, m: int, n: int, k: int, dtype: str) -> dict[str, Any]:
        torch = self.torch
        if dtype == "bf16":
            a, b = self._randn(m, k, dtype=torch.bfloat16), self._randn(k, n, dtype=torch.bfloat16)
            c = torch.empty(m, n, device=self.dev, dtype=torch.bfloat16)
            torch.matmul(a, b, out=c)
            err = self._err(c, a.float() @ b.float())
            return {"error": err, "times_s": self.time(lambda: torch.matmul(a, b, out=c))}
        f8 = getattr(torch, "float8_e4m3fn", None)
        if f8 is None or not hasattr(torch, "_scaled_mm") or not self.cuda:
            return {"skip": "this PyTorch or device has no FP8 matmul (torch._scaled_mm)"}
        if torch.cuda.get_device_capability(0) < (8, 9):
            return {"skip": "FP8 tensor cores need compute capability 8.9 or later"}
        a = self._randn(m, k).to(f8)
        b = self._randn(n, k).to(f8).t()  # column-major, as cuBLASLt's FP8 GEMM requires
        one = torch.ones((), device=self.dev, dtype=torch.float32)

        def mm():
            r = torch._scaled_mm(a, b, scale_a=one, scale_b=one, out_dtype=torch.bfloat16)
            return r[0] if isinstance(r, tuple) else r  # PyTorch < 2.4 also returned amax
        err = self._err(mm(), a.float() @ b.float())
        return {"error": err, "times_s": self.time(mm)}

    # --- the Llama block, written once for the timed BF16 run and the float32 reference
    def _layer(self, m: specs.Model) -> dict[str, Any]:
        torch = self.torch
        d, q, kv = m.d_model, m.n_heads * m.d_head, m.n_kv_heads * m.d_head

        def lin(i, o):
            return self._randn(i, o, dtype=torch.bfloat16, scale=1 / math.sqrt(i))
        return {"wq": lin(d, q), "wk": lin(d, kv), "wv": lin(d, kv), "wo": lin(q, d),
                "w1": lin(d, m.d_ff), "w3": lin(d, m.d_ff), "w2": lin(m.d_ff, d),
                "g1": torch.ones(d, device=self.dev, dtype=torch.bfloat16),
                "g2": torch.ones(d, device=self.dev, dtype=torch.bfloat16)}

    def _rope(self, x, pos, theta: float = 500_000.0):
        """Rotate x [..., s, c] at positions ``pos`` [s] (Llama's half-split RoPE)."""
        torch = self.torch
        c = x.shape[-1]
        inv = theta ** (-torch.arange(0, c, 2, device=self.dev, dtype=torch.float32) / c)
        ang = pos.float()[:, None] * inv[None, :]
        cos, sin = ang.cos().to(x.dtype), ang.sin().to(x.dtype)
        x1, x2 = x[..., : c // 2], x[..., c // 2:]
        return torch.cat([x1 * cos - x2 * sin, x1 * sin + x2 * cos], -1)

    def _norm(self, x, g):
        xf = x.float()
        return (xf * self.torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-5)).to(x.dtype) * g

    def _sdpa(self, q, k, v, causal: bool):
        """SDPA over q [b, H, s, c] and k, v [b, G, t, c]: GQA without copying the KV heads
        where PyTorch has enable_gqa (2.5+), else by repeating them (what HF's repeat_kv does)."""
        f = self.torch.nn.functional.scaled_dot_product_attention
        if q.dtype != self.torch.float32:  # the float32 reference takes the repeat: PyTorch's
            try:  # fused float32 kernel has no GQA, and its fallback materialises the scores
                return f(q, k, v, is_causal=causal, enable_gqa=True)
            except TypeError:
                pass
        r = q.shape[1] // k.shape[1]
        return f(q, k.repeat_interleave(r, 1), v.repeat_interleave(r, 1), is_causal=causal)

    def _block(self, m, w, x, dtype):
        """One pre-norm Llama block on x [b, s, d] (training and prefill: causal)."""
        torch = self.torch
        w = {k: v.to(dtype) for k, v in w.items()}
        b, s, _ = x.shape
        hq, g, c = m.n_heads, m.n_kv_heads, m.d_head
        pos = torch.arange(s, device=self.dev)
        h = self._norm(x, w["g1"])
        q = self._rope((h @ w["wq"]).view(b, s, hq, c).transpose(1, 2), pos)
        k = self._rope((h @ w["wk"]).view(b, s, g, c).transpose(1, 2), pos)
        v = (h @ w["wv"]).view(b, s, g, c).transpose(1, 2)
        o = self._sdpa(q, k, v, causal=True).transpose(1, 2).reshape(b, s, hq * c)
        x = x + o @ w["wo"]
        h = self._norm(x, w["g2"])
        return x + (torch.nn.functional.silu(h @ w["w1"]) * (h @ w["w3"])) @ w["w2"]

    def train_block(self, m: specs.Model, micro_batch: int, seq_len: int) -> dict[str, Any]:
        torch = self.torch
        w = {k: v.requires_grad_(True) for k, v in self._layer(m).items()}
        x = self._randn(micro_batch, seq_len, m.d_model, dtype=torch.bfloat16).requires_grad_()
        gy = self._randn(micro_batch, seq_len, m.d_model, dtype=torch.bfloat16)
        leaves = [x, *w.values()]

        def fwd_bwd(dtype):
            def cast(t):
                return t.detach().to(dtype).requires_grad_() if dtype != t.dtype else t
            xs, ws = cast(x), {k: cast(v) for k, v in w.items()}
            y = self._block(m, ws, xs, dtype)
            grads = torch.autograd.grad(y, [xs, *ws.values()], gy.to(dtype))
            return y, grads
        y, grads = fwd_bwd(torch.bfloat16)
        y32, grads32 = fwd_bwd(torch.float32)
        err = max(self._err(a, b) for a, b in zip((y, *grads), (y32, *grads32), strict=True))
        del y32, grads32, y, grads

        def step():
            out = self._block(m, w, x, torch.bfloat16)
            return torch.autograd.grad(out, leaves, gy)
        times = self.time(step)
        return {"error": err, "times_s": times}

    # --- the whole model, random weights, for decode and prefill
    def load_model(self, m: specs.Model) -> None:
        self._model(m)

    def _model(self, m: specs.Model) -> dict[str, Any]:
        torch = self.torch
        if self.weights is None:
            self.weights = {
                "layers": [self._layer(m) for _ in range(m.n_layers)],
                "emb": self._randn(m.vocab_size, m.d_model, dtype=torch.bfloat16),
                "head": self._randn(m.d_model, m.vocab_size, dtype=torch.bfloat16,
                                    scale=1 / math.sqrt(m.d_model)),
                "gf": torch.ones(m.d_model, device=self.dev, dtype=torch.bfloat16),
            }
        return self.weights

    def _decode_step(self, m, wts, ids, caches, pos: int, dtype):
        """Logits [b, V] of one new token per sequence at position ``pos``; writes its K, V
        into the static caches [b, G, T, c] at ``pos`` and attends over positions 0..pos."""
        torch = self.torch
        b = ids.shape[0]
        hq, g, c = m.n_heads, m.n_kv_heads, m.d_head
        p = torch.full((1,), pos, device=self.dev)
        x = wts["emb"][ids].to(dtype)  # [b, d]
        for w, (kc, vc) in zip(wts["layers"], caches, strict=True):
            w = {k: v.to(dtype) for k, v in w.items()}
            h = self._norm(x, w["g1"])
            q = self._rope((h @ w["wq"]).view(b, g, hq // g, c), p)  # a group's queries
            k = self._rope((h @ w["wk"]).view(b, g, 1, c), p)
            kc[:, :, pos: pos + 1] = k.to(kc.dtype)
            vc[:, :, pos: pos + 1] = (h @ w["wv"]).view(b, g, 1, c).to(vc.dtype)
            # one token's GQA: the H/G queries of a group attend to its K, V as one batch
            o = torch.nn.functional.scaled_dot_product_attention(
                q, kc[:, :, : pos + 1].to(dtype), vc[:, :, : pos + 1].to(dtype))
            x = x + o.reshape(b, hq * c) @ w["wo"]
            h = self._norm(x, w["g2"])
            x = x + (torch.nn.functional.silu(h @ w["w1"]) * (h @ w["w3"])) @ w["w2"]
        return self._norm(x, wts["gf"].to(dtype)) @ wts["head"].to(dtype)

    def decode(self, m: specs.Model, batch: int, context: int, graphs: bool) -> dict[str, Any]:
        torch = self.torch
        wts = self._model(m)
        shape = (batch, m.n_kv_heads, context, m.d_head)
        caches = [(self._randn(*shape, dtype=torch.bfloat16),
                   self._randn(*shape, dtype=torch.bfloat16)) for _ in range(m.n_layers)]
        ids = torch.randint(0, m.vocab_size, (batch,), device=self.dev, generator=self.gen)
        pos = context - 1
        rows = 1  # the reference runs the first sequence in float32 (its cache: 2x the bytes)
        ref_c = [(k[:rows].float(), v[:rows].float()) for k, v in caches]
        ref = self._decode_step(m, wts, ids[:rows], ref_c, pos, torch.float32)
        del ref_c
        with torch.no_grad():
            out = self._decode_step(m, wts, ids, caches, pos, torch.bfloat16)
        err = self._err(out[:rows], ref)

        def eager():
            with torch.no_grad():
                return self._decode_step(m, wts, ids, caches, pos, torch.bfloat16)
        fn, used_graph = eager, False
        if graphs and self.cuda:
            try:
                side = torch.cuda.Stream()
                side.wait_stream(torch.cuda.current_stream())
                with torch.cuda.stream(side):
                    for _ in range(3):
                        eager()
                torch.cuda.current_stream().wait_stream(side)
                graph = torch.cuda.CUDAGraph()
                with torch.cuda.graph(graph):
                    static_out = eager()
                graph.replay()
                torch.cuda.synchronize()
                err = max(err, self._err(static_out[:rows], ref))
                fn, used_graph = graph.replay, True
            except RuntimeError:  # capture refused: time the eager step instead
                fn, used_graph = eager, False
        times = self.time(fn)
        return {"error": err, "times_s": times, "cuda_graphs": used_graph}

    def _prefill(self, m, wts, ids, dtype):
        x = wts["emb"][ids].to(dtype)  # [1, s, d]
        for w in wts["layers"]:
            x = self._block(m, w, x, dtype)
        return self._norm(x[:, -1], wts["gf"].to(dtype)) @ wts["head"].to(dtype)

    def prefill(self, m: specs.Model, tokens: int) -> dict[str, Any]:
        torch = self.torch
        wts = self._model(m)
        ids = torch.randint(0, m.vocab_size, (1, tokens), device=self.dev, generator=self.gen)
        with torch.no_grad():
            err = self._err(self._prefill(m, wts, ids, torch.bfloat16),
                            self._prefill(m, wts, ids, torch.float32))

            def run():
                with torch.no_grad():
                    return self._prefill(m, wts, ids, torch.bfloat16)
            return {"error": err, "times_s": self.time(run)}


# ----------------------------------------------------------------- the run
def kv_cache_bytes(m: specs.Model, batch: int, context: int) -> float:
    """BF16 bytes of the static cache a decode case allocates (K and V, every layer)."""
    return 2.0 * m.n_layers * m.n_kv_heads * m.d_head * 2.0 * batch * context


def run(backend, *, model: specs.Model, accelerator: specs.Accelerator, sizes: dict,
        time_limit_s: float, graphs: bool = True) -> dict[str, list]:
    """Every case, in order of importance, until ``time_limit_s``; what is left is skipped."""
    t_start = time.perf_counter()
    out: dict[str, list] = {s: [] for s in gpu_record.SECTIONS}
    out["skipped"] = []

    def case(section: str, label: str, tol: float, measure: Callable[[], dict], **fields):
        if time.perf_counter() - t_start > time_limit_s:
            out["skipped"].append({"section": section, "label": label,
                                   "reason": f"time limit of {time_limit_s:g} s reached"})
            return
        try:
            got = measure()
        except (RuntimeError, MemoryError) as err:  # out of memory, a kernel refused: go on
            got = {"skip": f"{type(err).__name__}: {str(err).splitlines()[0][:160]}"}
        if "skip" in got:
            out["skipped"].append({"section": section, "label": label, "reason": got["skip"]})
            return
        pred = gpu_record.book_prediction(section, fields, model=model, accelerator=accelerator)
        row = {"label": label, **fields}
        if "cuda_graphs" in got:
            row["cuda_graphs"] = bool(got["cuda_graphs"])
        times = [float(t) for t in got["times_s"]]
        row.update({"times_s": times, **gpu_record.summarize(times, pred["predicted_s"])})
        err = float(got["error"])
        row.update({"check_error": err, "check_tolerance": tol, "check_passed": err <= tol})
        row.update({k: v for k, v in pred.items()})
        out[section].append(row)
        verdict = "ok" if row["check_passed"] else "FAILED"
        print(f"{section:<12} {label:<38} {row['median_s'] * 1e3:10.3f} ms  predicted/measured "
              f"{row['predicted_over_measured']:.2f}  check {verdict} ({err:.1e})", flush=True)

    h = sizes["headline"]
    for dtype in ("bf16", "fp8"):
        case("matmul", f"{dtype} {h}^3 (headline)", TOLERANCE[dtype],
             lambda d=dtype: backend.matmul(h, h, h, d), dtype=dtype, m=h, n=h, k=h,
             flop=2.0 * h**3, headline=True)
    for n_bytes in sizes["copy_bytes"]:
        case("copy", f"{units.fmt_bytes(n_bytes, binary=True)} buffer", TOLERANCE["copy"],
             lambda n=n_bytes: backend.copy(n), buffer_bytes=int(n_bytes),
             bytes_moved=float(2 * (n_bytes // 2) * 2))
    s = sizes["seq_len"]
    for b in sizes["micro_batches"]:
        case("train_block", f"micro-batch {b} x {s} tokens", TOLERANCE["block"],
             lambda b=b: backend.train_block(model, b, s), micro_batch=b, seq_len=s)
    backend.load_model(model)  # the weights first: the cache fit is judged with them in place
    for ctx in sizes["decode_contexts"]:
        for b in sizes["decode_batches"]:
            label = f"batch {b}, context {ctx:,}"
            need = kv_cache_bytes(model, b, ctx) + 2 * kv_cache_bytes(model, 1, ctx)
            if need > KV_HEADROOM * backend.free_bytes():
                out["skipped"].append({"section": "decode", "label": label, "reason":
                                       f"its {need / 1e9:.1f} GB KV cache does not fit"})
                continue
            case("decode", label, TOLERANCE["model"],
                 lambda b=b, ctx=ctx: backend.decode(model, b, ctx, graphs),
                 batch=b, context_tokens=ctx)
    for t in sizes["prefill_tokens"]:
        case("prefill", f"{t:,} tokens", TOLERANCE["model"], lambda t=t: backend.prefill(model, t),
             tokens=t)
    for dtype in ("bf16", "fp8"):
        for mm in sizes["grid"]:
            for nn in sizes["grid"]:
                for kk in sizes["grid"]:
                    case("matmul", f"{dtype} {mm}x{nn}x{kk}", TOLERANCE[dtype],
                         lambda a=mm, b=nn, c=kk, d=dtype: backend.matmul(a, b, c, d),
                         dtype=dtype, m=mm, n=nn, k=kk, flop=2.0 * mm * nn * kk, headline=False)
    # an FP8 skip is the same for every shape: keep one line per reason, not 64
    seen, kept = set(), []
    for row in out["skipped"]:
        key = (row["section"], row["reason"]) if "FP8" in row["reason"] else id(row)
        if key not in seen:
            seen.add(key)
            kept.append(row)
    out["skipped"] = kept
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--backend", choices=("torch", "numpy"), default="torch")
    p.add_argument("--device", default="cuda", help="torch device (cpu: a dry run)")
    p.add_argument("--quick", action="store_true", help="tiny shapes: seconds, not minutes")
    p.add_argument("--model", default="llama3_8b", help="registry model whose shapes are timed")
    p.add_argument("--accelerator", default="h200",
                   help="registry key or TOML file of the chip the predictions are for")
    p.add_argument("--repeats", type=int, default=10, help="timed repeats per case")
    p.add_argument("--warmup", type=int, default=3, help="untimed calls before timing")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--time-limit-s", type=float, default=450.0,
                   help="skip what is left after this many seconds")
    p.add_argument("--no-cuda-graphs", action="store_true")
    p.add_argument("--fine-grid", action="store_true",
                   help="m, n, k at every power of 2 from 256 to 16384 (343 shapes a dtype)")
    p.add_argument("--out", type=Path, default=None, help="TOML record to write")
    args = p.parse_args(argv)

    t0 = time.perf_counter()
    acc = (specs.accelerator(args.accelerator) if args.accelerator in specs.accelerators()
           else specs.accelerator_from_toml(args.accelerator))
    model = specs.model(args.model)
    if args.quick or args.backend == "numpy":
        model = dataclasses.replace(model, **TINY)
    sizes = QUICK if (args.quick or args.backend == "numpy") else FULL
    if args.fine_grid and sizes is FULL:
        sizes = {**FULL, "grid": [2**i for i in range(8, 15)]}
    kw = {"seed": args.seed, "n_warmup": args.warmup, "n_repeats": args.repeats}
    backend = (NumpyBackend(**kw) if args.backend == "numpy"
               else TorchBackend(**kw, device=args.device))
    info = backend.info()
    cases = run(backend, model=model, accelerator=acc, sizes=sizes,
                time_limit_s=args.time_limit_s, graphs=not args.no_cuda_graphs)
    record: dict[str, Any] = {
        "schema": gpu_record.SCHEMA,
        "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "backend": "torch-cpu" if args.backend == "torch" and not backend.cuda else args.backend,
        "quick": bool(args.quick or args.backend == "numpy"),
        "accelerator": acc.key,
        "model": args.model,
        "elapsed_s": time.perf_counter() - t0,
        "device": info["device"],
        "versions": {"python": platform.python_version(), "llmphys": __version__,
                     **info["versions"]},
        "settings": {"n_warmup": args.warmup, "n_repeats": args.repeats, "seed": args.seed,
                     "time_limit_s": float(args.time_limit_s)},
        "model_shape": {k: getattr(model, k) for k in TINY},
        **{k: v for k, v in cases.items() if v},
    }
    gpu_record.validate(record)
    text = gpu_record.dumps(record)
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text)
        print(f"wrote {args.out} ({record['elapsed_s']:.0f} s)")
    else:
        sys.stdout.write(text)
    failed = [r["label"] for s in gpu_record.SECTIONS for r in record.get(s, [])
              if not r["check_passed"]]
    if failed:
        print(f"gpu_check: {len(failed)} case(s) failed the float32 check: {failed}",
              file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
