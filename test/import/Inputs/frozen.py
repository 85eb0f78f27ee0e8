"""Frozen parameters (requires_grad=False) stay as they are, as PyTorch's
optimizer leaves them: a fine-tuned classifier whose embedding and first
block are frozen, with LoRA adapters (a frozen base weight plus a trainable
low-rank update B A) on its projections; the frozen tensors are also read by
the head through a tied weight. Tiny sizes, random weights."""
import torch
import torch.nn as nn
import torch.nn.functional as F

VOCAB, SEQ, BATCH, D, R, CLASSES = 40, 6, 8, 16, 4, 3


class LoraLinear(nn.Module):
    def __init__(self, din, dout, r):
        super().__init__()
        self.base = nn.Linear(din, dout)
        self.base.requires_grad_(False)
        self.A = nn.Parameter(torch.randn(r, din) * 0.1)
        self.B = nn.Parameter(torch.randn(dout, r) * 0.1)

    def forward(self, x):
        return self.base(x) + F.linear(F.linear(x, self.A), self.B) * 0.5


class FrozenNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(VOCAB, D)
        self.block = nn.Sequential(nn.Linear(D, D), nn.GELU(), nn.LayerNorm(D))
        self.q = LoraLinear(D, D, R)
        self.v = LoraLinear(D, D, R)
        self.norm = nn.LayerNorm(D)
        self.head = nn.Linear(D, CLASSES)
        self.lm = nn.Linear(D, VOCAB, bias=False)
        self.lm.weight = self.emb.weight      # tied, frozen with the embedding
        self.emb.requires_grad_(False)
        self.block.requires_grad_(False)

    def forward(self, ids, y):
        h = self.block(self.emb(ids))
        h = self.norm(h + self.q(h) * torch.sigmoid(self.v(h)))
        aux = F.cross_entropy(self.lm(h).flatten(0, 1), ids.flatten())
        return F.cross_entropy(self.head(h.mean(1)), y) + 0.1 * aux


def frozen():
    torch.manual_seed(0)
    return FrozenNet(), frozen_batches(1)


def frozen_batches(steps):
    g = torch.Generator().manual_seed(1)
    n = steps * BATCH
    return {"ids": torch.randint(0, VOCAB, (n, SEQ), generator=g),
            "y": torch.randint(0, CLASSES, (n,), generator=g)}
