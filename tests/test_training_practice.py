"""Schedules, clipping and FP16 loss scaling against their definitions and IEEE 754 binary16."""

import math

import numpy as np
import pytest

from llmphys import tinylm, tinylm_train
from llmphys import training_practice as tp


def test_cosine_schedule_is_the_chapters_lr_at_to_the_last_bit():
    # The training loop now calls lr_schedule; the chapter's main run must not move.
    for s in range(0, 300, 7):
        old = 2e-2 * ((s + 1) / 20 if s < 20 else
                      0.1 + 0.45 * (1 + math.cos(math.pi * min(1.0, (s - 20) / 280))))
        assert tp.lr_schedule(s, n_steps=300, peak_lr=2e-2, warmup_steps=20) == old
        assert tinylm_train.lr_at(s, n_steps=300, peak_lr=2e-2, warmup_steps=20) == old


def test_wsd_holds_the_peak_then_decays_linearly_over_the_last_fifth():
    # Hägele et al. 2024 (arXiv:2405.18392) sec. 3: constant LR, then a linear cool-down.
    lr = [tp.lr_schedule(s, n_steps=1000, peak_lr=1.0, warmup_steps=100, schedule="wsd")
          for s in range(1000)]
    assert lr[99] == lr[500] == lr[800] == 1.0
    assert lr[900] == pytest.approx(0.55)  # halfway through the cool-down to 0.1
    assert lr[999] == pytest.approx(0.1 + 0.9 / 200)
    assert np.all(np.diff(lr[800:]) < 0)
    # a WSD run spends more steps at the peak than cosine: its mean LR is higher
    cos = [tp.lr_schedule(s, n_steps=1000, peak_lr=1.0, warmup_steps=100) for s in range(1000)]
    assert np.mean(lr) > np.mean(cos)


def test_clipping_caps_the_global_norm_and_leaves_small_gradients_alone(rng):
    g = {"a": rng.standard_normal((3, 4)), "b": rng.standard_normal(5)}
    norm = math.sqrt(sum(np.sum(x * x) for x in g.values()))
    clipped, n = tp.clip_by_global_norm(g, max_norm=norm / 2)
    assert n == pytest.approx(norm, rel=1e-12)
    assert tp.global_norm(clipped) == pytest.approx(norm / 2, rel=1e-12)
    same, _ = tp.clip_by_global_norm(g, max_norm=2 * norm)
    for k, value in g.items():
        np.testing.assert_array_equal(same[k], value)
        np.testing.assert_allclose(clipped[k] / value, 0.5, rtol=1e-12)  # direction kept


def test_fp16_flushes_below_two_to_the_minus_24_and_scaling_rescues_it():
    # IEEE 754 binary16: smallest subnormal 2^-24 = 5.96e-8, smallest normal 2^-14, max 65504.
    assert float(np.finfo(np.float16).smallest_subnormal) == tp.FP16_SMALLEST_SUBNORMAL
    assert float(np.finfo(np.float16).smallest_normal) == tp.FP16_SMALLEST_NORMAL
    g = {"w": np.array([2.0**-26, 2.0**-20, 1e-3, 1.0])}
    out, s = tp.fp16_gradients(g)
    assert out["w"][0] == 0.0 and s["zero_fraction"] == 0.25
    assert s["subnormal_fraction"] == 0.25  # 2^-20 survives as a subnormal
    out, s = tp.fp16_gradients(g, loss_scale=2.0**12)
    assert out["w"][0] == 2.0**-26 and s["zero_fraction"] == 0.0  # powers of 2 are exact
    _, s = tp.fp16_gradients(g, loss_scale=2.0**17)
    assert s["overflow"] == 1.0  # 1.0 x 2^17 > 65504


def test_unscaled_fp16_gradients_of_the_tiny_model_lose_entries_that_scaling_keeps(rng):
    # Measured on a real gradient: at init a share of entries sits below 2^-14.
    params = tinylm.init_params(vocab_size=8, context_tokens=8, rng=rng)
    w = rng.integers(0, 8, (64, 9))
    _, grads = tinylm.loss_and_grads(params, w[:, :-1], w[:, 1:])
    _, plain = tp.fp16_gradients(grads)
    _, scaled = tp.fp16_gradients(grads, loss_scale=1024.0)
    assert plain["subnormal_fraction"] > 0.05
    assert scaled["subnormal_fraction"] < plain["subnormal_fraction"] / 5


def test_training_options_are_validated_and_recorded(rng):
    params = tinylm.init_params(vocab_size=4, context_tokens=4, rng=rng)
    corpus = rng.integers(0, 4, 500)
    with pytest.raises(ValueError, match="schedule"):
        tinylm_train.train(params, corpus, n_steps=30, batch_size=4, lr=1e-2, rng=rng,
                           schedule="linear")
    with pytest.raises(ValueError, match="max_grad_norm"):
        tinylm_train.train(params, corpus, n_steps=30, batch_size=4, lr=1e-2, rng=rng,
                           max_grad_norm=0.0)
    _, h = tinylm_train.train(params, corpus, n_steps=30, batch_size=4, lr=1e-2, rng=rng,
                              schedule="wsd", max_grad_norm=1e-3, fp16_loss_scale=1.0)
    assert h["lr"][22] == 1e-2 and h["lr"][-1] < 1e-2
    assert np.all(h["grad_norm"] > 1e-3)  # so every step was clipped
    assert h["fp16_subnormal_fraction"].max() > 0


def test_bad_schedule_arguments_name_themselves():
    with pytest.raises(ValueError, match="warmup_steps"):
        tp.lr_schedule(0, n_steps=10, peak_lr=1.0, warmup_steps=10)
    with pytest.raises(ValueError, match="decay_fraction"):
        tp.lr_schedule(0, n_steps=10, peak_lr=1.0, warmup_steps=1, schedule="wsd",
                       decay_fraction=0.0)
    with pytest.raises(ValueError, match="max_norm"):
        tp.clip_by_global_norm({"w": np.ones(2)}, max_norm=-1.0)
    with pytest.raises(ValueError, match="loss_scale"):
        tp.fp16_gradients({"w": np.ones(2)}, loss_scale=0.0)
