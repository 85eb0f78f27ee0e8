"""Rounding and integer division: floor, ceil, trunc, round (ties to even),
frac, floor_divide, remainder and div with a rounding mode, abs, neg
and relu of integers, comparisons of booleans, any and all, of floats
computed from the parameters (PyTorch's gradient through the rounding is 0,
through frac and remainder's dividend 1) and of integer inputs, negative and
beyond f32's exact integers up to 2^30 (CANINE-style hashing: (id + 1) *
prime % buckets picks an embedding row); an integer tensor times a python float
(promoted to float, not read as an integer 0), divided (true
division), compared with a python float and selected against one. Tiny sizes, random weights."""
import torch
import torch.nn as nn

BATCH, N, BUCKETS = 8, 6, 13


class Rounding(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(N, N)
        self.b = nn.Linear(N, N)
        self.emb = nn.Embedding(BUCKETS, N)
        self.head = nn.Linear(N, 3)

    def forward(self, x, half, ids, y):
        h = self.a(x) * 3.0
        g = self.b(x)
        # Values: the rounding's output multiplies a path with a gradient.
        feats = (torch.floor(h) * g + torch.ceil(h) * 0.5 + torch.trunc(h) * g * g
                 + torch.round(h) * 0.25 + torch.frac(h) * g
                 + torch.remainder(h, 1.7) * 0.3 + torch.floor_divide(h.detach(), 0.9) * g
                 + torch.div(h, -1.3, rounding_mode="trunc") * 0.2
                 + torch.div(h, 1.1, rounding_mode="floor") * 0.1)
        # Ties to even, from an input of exact halves.
        feats = feats + torch.round(half) * g
        # Integer hashing beyond 2^24: exact in integers, as PyTorch's (lpc's
        # integers are i32: the product stays below 2^31).
        hashed = (ids % 2 ** 26 + 1) * 31 % BUCKETS
        q = torch.div(ids, 7, rounding_mode="floor")
        t = torch.div(ids, -5, rounding_mode="trunc")
        r = torch.remainder(ids, -9)
        small = (q % 1000 + t % 1000 + r).float() * 0.001
        feats = feats + self.emb(hashed).mean(-1) + small * g + (ids % 4) * 0.5 + (ids % 9) / 4
        # Integer abs, neg and relu stay integers; exp of one is a float.
        m = ids % 100 - 50
        feats = feats + (torch.abs(m) + torch.relu(-m)) * 0.01 * g + torch.exp(ids % 3) * 0.1
        # Booleans compared (False < True), any and all over a dim.
        odd, third = ids % 2 == 1, ids % 3 == 0
        feats = feats + (odd > third).float() * g + (odd >= True) * 0.5 \
            + torch.any(third, -1, keepdim=True) * 0.3 + torch.all(odd, -1, keepdim=True) * g
        # A python float against integers: compared and selected in float.
        small_ids = ids % 3
        feats = feats + (small_ids >= 0.5) * g + torch.where(odd, small_ids, 0.5) * 0.2
        return nn.functional.cross_entropy(self.head(feats), y)


def rounding():
    torch.manual_seed(0)
    return Rounding(), rounding_batches(1)


def rounding_batches(steps):
    g = torch.Generator().manual_seed(1)
    n = steps * BATCH
    big = torch.randint(-2 ** 30, 2 ** 30, (n, N), generator=g)
    return {"x": torch.randn(n, N, generator=g),
            "half": torch.randint(-8, 9, (n, N), generator=g) * 0.5,
            "ids": torch.where(torch.rand(n, N, generator=g) < 0.5, big,
                               torch.randint(-50, 50, (n, N), generator=g)),
            "y": torch.randint(0, 3, (n,), generator=g)}
