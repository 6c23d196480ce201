"""Language identification with py3langid, scored per language against the crawl's labels.

py3langid is a maintained fork of langid.py (Lui and Baldwin 2012, ACL demo, "langid.py:
An Off-the-shelf Language Identification Tool"): a multinomial naive Bayes classifier over
byte n-grams selected for being informative about language across domains, trained on 97
languages. We use it with normalised probabilities so that a confidence threshold can be
applied, as FineWeb does with fastText (keep English above 0.65; Penedo et al. 2024,
arXiv:2406.17557, sec. 3.3).

Home: chapters/02_data.ipynb.
"""

from __future__ import annotations

import functools

import numpy as np
from py3langid.langid import MODEL_FILE, LanguageIdentifier

UNDETERMINED = "und"


@functools.lru_cache(maxsize=1)
def identifier() -> LanguageIdentifier:
    """The 97-language model shipped inside py3langid, with probabilities normalised."""
    return LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)


def identify(
    texts: list[str], *, min_confidence: float = 0.0, max_chars: int = 600
) -> tuple[list[str], np.ndarray]:
    """(ISO 639-1 code, probability) of each text; 'und' below ``min_confidence`` or if empty.

    Only the first ``max_chars`` characters are classified: py3langid walks its byte
    automaton in Python, and a few hundred characters already decide (see the chapter's
    accuracy-versus-length exercise). The label 'zxx' means "no linguistic content".

    >>> langs, p = identify(["der die und das ist nicht ein zu den von mit sich"])
    >>> langs[0], bool(p[0] > 0.9)
    ('de', True)
    """
    if not 0.0 <= min_confidence < 1.0:
        raise ValueError(f"min_confidence must lie in [0, 1), got {min_confidence!r}")
    ident = identifier()
    langs, probs = [], np.zeros(len(texts))
    for i, t in enumerate(texts):
        if not t.strip():
            langs.append(UNDETERMINED)
            continue
        lang, p = ident.classify(t[:max_chars])
        probs[i] = p
        langs.append(lang if p >= min_confidence else UNDETERMINED)
    return langs, probs


def per_language_scores(true: list[str], predicted: list[str]) -> dict[str, dict[str, float]]:
    """Precision, recall, F1 and support for every true language (one-vs-rest).

    >>> s = per_language_scores(["en", "en", "de"], ["en", "de", "de"])
    >>> s["de"]["precision"], s["de"]["recall"], s["en"]["f1"]
    (0.5, 1.0, 0.6666666666666666)
    """
    if len(true) != len(predicted):
        raise ValueError(f"true and predicted differ in length: {len(true)} != {len(predicted)}")
    t, p = np.asarray(true), np.asarray(predicted)
    out = {}
    for lang in sorted(set(true)):
        tp = float(np.sum((t == lang) & (p == lang)))
        prec = tp / max(float(np.sum(p == lang)), 1.0)
        rec = tp / float(np.sum(t == lang))
        f1 = 2 * prec * rec / (prec + rec) if prec + rec else 0.0
        out[lang] = {
            "precision": prec,
            "recall": rec,
            "f1": f1,
            "support": float(np.sum(t == lang)),
        }
    return out


def confusions(true: list[str], predicted: list[str]) -> dict[tuple[str, str], int]:
    """Counts of every (true, predicted) pair that disagrees, largest first."""
    pairs: dict[tuple[str, str], int] = {}
    for a, b in zip(true, predicted, strict=True):
        if a != b:
            pairs[(a, b)] = pairs.get((a, b), 0) + 1
    return dict(sorted(pairs.items(), key=lambda kv: (-kv[1], kv[0])))
