"""llmphys: the model code that every chapter of the book imports.

Modules (one concept each; import modules, not names)::

    units       named SI and binary prefixes, bytes per element by dtype, formatters
    specs       frozen Accelerator and Model specs loaded from data/*.toml
    roofline    arithmetic intensity, ridge points, attainable FLOP/s, kernel time
    accounting  parameter and FLOP counts of a decoder-only transformer (dense, MoE, MLA)
    kv_cache    bytes of the key/value cache (MHA, MQA, GQA, MLA, sliding window)
    training    bytes of training state per parameter, run time from MFU
    markov      a token source with an exactly known entropy rate; n-gram baselines
    trends      growth per two years of compute, HBM and links, fitted from the registry
    benchmark   this machine's measured matmul FLOP/s and memory bandwidth (empirical roofline)
    precision   FP8 (E4M3, E5M2) and FP4 (E2M1) emulation, per-tensor and per-block scaling
    comms       alpha-beta cost of collectives; data parallelism's all-reduce share of a step
    parallelism memory per GPU under ZeRO/TP/PP, activation memory, pipeline bubble, traffic
    reliability job MTBF, Young/Daly checkpoint interval, goodput, a Monte-Carlo check
    mfu         model FLOP utilisation (PaLM's definition) of published training runs
    tables      registry tables as Markdown text for the chapters
    plots       (package) the book-wide figure style and every figure of the book

Every quantity is a plain float in SI base units with the unit in its name
(``hbm_bytes_per_s``, ``step_time_s``); see chapters/notation.md.
"""

__version__ = "0.1.0"
