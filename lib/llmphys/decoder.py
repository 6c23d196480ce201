"""The one forward pass of the library's numpy decoders: embed, L residual blocks, head.

A decoder-only transformer (Vaswani et al. 2017, arXiv:1706.03762; Radford et al. 2019) is
a running sum, the residual stream (Elhage et al. 2021, "A Mathematical Framework for
Transformer Circuits"), that every part reads and writes:

    h_0      = embed(tokens)                   token embedding (+ a learned position table)
    h_{l+.5} = h_l      + attn_l(h_l)          each sublayer reads the stream, its pre-norm
    h_{l+1}  = h_{l+.5} + ffn_l(h_{l+.5})      included, and adds its write to it
    logits   = head(h_L)                       final norm and unembedding

A post-norm model (Vaswani et al. 2017) normalises the sum instead, h <- N(h + f(h)): the
optional ``attn_post`` and ``ffn_post`` parts are applied to the stream after each add.

:func:`forward` is that loop, once, for every numpy model of the book. What the models differ
in is what the parts compute, handed in as a :class:`Decoder`: chapter 1's ``tinylm`` adds a
learned position table in ``embed``, has a ReLU MLP with biases, and keeps each sublayer's
intermediate tensors for its hand-written backward pass (``norm_placement`` runs the same
parts with the norms moved after the add); chapter 3's ``transformer`` rotates
queries and keys (RoPE) inside ``attn``, runs GQA/MLA against a KV cache, and a SwiGLU, GELU
or MoE ``ffn``. The loop names the writes "embed", "attn0", "mlp0", ... so that one can be
left out of the sum (ablation), and keeps each block's input h_l, which is what activation
checkpointing stores (Chen et al. 2016, arXiv:1604.06174).

Home: chapters/01_foundations.ipynb.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import numpy as np

Sublayer = Callable[[int, np.ndarray], np.ndarray]  # (layer l, stream h) -> its write to h


@dataclasses.dataclass(frozen=True, kw_only=True)
class Decoder:
    """The parts of a decoder-only model; :func:`forward` runs the same loop over any of them.

    ``embed`` maps token ids to h_0, ``attn`` and ``ffn`` map (layer, stream) to that
    sublayer's write (its pre-norm included), ``head`` maps h_L to logits; ``attn_post`` and
    ``ffn_post``, when given, map (layer, h + write) to the new stream (a post-norm). The parts
    may keep whatever they compute (a backward pass reads it); the loop only adds.
    """

    n_layers: int
    embed: Callable[[np.ndarray], np.ndarray]
    attn: Sublayer
    ffn: Sublayer
    head: Callable[[np.ndarray], np.ndarray]
    attn_post: Sublayer | None = None
    ffn_post: Sublayer | None = None

    def write_names(self) -> list[str]:
        """Names of the residual writes, in the order they are added.

        >>> Decoder(n_layers=2, embed=abs, attn=max, ffn=max, head=abs).write_names()
        ['embed', 'attn0', 'mlp0', 'attn1', 'mlp1']
        """
        return ["embed"] + [f"{kind}{i}" for i in range(self.n_layers) for kind in ("attn", "mlp")]


@dataclasses.dataclass(frozen=True, kw_only=True)
class Pass:
    """What one forward pass leaves: logits, the final stream h_L, the writes, the block inputs.

    ``writes`` maps each name of :meth:`Decoder.write_names` to the array it added (empty when
    the pass was asked not to keep them); ``layer_inputs[l]`` is h_l, block l's input.
    """

    logits: np.ndarray
    stream: np.ndarray
    writes: dict[str, np.ndarray]
    layer_inputs: list[np.ndarray]


def block(
    decoder: Decoder, i: int, h: np.ndarray, *, ablate: str | None = None
) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """Block ``i`` on the stream h: (h + attn_i(h) + ffn_i(...), the two writes by name).

    A write named ``ablate`` is computed and returned but not added to the stream; a post
    part, if the decoder has one, then maps the stream to the next.

    >>> dec = Decoder(n_layers=1, embed=float, attn=lambda i, h: 2 * h, ffn=lambda i, h: h + 1,
    ...               head=float)
    >>> block(dec, 0, 1.0)  # 1 + 2*1 = 3, then 3 + (3 + 1) = 7
    (7.0, {'attn0': 2.0, 'mlp0': 4.0})
    """
    writes = {}
    steps = (("attn", decoder.attn, decoder.attn_post), ("mlp", decoder.ffn, decoder.ffn_post))
    for kind, sublayer, post in steps:
        name = f"{kind}{i}"
        writes[name] = sublayer(i, h)
        if name != ablate:
            h = h + writes[name]
        if post is not None:
            h = post(i, h)
    return h, writes


def forward(
    decoder: Decoder, tokens: np.ndarray, *, ablate: str | None = None, keep_writes: bool = True
) -> Pass:
    """Run ``decoder`` on ``tokens``: h_0 = embed(tokens), L blocks, logits = head(h_L).

    ``ablate`` names one residual write (see :meth:`Decoder.write_names`) to leave out of the
    sum; ``keep_writes=False`` keeps none of them in the returned :class:`Pass`.

    >>> dec = Decoder(n_layers=2, embed=lambda t: 1.0 * t, attn=lambda i, h: h,
    ...               ffn=lambda i, h: 0.0 * h, head=lambda h: h)
    >>> forward(dec, 3, ablate="attn1").logits  # 3, doubled by attn0 only
    6.0
    """
    names = decoder.write_names()
    if ablate is not None and ablate not in names:
        raise ValueError(f"ablate={ablate!r} is not a residual write; allowed: {', '.join(names)}")
    embedded = decoder.embed(tokens)
    writes = {"embed": embedded}
    h = np.zeros_like(embedded) if ablate == "embed" else embedded
    inputs = []
    for i in range(decoder.n_layers):
        inputs.append(h)
        h, block_writes = block(decoder, i, h, ablate=ablate)
        if keep_writes:
            writes |= block_writes
    return Pass(
        logits=decoder.head(h),
        stream=h,
        writes=writes if keep_writes else {},
        layer_inputs=inputs,
    )
