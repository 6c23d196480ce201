"""llmphys: the model code that every chapter of the book imports.

Modules (one concept each; import modules, not names)::

    units       named SI and binary prefixes, bytes per element by dtype, formatters
    specs       frozen Accelerator and Model specs loaded from data/*.toml
    roofline    arithmetic intensity, ridge points, attainable FLOP/s, kernel time
    achieved    published kernel rates (data/achieved_rates.toml) over their datasheet ceilings
    accounting  parameter and FLOP counts of a decoder-only transformer (dense, MoE, MLA)
    kv_cache    KV-cache bytes (MHA, MQA, GQA, MLA, sliding window); decode-attention FLOP
    nn          numpy primitives the reference models share: softmax, RMSNorm
    attention   numpy attention for the tiny decoder: RoPE, MHA/GQA/MQA, MLA, KV cache
    attention_phases  attention per token in prefill and in decode: FLOP, bytes, intensity
    flash_attention   the HBM bytes of naive and tiled (Flash) attention, counted
    mixer_costs       what a sequence mixer keeps per token: attention against recurrent state
    linear_recurrence a decayed linear-attention layer, recurrent and parallel forms
    norm_choices      what QK-norm and logit soft-capping prevent
    norm_placement    pre-norm against post-norm gradients at initialisation
    rope_scaling      RoPE frequencies and the ways of stretching them past the trained context
    block_savings     what a parallel attention+MLP block and tied embeddings save
    init_scale        initialisation and width: activation scale at init under each rule
    xent_gradient     the softmax cross-entropy gradient identity and a finite-difference check
    decoder     the one residual loop of the numpy decoders (tinylm, transformer, norm_placement)
    transformer the tiny numpy decoder, configured by the same specs.Model as the formulas
    moe         top-k routing, load balance, experts touched, all-to-all traffic
    moe_capacity      MoE routing under a capacity limit: dropping, expert choice, fine grain
    training    bytes of training state per parameter, run time from MFU
    training_practice learning-rate schedules, gradient clipping and FP16 loss scaling
    activation_memory activations kept for backward, with and without recomputation
    zero_memory       training memory per GPU under ZeRO stages 0-3 and their DP traffic
    markov      a token source with an exactly known entropy rate; n-gram baselines
    inference   decode-step and prefill time and cost vs batch; decode ceilings; balance batch
    streamed_weights  weights a step streams: dense part, routed experts touched by B tokens
    decoding    greedy, temperature, top-k, top-p and beam search
    kv_paging   KV-cache allocation: contiguous reservation against blocks on demand
    kv_quant    quantised KV caches: bytes per element with scales, and the error they add
    serving     serving mechanisms: per-operator balance batch, batch-1 floors, token prices
    predict     the prediction models as a package: a training step (train_step), a
                deployment (serve), the serving simulator (simulate_serving), the layout
                search (plan_training, fewest_chips), the cheapest deployment for a target
                (plan_serving) and cost (serving_cost, training_cost)
    hf_config   a Hugging Face config.json (a file, a folder, a cached repo id) as a Model
    hf_hub      finding and reading a config.json: a file, a folder, the local hub cache
    hf_blocks   a config's typed fields and its family blocks (MoE, MLA, GPT-2)
    hf_checkpoint  what a checkpoint stores beside the model: MTP layers, FP8 scales, masks
    cli         the ``llmphys`` command line: run and main (its parts in the cli_* modules)
    cli_plan    the command line's plan and cost tables
    cli_reports  what params, kv, roofline, chips and models print; resolving a model or chip
    cli_step    what train and serve print: a layout's step, memory, throughput; DoesNotFit
    cli_args    the command line's parser: subcommands, flags, defaults
    cli_step_args  train's and serve's flags, and the checks of every flag's value
    batching    the "train departs every T" batch schedule, simulated and in closed form
    kv_tiers    restoring a conversation's KV cache from HBM, DRAM, NVMe or by recompute
    kv_offload  a node's KV tiers priced: capacity, fetch time, the reuse intervals each wins
    reasoning_cost  a reasoning request against a chat turn, priced by the serving model
    scale_up    MoE all-to-all, parameter bounds of a scale-up domain, pipelining
    compute_split  pretraining vs RL vs inference; lifetime-optimal overtraining
    best_of_n   test-time compute on a toy task: best-of-n with majority vote or a verifier
    economics   sourced prices (data/prices.toml), cost of a GPU-hour, depreciation
    scaling_laws      Kaplan and Chinchilla loss laws, compute-optimal N and D, IsoFLOPs
    scaling_fit       Huber/L-BFGS fit of L(N, D) with multiple starts; bootstrap
    inference_optimal training + lifetime inference compute at fixed loss (Sardana et al.)
    data_constrained  effective data under repetition (Muennighoff et al.)
    emergence         per-token loss vs exact match on multi-token answers (Schaeffer et al.)
    scaling_lab       a runnable scaling experiment on a Markov source of known entropy
    critical_batch    steps vs examples around the critical batch (McCandlish et al.)
    batch_scaling     fitted batch size and learning rate against compute; published batches
    downstream        downstream error from loss (Gadre et al., OLMo ladder) and its held-out test
    moe_scaling       the effective size a mixture of experts needs to beat a dense model
    trends      growth per two years of compute, HBM and links, fitted from the registry
    ridge_trend how a chip's ridge point moves between generations: a ratio of two growths
    waves       tile and wave quantisation of a GEMM on a GPU
    memory_hierarchy  an H100's registers, shared memory, L2 and HBM as ceilings; tiled-GEMM bytes
    comm_roofline     FLOP per network byte of a layer's collectives against NVLink and scale-out
    power_clock       the clock a power cap allows (dynamic power against frequency)
    benchmark   this machine's roofline from a GEMM and a triad, tested on held-out kernels
    bench_streams  its streaming kernels (bytes by kind, thread-sliced timing), best_time_s
    bench_record  the record of `make bench` (data/bench/roofline.toml) and its checks
    gpu_record  a GPU measurement record (tools/gpu_check.py) against the book's predictions
    precision   FP8 (E4M3, E5M2) and FP4 (E2M1) emulation, per-tensor and per-block scaling
    comms       alpha-beta cost of collectives; data parallelism's all-reduce share of a step
    parallelism memory per GPU under ZeRO/TP/PP, activation memory, pipeline bubble, traffic
    reliability job MTBF, Young/Daly checkpoint interval, goodput, a Monte-Carlo check
    mfu         model FLOP utilisation (PaLM's definition): one ratio, per second or per run
    objective   cross-entropy, perplexity, bits per token and bits per byte
    tinylm      a tiny transformer in numpy: forward, hand-written backward, AdamW
    tinylm_train  its training loop and probes (re-exports its corpus from tinylm_source)
    tinylm_source  its corpus: an order-2 Markov source of known entropy
    mup         muP against the standard parametrisation: per-tensor rates, the LR sweep
    compression code length under a model, arithmetic coding, zlib/bz2/lzma
    tables      registry tables as Markdown text for the chapters
    book        what a chapter needs from its notebook: glue without myst-nb
    pipeline    (package) the data chapter's pretraining data pipeline, one module per stage
    plots       (package) the book-wide figure style and every figure of the book
    studies     (package) the book's worked cases (data/scenarios.toml) computed, one module
                per chapter: what the chapters show and the ledger judges
    claims      (package) the claims ledger: claims as data (data/claims), one typed check each
    grading     (package) the autograders of the Implement exercises, one check_* each

Every quantity is a plain float in SI base units with the unit in its name
(``hbm_bytes_per_s``, ``step_time_s``); see chapters/notation.md.

Home: chapters/hardware_tour.ipynb.
"""

__version__ = "1.1.0.dev0"
