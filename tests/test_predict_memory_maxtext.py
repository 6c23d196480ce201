"""Memory as JAX frameworks lay it out: remat policies that save matmul outputs, FP32 state.

Issue 27: "A layout a framework has published running must fit." MaxText's remat_policy
"minimal" is JAX's checkpoint_dots_with_no_batch_dims, "minimal_offloaded" the same dots moved
to pinned host memory (AI-Hypercomputer/maxtext, MaxText/layers/models.py, commit 0ea0637);
its state is FP32 parameters, gradients and Adam moments, sharded within a slice.

Tolerances: closed forms to float rounding (1e-9 relative).
"""

import dataclasses

import pytest

from llmphys import accounting, specs
from llmphys.predict import memory, train
from llmphys.predict.runs import training_runs

M32 = specs.model_spec("maxtext_32b")  # d 8192, 64 x 128 heads (MHA), SwiGLU 28,672, 32 layers
KW = dict(pp=1, cp=1, ep=1, seq_len=2048, recompute="selective", zero_stage=3, dtype="bf16",
          fsdp_weight_gathers=2, sequence_parallel=True, flash_attention=True,
          activation_microbatches=1.0, weight_copies=1.0, allocator_overhead=0.0)


def test_the_dots_policy_keeps_the_weight_matmuls_outputs_and_the_layer_input():
    # By hand, 16-bit, split 4 ways over MaxText's 'tensor' axis: the input 8,192 (sequence-
    # parallel), q, k, v 3 x 8,192, the attention output projection 8,192, the two up
    # projections 2 x 28,672; not the down projection (only the layer's output reads it).
    by_hand = 2.0 * (8192 + 3 * 8192 + 8192 + 2 * 28672) / 4
    assert by_hand == 49152.0
    assert memory.jax_dots_bytes_per_token(M32, tp=4) == pytest.approx(by_hand, rel=1e-9)
    parts = memory.memory_parts(M32, tp=4, dp=16, micro_batch_size=28,
                                selective_policy="dots_no_batch", **KW)
    tokens = 28 * 2048  # per_device_batch_size 7 x tp 4: the batch is split over fsdp only
    assert parts["activations"] == pytest.approx(by_hand * tokens * 32, rel=1e-9)


def test_the_offloaded_policy_keeps_the_layer_inputs_and_one_layer_of_dots_on_chip():
    m = specs.model_spec("maxtext_128b")  # d 8192, 128 x 128 heads, SwiGLU 57,344, 64 layers
    tokens = 16 * 2048  # per_device_batch_size 1 x tp 16
    carry = 2.0 * 8192 / 16
    dots = carry + 2.0 * (3 * 16384 + 8192 + 2 * 57344) / 16  # input, q k v, out, 2 ups
    parts = memory.memory_parts(m, tp=16, dp=16, micro_batch_size=16,
                                selective_policy="dots_no_batch_offloaded", **KW)
    assert parts["activations"] == pytest.approx(
        carry * tokens * 64 + (dots - carry) * tokens, rel=1e-9)
    on_chip = memory.memory_parts(m, tp=16, dp=16, micro_batch_size=16,
                                  selective_policy="dots_no_batch", **KW)["activations"]
    assert on_chip == pytest.approx(dots * tokens * 64, rel=1e-9)  # 47.2 GB against 2.9 GB


def test_jax_state_is_16_bytes_per_parameter_sharded_within_a_slice():
    # FP32 params (the master copy), FP32 grads, two FP32 moments: 4 + 4 + 8 bytes, sharded
    # over one slice's 16 x 4 chips however many slices replicate it over DCN.
    n_local = accounting.n_params(M32) / 4
    for slices in (1, 4):
        parts = memory.memory_parts(M32, tp=4, dp=16 * slices, micro_batch_size=28,
                                    state_layout="fp32_params", state_replicas=slices, **KW)
        assert parts["gradients"] == pytest.approx(4 * n_local / 16, rel=1e-9)
        assert parts["optimizer"] == pytest.approx(8 * n_local / 16, rel=1e-9)
    mega = memory.memory_parts(M32, tp=4, dp=16, micro_batch_size=28, **KW)
    assert mega["optimizer"] == pytest.approx(12 * n_local / 16, rel=1e-9)


def test_bad_state_layouts_are_named():
    with pytest.raises(ValueError, match="state_layout='bf16' is not known"):
        memory.memory_parts(M32, tp=4, dp=16, micro_batch_size=28, state_layout="bf16", **KW)
    with pytest.raises(ValueError, match="state_replicas=3 must be a positive divisor"):
        memory.memory_parts(M32, tp=4, dp=16, micro_batch_size=28, state_replicas=3, **KW)


def test_the_dots_policy_decides_the_32b_batch_maxtext_cut():
    # MaxText cut 32b.sh's per_device_batch_size from 7 to 6 on 2024-02-20 (7081e2c0c), after
    # base.yml moved to the Llama-style block. On that shape the dots policy keeps 49,152 B per
    # token per layer x 2,048 x 4 x pdbs tokens x 32 layers: 90.2 GB at 7 (with the 8.9 GB of
    # state and the 4% allocator allowance, 103.0 GB of v5p's 102.0 GB), 77.3 GB at 6.
    r = training_runs()["maxtext_v5p_32b_128"]
    at = {b: dataclasses.replace(r, micro_batch_size=4 * b, global_batch_tokens=64 * b * 2048.0)
          for b in (6, 7)}
    fits = {b: train.predict_run(run).fits for b, run in at.items()}
    assert fits == {6: True, 7: False}
    acts = train.predict_run(at[7]).memory_parts["activations"]
    assert acts == pytest.approx(49152.0 * 7 * 4 * 2048 * 32, rel=1e-9)


@pytest.mark.parametrize("key", sorted(training_runs()))
def test_every_published_run_fits(key):
    s = train.predict_run(key)
    gb = f"{s.memory_per_chip_bytes / 1e9:.1f} GB of {s.hbm_bytes / 1e9:.1f} GB"
    assert s.fits, f"{key} was published running but is predicted not to fit: {gb}"
