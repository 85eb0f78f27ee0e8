"""A nanoGPT-style model (LayerNorm, causal SDPA, GELU MLP, tied head),
written as people write it, for lpc-import's tests."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class Block(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.ln_1 = nn.LayerNorm(d)
        self.c_attn = nn.Linear(d, 3 * d)
        self.c_proj = nn.Linear(d, d)
        self.ln_2 = nn.LayerNorm(d)
        self.fc = nn.Linear(d, 4 * d)
        self.proj = nn.Linear(4 * d, d)

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.c_attn(self.ln_1(x)).split(C, dim=2)
        q = q.view(B, T, self.heads, C // self.heads).transpose(1, 2)
        k = k.view(B, T, self.heads, C // self.heads).transpose(1, 2)
        v = v.view(B, T, self.heads, C // self.heads).transpose(1, 2)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        x = x + self.c_proj(y)
        x = x + self.proj(F.gelu(self.fc(self.ln_2(x))))
        return x


class NanoGPT(nn.Module):
    def __init__(self, vocab=96, seq=16, d=32, heads=4, layers=2):
        super().__init__()
        self.wte = nn.Embedding(vocab, d)
        self.wpe = nn.Embedding(seq, d)
        self.h = nn.ModuleList([Block(d, heads) for _ in range(layers)])
        self.ln_f = nn.LayerNorm(d)
        self.lm_head = nn.Linear(d, vocab, bias=False)
        self.lm_head.weight = self.wte.weight  # tied
        for p in self.parameters():
            if p.dim() > 1:
                nn.init.normal_(p, std=0.05)

    def forward(self, idx, targets):
        B, T = idx.shape
        pos = torch.arange(0, T, dtype=torch.long)
        x = self.wte(idx) + self.wpe(pos)
        for block in self.h:
            x = block(x)
        logits = self.lm_head(self.ln_f(x))
        return F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))


def make(batch=4):
    torch.manual_seed(0)
    m = NanoGPT()
    idx = torch.randint(0, 96, (batch, 16))
    return m, (idx, torch.randint(0, 96, (batch, 16)))


def batches(steps, batch=4):
    g = torch.Generator().manual_seed(1)
    n = steps * batch
    return {"idx": torch.randint(0, 96, (n, 16), generator=g),
            "targets": torch.randint(0, 96, (n, 16), generator=g)}
