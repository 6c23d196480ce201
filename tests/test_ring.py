"""PyTorch's all-gather ring attention (predict/ring.py): merge bytes and exposed transfers."""

import dataclasses

import pytest

from llmphys import predict, specs
from llmphys.predict import ring, terms

E_OUT = 32768 * 32 * 128  # one rank's output elements: 32K tokens, 32 query heads, d_head 128


def test_merge_bytes_count_every_forward_ring_and_the_backward_once():
    # closed form: (cp-1) x [n_forward (32.5 E + 8 E_kv) + 11.5 E + 47 E_kv]; exact arithmetic
    one = ring.ring_merge_bytes(n_tokens=32768, n_q_heads=32, n_kv_heads=8, d_head=128, cp=2,
                                n_forward=1)
    assert one == (32.5 * E_OUT + 8 * E_OUT / 4) + (11.5 * E_OUT + 47 * E_OUT / 4)
    two = ring.ring_merge_bytes(n_tokens=32768, n_q_heads=32, n_kv_heads=8, d_head=128, cp=8,
                                n_forward=2)
    assert two == 7 * (2 * (32.5 + 2) + 11.5 + 47 / 4) * E_OUT


def test_repeating_kv_to_the_query_heads_quadruples_the_kv_share_of_the_merge():
    # Llama 3 8B's 32 query and 8 K/V heads: the K/V terms (8 and 47 bytes per element) x 4
    grouped = ring.ring_merge_bytes(n_tokens=1024, n_q_heads=32, n_kv_heads=8, d_head=128, cp=4,
                                    n_forward=2)
    repeated = ring.ring_merge_bytes(n_tokens=1024, n_q_heads=32, n_kv_heads=32, d_head=128, cp=4,
                                     n_forward=2)
    e = 1024 * 32 * 128
    assert repeated - grouped == pytest.approx(3 * (2 * 8 + 47) * e / 4 * 3, rel=1e-12)


def test_allgather_hides_behind_the_first_block_only():
    # a gather shorter than one block is free; a longer one shows its excess in every forward
    # ring and the backward (2.5 blocks); the last FP32 dK/dV permute always shows
    assert ring.allgather_exposed_s(gather_s=0.01, dkv_s=0.0, block_fwd_s=0.02, cp=8,
                                    n_forward=2) == 0.0
    t = ring.allgather_exposed_s(gather_s=0.06, dkv_s=0.01, block_fwd_s=0.02, cp=4, n_forward=2)
    assert t == pytest.approx(2 * 0.04 + 0.01 + 0.01, rel=1e-12)
    slow_dkv = ring.allgather_exposed_s(gather_s=0.0, dkv_s=0.06, block_fwd_s=0.02, cp=4,
                                        n_forward=1)
    assert slow_dkv == pytest.approx(3 * 0.01 + 0.06, rel=1e-12)


def test_bad_ring_arguments_name_themselves():
    with pytest.raises(ValueError, match="cp must be at least 2"):
        ring.allgather_exposed_s(gather_s=0.1, dkv_s=0.1, block_fwd_s=0.1, cp=1, n_forward=1)
    with pytest.raises(ValueError, match="n_tokens must be positive"):
        ring.ring_merge_bytes(n_tokens=0, n_q_heads=1, n_kv_heads=1, d_head=1, cp=2, n_forward=1)
    with pytest.raises(ValueError, match="cp_rotate='ring' is not known"):
        predict.train_step("llama3_8b", "h100_sxm", n_chips=8, cp=8, seq_len=262144,
                           global_batch_tokens=262144, zero_stage=3, cp_rotate="ring")


def test_torchtitan_cp_rows_record_pytorchs_ring_and_charge_it():
    # the rows say how torchtitan 9dec370 ran them; on 8 H100s at 256K the all-gather hides
    # behind the first block (NVLink), so the CP term is the eager merges: 32 layers x 7 steps
    # x 139.5 bytes per output element (K/V repeated to 32 heads), against achieved HBM
    runs = predict.training_runs()
    r = runs["torchtitan_8b_cp8_256k"]
    assert (r.cp_rotate, r.kv_repeat) == ("allgather", True)
    s = predict.predict_run(r)
    acc, eff = predict.chips.accelerator_spec(r.accelerator), predict.default_efficiencies()
    merge = 32 * 7 * (2 * (32.5 + 8) + 11.5 + 47) * E_OUT / (acc.hbm_bytes_per_s * eff.hbm)
    lat = 32 * (7 * 3 + 8) * terms.LINK_LATENCY_S
    nvlink = acc.scale_up_bytes_per_s_per_direction * eff.collective
    last_dkv = 32 * 32768 * 2 * 32 * 128 * 4 / nvlink
    assert s.parts["cp_attention"] == pytest.approx(merge + lat + last_dkv, rel=1e-9)
    p2p = predict.predict_run(dataclasses.replace(r, cp_rotate="p2p", kv_repeat=False))
    assert p2p.parts["cp_attention"] < 0.01 * s.parts["cp_attention"]  # hidden behind the ring


@pytest.mark.parametrize("key", ["torchtitan_8b_cp4_128k", "torchtitan_405b_cp8_256k"])
def test_the_run_budget_is_the_term_train_step_charges(key):
    # cp_attention = m x layers per stage x (the ring's seconds + latency); exact arithmetic
    r = predict.training_runs()[key]
    b = predict.validation.run_ring_budget(r)
    s = predict.predict_run(r)
    layers = specs.model_spec(r.model).n_layers / r.pp
    lat = ((r.cp - 1) * 3 + r.cp) * terms.LINK_LATENCY_S
    assert s.parts["cp_attention"] == pytest.approx(s.n_microbatches * layers * (b.total_s + lat),
                                                    rel=1e-12)
    # the block is 1/cp of one forward ring: attention's 4.5 forwards (3.5 + the recompute)
    assert b.block_fwd_s == pytest.approx(
        s.parts["attention"] / (4.5 * s.n_microbatches * layers * r.cp), rel=1e-12)
