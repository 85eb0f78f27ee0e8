"""A classifier that uses the ATen ops of hand-written normalizations, gated
MLPs and older attention code: var/std (unbiased, correction, keepdim),
var_mean/std_mean, reciprocal, square, abs, glu, baddbmm and addmm with
beta/alpha, stack/unbind, index_select (repeated indices), indexing with an index
tensor (constant with negative entries, and computed), amin/min/max
(parity-more-ops.test)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH, FEATURES, CLASSES = 8, 24, 5


class HandNorm(nn.Module):
    """LayerNorm written out with var (as some codebases do)."""
    def __init__(self, d, eps=1e-5):
        super().__init__()
        self.w = nn.Parameter(torch.ones(d))
        self.b = nn.Parameter(torch.zeros(d))
        self.eps = eps

    def forward(self, x):
        mu = x.mean(-1, keepdim=True)
        var = x.var(-1, keepdim=True, unbiased=False)
        return (x - mu) / torch.sqrt(var + self.eps) * self.w + self.b


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.inp = nn.Linear(FEATURES, 64)
        self.norm = HandNorm(32)
        self.heads = nn.Parameter(torch.randn(4, 8, 8) * 0.3)
        self.bias = nn.Parameter(torch.randn(4, 1, 8) * 0.1)
        self.mix = nn.Parameter(torch.randn(32, 32) * 0.2)
        self.mix_bias = nn.Parameter(torch.randn(32) * 0.1)
        self.table = nn.Parameter(torch.randn(8, 32) * 0.2)
        self.out = nn.Linear(32, CLASSES)

    def forward(self, x, y):
        h = F.glu(self.inp(x), dim=-1)                      # [B, 32]
        h = self.norm(h)
        s = h.std(-1, keepdim=True)                         # unbiased
        v, m = torch.var_mean(h, dim=0, correction=0)       # [32], [32]
        sd, _ = torch.std_mean(h, dim=-1, keepdim=True)
        h = h * torch.reciprocal(s + 1.0) + (v - m).abs() * 0.1 + h.square() * 0.01 + sd * 0.1
        g = h.reshape(BATCH, 4, 8).transpose(0, 1)          # [4, B, 8]
        g = torch.baddbmm(self.bias, g, self.heads, beta=0.5, alpha=2.0)
        h = h + g.transpose(0, 1).reshape(BATCH, 32) * 0.1
        h = torch.addmm(self.mix_bias, h, self.mix, beta=0.7, alpha=0.3) + h
        parts = torch.unbind(h.reshape(BATCH, 4, 8), dim=1)            # 4 x [B, 8]
        h = torch.stack([parts[0], parts[3], parts[1] * 0.5, parts[2]], dim=1).reshape(BATCH, 32)
        rows = torch.index_select(self.table, 0, torch.tensor([3, 0, 0, 7, 5]))  # [5, 32]
        cols = torch.index_select(h, 1, torch.tensor([31, 2, 2]))        # [B, 3]
        h = (h + rows.mean(0) + cols.sum(-1, keepdim=True) * 0.1
             + h.amin(-1, keepdim=True) * 0.1 + torch.min(h, dim=0).values * 0.1
             + h.max() * 0.01 + h.min() * 0.01)
        # Advanced indexing: a constant index (negative, repeated) and a
        # computed one (the labels pick rows of a table).
        h = h + h[:, [3, -1, 3]].sum(-1, keepdim=True) * 0.1 + self.table[y] * 0.5
        return self.out(h)


def make():
    torch.manual_seed(0)
    return Net(), (torch.randn(BATCH, FEATURES), torch.randint(0, CLASSES, (BATCH,)))


def batches(steps):
    g = torch.Generator().manual_seed(1)
    return {"x": torch.randn(steps * BATCH, FEATURES, generator=g),
            "y": torch.randint(0, CLASSES, (steps * BATCH,), generator=g)}
