"""Hugging Face LlamaForCausalLM at a tiny configuration, random weights
(RMSNorm, rotary embeddings, SiLU-gated MLP, grouped-query attention)."""
import torch
from transformers import LlamaConfig, LlamaForCausalLM

VOCAB, SEQ, BATCH = 128, 16, 4


def make():
    torch.manual_seed(0)
    cfg = LlamaConfig(vocab_size=VOCAB, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                      num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=SEQ,
                      use_cache=False, attn_implementation="sdpa")
    m = LlamaForCausalLM(cfg)
    ids = torch.randint(0, VOCAB, (BATCH, SEQ))
    return m, {"input_ids": ids, "labels": ids}


def batches(steps):
    g = torch.Generator().manual_seed(1)
    ids = torch.randint(0, VOCAB, (steps * BATCH, SEQ), generator=g)
    return {"input_ids": ids, "labels": ids.clone()}
