"""A classifier built from the ATen ops that move or replace values without
arithmetic (parity-shape-ops.test): roll (one dim, several dims, negative and
oversized shifts, no dims: the flattened tensor), flip (one dim, several),
and tensors shaped like a computed one whose values do not depend on it
(zeros_like, ones_like, full_like, new_zeros, new_full)."""
import torch
import torch.nn as nn

BATCH, FEATURES, CLASSES, WIDTH = 6, 12, 4, 10


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.inp = nn.Linear(FEATURES, WIDTH * 3)
        self.out = nn.Linear(WIDTH * 3, CLASSES)

    def forward(self, x, y):
        h = torch.tanh(self.inp(x))                          # [B, 3W]
        g = h.view(BATCH, 3, WIDTH)
        a = torch.roll(g, 3, 2) + torch.roll(g, shifts=(-1, 25), dims=(1, 2)) * 0.5
        a = a + torch.roll(g, 7) * 0.25                      # flattened
        a = a + torch.flip(g, [2]) * 0.5 + torch.flip(g, (0, 1, 2)) * 0.3
        base = torch.zeros_like(a) + torch.ones_like(a) * 0.1 + torch.full_like(a, -0.2)
        extra = a.new_zeros(BATCH, 3, WIDTH) + a.new_full((BATCH, 3, WIDTH), 0.05)
        return self.out((a + base + extra).reshape(BATCH, 3 * WIDTH))


def make():
    torch.manual_seed(0)
    return Net(), (torch.randn(BATCH, FEATURES), torch.randint(0, CLASSES, (BATCH,)))


def batches(steps):
    g = torch.Generator().manual_seed(1)
    return {"x": torch.randn(steps * BATCH, FEATURES, generator=g),
            "y": torch.randint(0, CLASSES, (steps * BATCH,), generator=g)}


class Indexed(nn.Module):
    """Advanced indexing with several constant index tensors: adjacent
    (in place, broadcast, a negative index) and apart (moved first)."""
    def __init__(self):
        super().__init__()
        self.inp = nn.Linear(FEATURES, WIDTH * 3)
        self.out = nn.Linear(3 * 4 + 2 * 5, CLASSES)

    def forward(self, x, y):
        g = torch.tanh(self.inp(x)).view(BATCH, 3, WIDTH)
        rows = torch.tensor([[0], [2], [-1]])               # [3, 1]
        cols = torch.tensor([1, 4, 4, 9])                   # [4]: broadcast to [3, 4]
        a = g[:, rows, cols]                                # adjacent: [B, 3, 4]
        b = g[torch.tensor([5, 0]), :, torch.tensor([3, 7])]  # apart: [2, 3] first
        b = b.transpose(0, 1).reshape(3, 2).repeat(1, 5)      # [3, 10]
        h = torch.cat([a.reshape(BATCH, 12), (g.mean(2)[:, :, None] * b[None]).mean(1)], 1)
        return self.out(h)


def indexed():
    torch.manual_seed(0)
    return Indexed(), (torch.randn(BATCH, FEATURES), torch.randint(0, CLASSES, (BATCH,)))
