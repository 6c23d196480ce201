import numpy as np
import pytest

from llmphys.pipeline import crawl, langid


def test_identifies_every_crawl_language_from_sixty_words():
    # Sixty words drawn from each language's frequency list; py3langid covers all six.
    rng = np.random.default_rng(0)
    langs = list(crawl.LANGUAGES) * 5
    texts = [" ".join(crawl.sample_words(lang, 60, rng)) for lang in langs]
    pred, prob = langid.identify(texts)
    assert pred == langs and prob.min() > 0.9


def test_scores_per_language_are_one_vs_rest():
    s = langid.per_language_scores(["en", "en", "fr", "fr"], ["en", "fr", "fr", "fr"])
    assert s["fr"]["precision"] == pytest.approx(2 / 3) and s["en"]["recall"] == 0.5
    assert langid.confusions(["en", "en"], ["fr", "en"]) == {("en", "fr"): 1}


def test_low_confidence_and_empty_text_are_undetermined():
    pred, _ = langid.identify(["", "ok"], min_confidence=0.999999)
    assert pred == ["und", "und"]
    with pytest.raises(ValueError, match="min_confidence"):
        langid.identify(["x"], min_confidence=1.5)
