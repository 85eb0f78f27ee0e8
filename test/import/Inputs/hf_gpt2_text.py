"""Hugging Face GPT2LMHeadModel the size of lpc's GPT example (2 blocks,
d_model 128, 4 heads, seq 64, byte vocabulary), random weights, and batches
of byte windows of a text every Debian system has (the GPL)."""
import torch
from transformers import GPT2Config, GPT2LMHeadModel

TEXT = "/usr/share/common-licenses/GPL-3"
SEQ, BATCH = 64, 16


def make():
    torch.manual_seed(0)
    cfg = GPT2Config(vocab_size=256, n_positions=SEQ, n_embd=128, n_layer=2, n_head=4,
                     resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0, use_cache=False,
                     attn_implementation="sdpa")
    ids = torch.zeros(BATCH, SEQ, dtype=torch.long)
    return GPT2LMHeadModel(cfg), {"input_ids": ids, "labels": ids.clone()}


def batches(steps, seed=1, part="train"):
    """Random windows of the first 90% (train) or the last 10% (eval)."""
    data = torch.tensor(list(open(TEXT, "rb").read()), dtype=torch.long)
    cut = int(len(data) * 0.9)
    data = data[:cut] if part == "train" else data[cut:]
    g = torch.Generator().manual_seed(seed)
    start = torch.randint(0, len(data) - SEQ, (steps * BATCH,), generator=g)
    ids = torch.stack([data[s:s + SEQ] for s in start.tolist()])
    return {"input_ids": ids, "labels": ids.clone()}
