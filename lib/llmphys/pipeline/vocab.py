"""The vocabulary-size trade-off of a BPE tokenizer: shorter sequences against a larger head.

A vocabulary of V tokens at model width d costs V d input-embedding parameters (looked up, not
multiplied) and, untied, V d more in the output head, which every token multiplies: the logits
cost 2 V d FLOP a token forward. The rest of the model, about 12 n_layers d^2 parameters
(Kaplan et al. 2020, arXiv:2001.08361, eq. 2.1, without embeddings), costs 2 N_body FLOP a
token. What the text costs is per byte, not per token:

    FLOP per byte = t(V) (2 N_body + 2 V d),      t(V) = tokens per byte at vocabulary V,

so a larger vocabulary pays while the fall in t(V) outweighs the growth of the head. BPE
training is greedy and sequential, so the tokenizer with V' < V tokens is exactly the first
V' - 256 merges of the one with V: one training run gives the whole sweep.

A byte-level BPE has no unknown token: a character its merges do not cover is spelled out in
its raw UTF-8 bytes, the "byte fallback" that LLaMA's SentencePiece tokenizer adds to a
character vocabulary (Touvron et al. 2023, arXiv:2302.13971, sec. 2.1). Single-byte tokens
>= 0x80 are such fragments of a character; their share of the tokens measures how much of a
language the vocabulary leaves to bytes.

Home: chapters/02_data.ipynb, section "How large a vocabulary?".
"""

from __future__ import annotations

import numpy as np

from .. import accounting, specs
from . import bpe

N_BYTES = 256  # the byte-level alphabet every BPE vocabulary starts from
FIRST_NON_ASCII_BYTE = 0x80  # UTF-8 bytes >= 0x80 are parts of a multi-byte character
KAPLAN_BODY_PARAMS_PER_D2 = 12  # 4 d^2 attention + 8 d^2 MLP (d_ff = 4 d) per layer


def _check_positive_int(name: str, value: float) -> int:
    if int(value) != value or value < 1:
        raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
    return int(value)


def prefix_tokenizer(tok: bpe.BytePairTokenizer, vocab_size: int) -> bpe.BytePairTokenizer:
    """The tokenizer of the first ``vocab_size - 256`` merges of ``tok`` (what training with that
    vocabulary would have learned, since BPE training is greedy)."""
    v = _check_positive_int("vocab_size", vocab_size)
    if not N_BYTES <= v <= tok.vocab_size:
        raise ValueError(f"vocab_size must be in [256, {tok.vocab_size}], got {vocab_size!r}")
    out = bpe.BytePairTokenizer()
    out.merges = {p: i for p, i in tok.merges.items() if i < v}
    out.vocab = {i: b for i, b in tok.vocab.items() if i < v}
    return out


def sequence_stats(encode, texts: list[str]) -> dict[str, float]:
    """Tokens per byte of ``texts`` and the share of tokens that are raw non-ASCII bytes.

    >>> t = bpe.BytePairTokenizer()
    >>> sequence_stats(t.encode, ["ab", "é"])   # bytes only: 4 tokens, 2 of them bytes of é
    {'tokens_per_byte': 1.0, 'byte_fallback_share': 0.5}
    """
    ids = [i for t in texts for i in encode(t)]
    n_bytes = sum(len(t.encode("utf-8")) for t in texts)
    if n_bytes == 0:
        raise ValueError("texts must hold at least one byte")
    arr = np.asarray(ids, dtype=np.int64)
    fallback = (arr >= FIRST_NON_ASCII_BYTE) & (arr < N_BYTES)
    return {
        "tokens_per_byte": len(ids) / n_bytes,
        "byte_fallback_share": float(fallback.mean()) if len(ids) else 0.0,
    }


def body_params(*, n_layers: int, d_model: int) -> float:
    """Non-embedding parameters (count) of a standard block stack, 12 n_layers d^2 (Kaplan eq. 2.1).

    >>> body_params(n_layers=12, d_model=768)
    84934656.0
    """
    return float(
        KAPLAN_BODY_PARAMS_PER_D2
        * _check_positive_int("n_layers", n_layers)
        * _check_positive_int("d_model", d_model) ** 2
    )


def embedding_params(*, vocab_size: int, d_model: int, tied: bool = False) -> float:
    """Parameters (count) of the input embedding and, unless tied, the output head: V d or 2 V d.

    >>> embedding_params(vocab_size=50_257, d_model=768, tied=True)
    38597376.0
    """
    v = _check_positive_int("vocab_size", vocab_size)
    d = _check_positive_int("d_model", d_model)
    return float(v * d * (1 if tied else 2))


def flop_per_byte(
    *, tokens_per_byte: float, n_body_params: float, vocab_size: int, d_model: int
) -> dict[str, float]:
    """Forward FLOP per byte of text, by part: body 2 N_body t and logits 2 V d t.

    >>> flop_per_byte(tokens_per_byte=0.25, n_body_params=1e6, vocab_size=1000, d_model=100)
    {'body': 500000.0, 'logits': 50000.0}
    """
    if tokens_per_byte <= 0 or n_body_params <= 0:
        raise ValueError(
            "tokens_per_byte and n_body_params must be > 0, "
            f"got {tokens_per_byte!r}, {n_body_params!r}"
        )
    v = _check_positive_int("vocab_size", vocab_size)
    d = _check_positive_int("d_model", d_model)
    return {"body": 2.0 * n_body_params * tokens_per_byte, "logits": 2.0 * v * d * tokens_per_byte}


def break_even_tokens_ratio(
    *, n_body_params: float, vocab_from: int, vocab_to: int, d_model: int
) -> float:
    """t(V_to) / t(V_from) (fraction) below which the larger vocabulary costs fewer FLOP per
    byte: (N_body + V_from d) / (N_body + V_to d).

    >>> round(break_even_tokens_ratio(n_body_params=1e6, vocab_from=1000, vocab_to=2000,
    ...                               d_model=100), 4)
    0.9167
    """
    if n_body_params <= 0:
        raise ValueError(f"n_body_params must be > 0, got {n_body_params!r}")
    d = _check_positive_int("d_model", d_model)
    a = _check_positive_int("vocab_from", vocab_from)
    b = _check_positive_int("vocab_to", vocab_to)
    return (n_body_params + a * d) / (n_body_params + b * d)


def vocab_sweep(
    tok: bpe.BytePairTokenizer, texts_by_group: dict[str, list[str]], vocab_sizes: list[int]
) -> dict[str, np.ndarray]:
    """For each vocabulary size (a prefix of ``tok``) and text group: tokens per byte
    (``tokens_per_byte/<group>``) and the byte-fallback share (``byte_fallback_share/<group>``)."""
    tpb: dict[str, list[float]] = {g: [] for g in texts_by_group}
    fb: dict[str, list[float]] = {g: [] for g in texts_by_group}
    for v in vocab_sizes:
        enc = prefix_tokenizer(tok, v).encode
        for g, texts in texts_by_group.items():
            s = sequence_stats(enc, texts)
            tpb[g].append(s["tokens_per_byte"])
            fb[g].append(s["byte_fallback_share"])
    out: dict[str, np.ndarray] = {"vocab_size": np.asarray(vocab_sizes, dtype=np.int64)}
    for g in texts_by_group:
        out[f"tokens_per_byte/{g}"] = np.array(tpb[g])
        out[f"byte_fallback_share/{g}"] = np.array(fb[g])
    return out


def flop_per_byte_sweep(
    tokens_per_byte: np.ndarray, vocab_sizes: np.ndarray, *, n_layers: int, d_model: int
) -> dict[str, np.ndarray]:
    """Forward FLOP per byte (arrays, by part) of a 12 n_layers d^2 body across a vocabulary
    sweep, the total relative to the sweep's first entry (``relative``) and the vocabulary size
    with the least total (``best_vocab_size``, one element)."""
    n_body = body_params(n_layers=n_layers, d_model=d_model)
    parts = [
        flop_per_byte(
            tokens_per_byte=float(t), n_body_params=n_body, vocab_size=int(v), d_model=d_model
        )
        for t, v in zip(tokens_per_byte, vocab_sizes, strict=True)
    ]
    body = np.array([p["body"] for p in parts])
    logits = np.array([p["logits"] for p in parts])
    total = body + logits
    best = np.asarray(vocab_sizes)[int(np.argmin(total))]
    return {
        "body": body,
        "logits": logits,
        "relative": total / total[0],
        "best_vocab_size": np.array([best]),
    }


def vocabulary_shares(model: specs.Model) -> dict[str, float]:
    """A registry model's vocabulary cost (fractions): the embedding and output-head share of its
    parameters, and the logits' share of its forward FLOP per token, 2 V d / (2 N_body + 2 V d).

    >>> round(vocabulary_shares(specs.model("llama3_8b"))["params"], 3)
    0.131
    """
    parts = accounting.param_breakdown(model)
    total = accounting.n_params(model)
    n_body = total - parts["embedding"] - parts["output_head"]
    f = flop_per_byte(
        tokens_per_byte=1.0,
        n_body_params=n_body,
        vocab_size=model.vocab_size,
        d_model=model.d_model,
    )
    return {
        "params": (parts["embedding"] + parts["output_head"]) / total,
        "logits_flop": f["logits"] / (f["body"] + f["logits"]),
        "n_body_params": n_body,
    }
