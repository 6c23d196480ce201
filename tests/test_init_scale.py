"""Initialisation rules against the closed form RMS(x W) = sigma sqrt(fan_in) for RMS-1 inputs,
measured on fresh numpy decoders of several widths."""

import math
from functools import cache

import numpy as np
import pytest

from llmphys import init_scale

TOKENS = np.random.default_rng(0).integers(0, 8, (16, 9))


@cache
def _sweep(rule, widths=(32, 128, 512)):  # one layer: the measured quantities need no more
    return init_scale.width_sweep(list(widths), rule=rule, inputs=TOKENS[:, :-1],
                                  targets=TOKENS[:, 1:], seed=1, vocab_size=8, context_tokens=8,
                                  n_layers=1)


@pytest.mark.parametrize("rule", ["fixed", "unit", "fan_in"])
def test_preactivation_rms_is_sigma_sqrt_fan_in(rule):
    s = _sweep(rule)
    expected = [init_scale.weight_std(rule, int(d)) * math.sqrt(d) for d in s["width"]]
    # 128 tokens x 2d outputs >= 8,192 samples of a near-Gaussian: the RMS's relative s.d. is
    # about 1/sqrt(2 x 8,192) < 1%, but rows of one token share W and x: allow 10%.
    assert s["preact_rms"] == pytest.approx(expected, rel=0.10)


def test_fixed_std_grows_as_sqrt_width_and_fan_in_does_not():
    fixed, scaled = _sweep("fixed"), _sweep("fan_in")
    assert fixed["preact_rms"][-1] / fixed["preact_rms"][0] == pytest.approx(4.0, rel=0.1)
    assert scaled["preact_rms"][-1] / scaled["preact_rms"][0] == pytest.approx(1.0, abs=0.1)


def test_unit_init_starts_far_above_the_uniform_loss():
    unit, gpt2 = _sweep("unit"), _sweep("fixed", widths=(32,))
    assert (unit["loss_nats"] > 3 * unit["uniform_nats"]).all()
    assert gpt2["loss_nats"][0] == pytest.approx(math.log(8), abs=0.1)


def test_bad_rule_is_named():
    with pytest.raises(ValueError, match="rule must be one of"):
        init_scale.weight_std("xavier", 8)
