"""llmphys: the model code that every chapter of the book imports.

Modules (one concept each; import modules, not names)::

    units       named SI and binary prefixes, bytes per element by dtype, formatters
    specs       frozen Accelerator and Model specs loaded from data/*.toml
    roofline    arithmetic intensity, ridge points, attainable FLOP/s, kernel time
    accounting  parameter and FLOP counts of a decoder-only transformer (dense, MoE, MLA)
    kv_cache    bytes of the key/value cache (MHA, MQA, GQA, MLA, sliding window)
    training    bytes of training state per parameter, run time from MFU
    markov      a token source with an exactly known entropy rate; n-gram baselines
    tables      registry tables as Markdown text for the chapters
    pipeline    (package) the data chapter's pretraining data pipeline, one module per stage
    plots       (package) the book-wide figure style and every figure of the book

Every quantity is a plain float in SI base units with the unit in its name
(``hbm_bytes_per_s``, ``step_time_s``); see chapters/notation.md.
"""

__version__ = "0.1.0"
