"""Memory as JAX frameworks lay it out: remat policies that save matmul outputs, FP32 state.

Issue 27: "A layout a framework has published running must fit." MaxText's remat_policy
"minimal" is JAX's checkpoint_dots_with_no_batch_dims, "minimal_offloaded" the same dots moved
to pinned host memory (AI-Hypercomputer/maxtext, MaxText/layers/models.py, commit 0ea0637; the
table's own commit 76bd53b0f knows "minimal" and "full" only); its state is FP32 parameters,
gradients and Adam moments, sharded within a slice. The registry's maxtext_* shapes are base.yml's
block at 76bd53b0f: a parallel block (one shared RMSNorm), ReLU MLP, 256-wide MHA heads.

Tolerances: closed forms to float rounding (1e-9 relative).
"""

import dataclasses

import pytest

from llmphys import accounting, specs
from llmphys.predict import memory, train
from llmphys.predict.runs import training_runs

M32 = specs.model_spec("maxtext_32b")  # d 10,240, 32 x 256 heads (MHA), ReLU 32,768, 32 layers
KW = dict(pp=1, cp=1, ep=1, seq_len=2048, recompute="selective", zero_stage=3, dtype="bf16",
          fsdp_weight_gathers=2, sequence_parallel=True, flash_attention=True,
          activation_microbatches=1.0, weight_copies=1.0, allocator_overhead=0.0)


def test_the_dots_policy_keeps_the_weight_matmuls_outputs_and_the_layer_input():
    # By hand, 16-bit, split 4 ways over MaxText's 'tensor' axis: the input 10,240 (sequence-
    # parallel), q, k, v 3 x 8,192, the one (ReLU) up projection 32,768; in MaxText's parallel
    # block no second norm reads the attention output projection, so it is not kept, and the
    # MLP's down projection never is (only the layer's output reads it). A serial block of
    # the same shape also keeps the attention output projection, 10,240.
    by_hand = 2.0 * (10240 + 3 * 8192 + 32768) / 4
    assert by_hand == 33792.0
    assert memory.jax_dots_bytes_per_token(M32, tp=4) == pytest.approx(by_hand, rel=1e-9)
    serial = dataclasses.replace(M32, parallel_block=False)
    assert memory.jax_dots_bytes_per_token(serial, tp=4) == pytest.approx(
        by_hand + 2.0 * 10240 / 4, rel=1e-9)
    parts = memory.memory_parts(M32, tp=4, dp=16, micro_batch_size=32,
                                selective_policy="dots_no_batch", **KW)
    tokens = 32 * 2048  # per_device_batch_size 8 x tp 4: the batch is split over fsdp only
    assert parts["activations"] == pytest.approx(by_hand * tokens * 32, rel=1e-9)


def test_the_offloaded_policy_keeps_the_layer_inputs_and_one_layer_of_dots_on_chip():
    m = specs.model_spec("maxtext_128b")  # d 10,240, 64 x 256 heads, ReLU 65,536, 64 layers
    tokens = 16 * 2048  # per_device_batch_size 1 x tp 16
    carry = 2.0 * 10240 / 16
    dots = carry + 2.0 * (3 * 16384 + 65536) / 16  # input, q k v, the up projection
    parts = memory.memory_parts(m, tp=16, dp=16, micro_batch_size=16,
                                selective_policy="dots_no_batch_offloaded", **KW)
    assert parts["activations"] == pytest.approx(
        carry * tokens * 64 + (dots - carry) * tokens, rel=1e-9)
    on_chip = memory.memory_parts(m, tp=16, dp=16, micro_batch_size=16,
                                  selective_policy="dots_no_batch", **KW)["activations"]
    assert on_chip == pytest.approx(dots * tokens * 64, rel=1e-9)  # 30.1 GB against 2.8 GB


def test_jax_state_is_16_bytes_per_parameter_sharded_within_a_slice():
    # FP32 params (the master copy), FP32 grads, two FP32 moments: 4 + 4 + 8 bytes, sharded
    # over one slice's 16 x 4 chips however many slices replicate it over DCN.
    n_local = accounting.n_params(M32) / 4
    for slices in (1, 4):
        parts = memory.memory_parts(M32, tp=4, dp=16 * slices, micro_batch_size=32,
                                    state_layout="fp32_params", state_replicas=slices, **KW)
        assert parts["gradients"] == pytest.approx(4 * n_local / 16, rel=1e-9)
        assert parts["optimizer"] == pytest.approx(8 * n_local / 16, rel=1e-9)
    mega = memory.memory_parts(M32, tp=4, dp=16, micro_batch_size=32, **KW)
    assert mega["optimizer"] == pytest.approx(12 * n_local / 16, rel=1e-9)


def test_bad_state_layouts_are_named():
    with pytest.raises(ValueError, match="state_layout='bf16' is not known"):
        memory.memory_parts(M32, tp=4, dp=16, micro_batch_size=32, state_layout="bf16", **KW)
    with pytest.raises(ValueError, match="state_replicas=3 must be a positive divisor"):
        memory.memory_parts(M32, tp=4, dp=16, micro_batch_size=32, state_replicas=3, **KW)


def test_the_parallel_block_decides_whether_the_tables_64b_batch_fits():
    # The table's 64b.sh (76bd53b0f): per_device_batch_size 4, tensor parallelism 4, remat
    # "minimal", on v5p's 95 GiB (102.0 GB). The dots policy keeps 2 x (10,240 + 3 x 8,192 +
    # 32,768) / 4 = 33,792 B per token per layer in MaxText's parallel block, x 4 x 4 x 2,048
    # tokens x 64 layers = 70.9 GB; laid out as a serial block it would also keep the
    # attention output projection (38,912 B: 81.6 GB) and, with the 17.1 GB of FP32 state and
    # the allocator allowance, not fit (102.7 GB).
    r = training_runs()["maxtext_v5p_64b_128"]
    assert (r.micro_batch_size, r.tp, r.recompute, r.selective_policy) == (
        16, 4, "selective", "dots_no_batch")
    s = train.predict_run(r)
    acts = s.memory_parts["activations"]
    assert acts == pytest.approx(33792.0 * 16 * 2048 * 64, rel=1e-9)
    assert s.fits
    serial = dataclasses.replace(specs.model_spec(r.model), parallel_block=False)
    assert memory.memory_parts(serial, tp=4, dp=16, micro_batch_size=16,
                               selective_policy="dots_no_batch", **KW)["activations"] == (
        pytest.approx(38912.0 * 16 * 2048 * 64, rel=1e-9))
    assert s.memory_per_chip_bytes + (38912.0 - 33792.0) * 16 * 2048 * 64 > s.hbm_bytes
    assert not train.predict_run(r, model=serial).fits  # the same what-if, as chapter 4 runs it


@pytest.mark.parametrize("key", sorted(training_runs()))
def test_every_published_run_fits(key):
    s = train.predict_run(key)
    gb = f"{s.memory_per_chip_bytes / 1e9:.1f} GB of {s.hbm_bytes / 1e9:.1f} GB"
    assert s.fits, f"{key} was published running but is predicted not to fit: {gb}"
