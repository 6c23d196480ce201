"""The data chapter's fixed-seed studies (llmphys.pipeline.studies), on a smaller crawl."""

import dataclasses

import numpy as np
import pytest

from llmphys import specs
from llmphys.pipeline import studies

# A quarter of the book's crawl: the same seeds, a few seconds less to run.
SMALL = dataclasses.replace(specs.scenario("crawl_800"), n_pages=200)


def test_a_verbatim_quote_is_always_caught_by_a_13_gram_check():
    # Every benchmark item is longer than 13 words, so a page quoting one verbatim contains each
    # of its 13-grams: recall 1 exactly, whatever the crawl.
    assert studies.decontam_sweep(SMALL, (13,), edited=False)[13]["recall"] == 1.0


def test_each_n_of_the_decontamination_sweep_does_not_depend_on_the_others():
    # The ledger reads n = 13 alone; the chapter reads it from a sweep over ten values of n.
    alone = studies.decontam_sweep(SMALL, (13,))[13]
    swept = studies.decontam_sweep(SMALL, (3, 8, 13, 30))
    assert swept[13] == alone
    assert swept[3]["recall"] >= swept[13]["recall"] >= swept[30]["recall"]  # longer n, fewer hits


def test_a_word_the_refitted_model_loses_never_comes_back():
    # Under "replace" a word whose count reaches zero has probability zero in every later
    # generation, so the survivors never increase; the words lost are first minus last.
    alive = np.array(studies.collapse_survivors(SMALL, "replace"))
    assert alive.size == studies.N_COLLAPSE_GENERATIONS + 1
    assert np.all(np.diff(alive) <= 0) and alive[-1] < alive[0]
    assert studies.collapse_words_lost(SMALL, "replace") == alive[0] - alive[-1]
    q = studies.collapse_run(SMALL, "replace")
    np.testing.assert_allclose(q.sum(axis=1), 1.0, rtol=1e-12)  # each generation a distribution
    with pytest.raises(ValueError):
        q[0, 0] = 0.5  # cached: read-only


def test_keeping_the_real_data_loses_fewer_words_than_replacing_it():
    assert studies.collapse_words_lost(SMALL, "accumulate") < studies.collapse_words_lost(
        SMALL, "replace"
    )


def test_the_book_tokenizer_has_its_vocabulary_and_taxes_some_language_more_than_english():
    assert studies.book_tokenizer(SMALL).vocab_size == studies.BPE_VOCAB
    assert studies.fertility_premium(SMALL) > 1.0
