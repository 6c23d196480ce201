import pytest

from llmphys import accounting, specs, training


def test_mixed_precision_adam_needs_16_bytes_per_parameter():
    # ZeRO (Rajbhandari et al. 2020), sec. 3.1: 2 + 2 + 12 = 16 bytes per parameter.
    assert sum(training.training_state_bytes_per_param().values()) == 16.0


def test_fp32_sgd_without_master_copy():
    parts = training.training_state_bytes_per_param(weight_dtype="fp32", grad_dtype="fp32",
                                                    master_weights=False, optimizer="sgd")
    assert sum(parts.values()) == 8.0


def test_llama31_405b_run_time_is_consistent_with_its_paper():
    # Llama 3 paper: 3.8e25 FLOP on up to 16,384 H100s at 38-43% MFU (BF16), i.e. about
    # 8-9 weeks of compute. 6ND with the exact count gives the same FLOP.
    m, h100 = specs.model("llama31_405b"), specs.accelerator("h100_sxm")
    c = accounting.train_flop(accounting.n_params(m), m.n_training_tokens)
    days = training.training_time_s(c, n_chips=16_384, peak_flop_per_s=h100.peak_bf16_flop_per_s,
                                    mfu=0.40) / 86400
    assert 60 < days < 75


def test_mfu_inverts_training_time():
    t = training.training_time_s(1e24, n_chips=1000, peak_flop_per_s=1e15, mfu=0.37)
    assert training.model_flop_utilization(1e24, time_s=t, n_chips=1000,
                                           peak_flop_per_s=1e15) == pytest.approx(0.37)


@pytest.mark.parametrize("kwargs,name", [({"mfu": 1.2}, "mfu"), ({"mfu": 0}, "mfu"),
                                         ({"mfu": 0.5, "n_chips": 0}, "n_chips")])
def test_bad_arguments_name_themselves(kwargs, name):
    args = {"n_chips": 8, "peak_flop_per_s": 1e15} | kwargs
    with pytest.raises(ValueError, match=name):
        training.training_time_s(1e20, **args)


def test_unknown_optimizer_lists_the_known_ones():
    with pytest.raises(ValueError, match="adamw"):
        training.training_state_bytes_per_param(optimizer="lion")
