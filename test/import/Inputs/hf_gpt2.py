"""Hugging Face GPT2LMHeadModel at a tiny configuration, random weights
(built from its config class: nothing is downloaded)."""
import torch
from transformers import GPT2Config, GPT2LMHeadModel

VOCAB, SEQ, BATCH = 128, 16, 4


def make():
    torch.manual_seed(0)
    cfg = GPT2Config(vocab_size=VOCAB, n_positions=SEQ, n_embd=32, n_layer=2, n_head=4,
                     resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0, use_cache=False,
                     attn_implementation="sdpa")
    m = GPT2LMHeadModel(cfg)
    ids = torch.randint(0, VOCAB, (BATCH, SEQ))
    return m, {"input_ids": ids, "labels": ids}


def batches(steps):
    g = torch.Generator().manual_seed(1)
    ids = torch.randint(0, VOCAB, (steps * BATCH, SEQ), generator=g)
    return {"input_ids": ids, "labels": ids.clone()}
