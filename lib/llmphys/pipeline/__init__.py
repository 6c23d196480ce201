"""A pretraining data pipeline, one module per stage (the data chapter, chapters/02_data).

    crawl     a deterministic synthetic web crawl, every page labelled with its ground truth
    sites     the crawl's web sites: boilerplate and HTML rendering
    text      word splitting, normalisation, stable hashes and n-gram hashing shared by stages
    extract   HTML to main text (boilerplate removal) and its word-level precision and recall
    langid    language identification with py3langid, scored per language
    quality   Gopher- and FineWeb-style heuristic quality rules with per-rule statistics
    classifier a planted quality register and a hashed n-gram logistic-regression filter
    pii       regex redaction of e-mail, phone and IPv4, with recall on planted PII
    toxicity  a word-list toxicity filter and its binomial false-positive rate
    dedup     exact dedup, MinHash signatures, LSH banding and its S-curve, duplicate clusters
    substring line dedup and suffix-array exact-substring dedup (Lee et al. 2022), their cost
    decontam  n-gram overlap against benchmark items
    bpe       a byte-level BPE tokenizer written for reading; fertility across languages
    unigram   a unigram-LM tokenizer (EM and pruning, Viterbi), with and without byte fallback
    lattice   the lattice of pieces in a batch of words: Viterbi and forward-backward, in numpy
    mixture   domain weights, epochs per domain, annealing, the value of repeated tokens
    mixture_opt choosing domain weights from proxy runs: a RegMix-style regression
    collapse  recursive training on a model's own samples: replace, accumulate, verify
    run       all stages in order, scored against the crawl's labels
    zipf_text text whose Zipf vocabulary keeps growing (Heaps' law), for benchmarks
    speed     the dedup and BPE benchmarks against datasketch and tokenizers, and their table
    studies   the data chapter's fixed-seed runs, shared with the claims ledger

Stages take and return plain Python and numpy values; randomness comes in as
``rng: np.random.Generator``.

Home: chapters/02_data.ipynb.
"""
