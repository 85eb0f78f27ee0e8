"""Hugging Face FalconForCausalLM at a tiny configuration, random weights:
parallel attention and MLP, multi-query attention, rotary embeddings, and
in-place ops in its code (the residual `+=` that torch.export keeps as
aten.add_, which lpc-import functionalizes). Dropout off, so that PyTorch and
lpc train the same function."""
import torch
from transformers import FalconConfig, FalconForCausalLM

VOCAB, SEQ, BATCH = 128, 16, 4


def make():
    torch.manual_seed(0)
    cfg = FalconConfig(vocab_size=VOCAB, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                       hidden_dropout=0.0, attention_dropout=0.0, use_cache=False,
                       attn_implementation="sdpa")
    m = FalconForCausalLM(cfg)
    ids = torch.randint(0, VOCAB, (BATCH, SEQ))
    return m, {"input_ids": ids, "labels": ids}


def batches(steps):
    g = torch.Generator().manual_seed(1)
    ids = torch.randint(0, VOCAB, (steps * BATCH, SEQ), generator=g)
    return {"input_ids": ids, "labels": ids.clone()}
