import itertools

import numpy as np
import pytest

from llmphys.pipeline import crawl, run


@pytest.fixture(scope="module")
def result():
    c = crawl.generate_crawl(200, rng=np.random.default_rng(21))
    return c, run.run(c, rng=np.random.default_rng(22))


def test_each_stage_only_removes_documents(result):
    c, r = result
    counts = [int(r.alive[s].sum()) for s in run.STAGES]
    assert counts[0] == len(c.documents) and all(a >= b for a, b in itertools.pairwise(counts))


def test_filters_remove_only_what_they_should(result):
    # Precision of every stage is 1 on this seed; recall is the chapter's subject.
    c, r = result
    for stage, (precision, recall) in run.stage_scores(c, r).items():
        assert precision > 0.95 and recall > 0.4, stage


def test_funnel_counts_every_document_once(result):
    c, r = result
    f = run.funnel(c, r)
    assert sum(v[0] for v in f.values()) == len(c.documents)
