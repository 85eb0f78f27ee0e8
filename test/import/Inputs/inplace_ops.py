"""A classifier written with in-place ops, as model code often is:
nn.ReLU(inplace=True), x.add_/div_/sub_, torch.tanh_, masked_fill_ on a
computed tensor with a triangular mask, and writes into views
(h[:, :8] += ..., h[:, -4:] = ..., h[:, 9] = ..., h[:, 12:14] = 0.25,
h[:, 20].zero_()). torch.export keeps them as written; lpc-import
functionalizes the program before it maps it (parity-inplace.test)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH, FEATURES, CLASSES = 8, 20, 6


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.inp = nn.Linear(FEATURES, 32)
        self.act = nn.ReLU(inplace=True)
        self.mid = nn.Linear(32, 32)
        self.out = nn.Linear(32, CLASSES)
        self.gain = nn.Parameter(torch.randn(32) * 0.1 + 1.0)

    def forward(self, x, y):
        h = self.act(self.inp(x)) * self.gain
        h.add_(0.1)
        g = self.mid(h)
        g.sub_(h * 0.25).div_(1.5)
        g = torch.tanh_(g) + h
        # Writes into views of a computed tensor.
        g[:, :8] += h[:, 8:16] * 0.5
        g[:, -4:] = h[:, :4] * 2.0
        g[:, 9] = h[:, 6] * 0.5
        g[:, 12:14] = 0.25
        g[:, 20].zero_()
        s = g.reshape(BATCH, 4, 8)
        sc = s @ s.transpose(1, 2)                         # [B, 4, 4]
        sc.masked_fill_(torch.triu(torch.ones(4, 4, dtype=torch.bool), 1), float("-inf"))
        s = torch.softmax(sc, -1) @ s
        return F.cross_entropy(self.out(s.reshape(BATCH, 32) + g), y)


def make():
    torch.manual_seed(0)
    return Net(), (torch.randn(BATCH, FEATURES), torch.randint(0, CLASSES, (BATCH,)))


def batches(steps):
    g = torch.Generator().manual_seed(1)
    return {"x": torch.randn(steps * BATCH, FEATURES, generator=g),
            "y": torch.randint(0, CLASSES, (steps * BATCH,), generator=g)}
