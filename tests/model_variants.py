"""The registry architectures the numpy decoder must run, one per code path it has (shared by
tests/test_transformer.py and tests/test_decoder_equivalence.py)."""

import dataclasses

from llmphys import specs


def variants():
    """{name: Model}: MHA, GQA, MQA, QKV bias, sliding window, MoE, MLA (with and without q
    compression) and a LayerNorm/GELU/tied-embedding model."""
    llama = specs.model("llama3_8b")
    ds = specs.model("deepseek_v3")
    gpt_like = dataclasses.replace(specs.model("gpt3_175b"), position="rope", linear_bias=False,
                                   qkv_bias=False)
    return {
        "mha": specs.model("llama2_7b"),
        "gqa": llama,
        "mqa": dataclasses.replace(llama, attention="mqa", n_kv_heads=1),
        "gqa_qkv_bias": specs.model("qwen25_72b"),
        "sliding_window": specs.model("mistral_7b"),
        "moe": specs.model("mixtral_8x7b"),
        "mla_moe_shared_dense": ds,
        "mla_without_q_compression": dataclasses.replace(
            ds, moe=None, mla=dataclasses.replace(ds.mla, q_lora_rank=0)),
        "layernorm_gelu_tied": gpt_like,
    }
