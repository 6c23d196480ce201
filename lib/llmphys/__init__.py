"""llmphys: the model code that every chapter of the book imports.

Modules (one concept each; import modules, not names)::

    units       named SI and binary prefixes, bytes per element by dtype, formatters
    specs       frozen Accelerator and Model specs loaded from data/*.toml
    roofline    arithmetic intensity, ridge points, attainable FLOP/s, kernel time
    accounting  parameter and FLOP counts of a decoder-only transformer (dense, MoE, MLA)
    kv_cache    bytes of the key/value cache (MHA, MQA, GQA, MLA, sliding window)
    training    bytes of training state per parameter, run time from MFU
    markov      a token source with an exactly known entropy rate; n-gram baselines
    objective   cross-entropy, perplexity, bits per token and bits per byte
    tinylm      a tiny transformer in numpy: forward, hand-written backward, AdamW
    tinylm_train  its corpus (an order-2 source), training loop and probes
    compression code length under a model, arithmetic coding, zlib/bz2/lzma
    tables      registry tables as Markdown text for the chapters
    plots       (package) the book-wide figure style and every figure of the book

Every quantity is a plain float in SI base units with the unit in its name
(``hbm_bytes_per_s``, ``step_time_s``); see chapters/notation.md.
"""

__version__ = "0.1.0"
