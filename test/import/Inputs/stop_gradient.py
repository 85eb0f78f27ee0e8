"""Values kept out of the gradient: x.detach() and torch.no_grad() blocks.

StraightThrough quantizes a hidden layer with a straight-through estimator
(h + (q - h).detach(): the forward sees q, the backward the identity) and
adds a term whose second factor is detached. VectorQuantizer is a VQ-VAE
bottleneck: the nearest codebook row by argmin, the straight-through copy,
and the codebook and commitment losses, each with one side detached.
NoGradTarget computes a soft target from the model's own output inside a
torch.no_grad() block (a decorated method and a with-block with an in-place
op and a constant inside) and trains towards it. Each differs from PyTorch in
its first steps when the detached side gets a gradient."""
import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH = 8


def _xy(steps, din, dout, seed):
    g = torch.Generator().manual_seed(seed)
    return {"x": torch.randn(steps * BATCH, din, generator=g),
            "y": torch.randn(steps * BATCH, dout, generator=g)}


class StraightThrough(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(8, 16)
        self.b = nn.Linear(16, 4)

    def forward(self, x, y):
        h = self.a(x)
        q = torch.relu(h) * 0.5 + 0.25   # a stand-in quantizer the backward must skip
        h = h + (q - h).detach()
        out = self.b(h)
        return ((out - y) ** 2).mean() + 0.1 * (out * out.detach()).mean()


def straight_through():
    torch.manual_seed(0)
    return StraightThrough(), straight_through_batches(1)


def straight_through_batches(steps):
    return _xy(steps, 8, 4, 1)


class VectorQuantizer(nn.Module):
    def __init__(self, din=6, d=5, codes=7):
        super().__init__()
        self.enc = nn.Linear(din, d)
        self.codebook = nn.Parameter(torch.randn(codes, d))
        self.dec = nn.Linear(d, din)

    def forward(self, x, y):
        z = self.enc(x)
        dist = (z[:, None, :] - self.codebook[None]).pow(2).sum(-1)
        zq = self.codebook[dist.argmin(-1)]
        codebook_loss = F.mse_loss(zq, z.detach())
        commitment = F.mse_loss(z, zq.detach())
        zq = z + (zq - z).detach()
        return F.mse_loss(self.dec(zq), y) + codebook_loss + 0.25 * commitment


def vector_quantizer():
    torch.manual_seed(0)
    return VectorQuantizer(), vector_quantizer_batches(1)


def vector_quantizer_batches(steps):
    return _xy(steps, 6, 6, 2)


class NoGradTarget(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(8, 16)
        self.b = nn.Linear(16, 5)
        self.register_buffer("temperature", torch.tensor(2.0))

    @torch.no_grad()
    def sharpen(self, logits):
        return torch.softmax(logits / self.temperature, -1)

    def forward(self, x, y):
        logits = self.b(torch.tanh(self.a(x)))
        with torch.no_grad():
            t = torch.softmax(logits * 2.0, -1)
            t.mul_(0.9).add_(0.1 / 5)       # label smoothing, in place
            w = torch.sigmoid(self.a.weight).mean()
        s = self.sharpen(logits)
        logp = torch.log_softmax(logits, -1)
        return -(t * logp).sum(-1).mean() * w - 0.5 * (s * logp).sum(-1).mean() + \
            0.1 * ((logits[:, :4] - y) ** 2).mean()


def no_grad_target():
    torch.manual_seed(0)
    return NoGradTarget(), no_grad_target_batches(1)


def no_grad_target_batches(steps):
    return _xy(steps, 8, 4, 3)


class Nested(nn.Module):
    """enable_grad() inside no_grad(), and no_grad() inside that: only the
    ops run with gradients off stop it."""

    def __init__(self):
        super().__init__()
        self.a = nn.Linear(8, 16)
        self.b = nn.Linear(16, 4)

    def forward(self, x, y):
        h = self.a(x)
        with torch.no_grad():
            c = h * 2                    # no gradient
            with torch.enable_grad():
                e = c * h                # a gradient through h only
            with torch.no_grad():
                d = torch.tanh(c)
            p = h                        # the same tensor: keeps its gradient
        out = self.b(torch.cat([e, d], -1)[:, :16] + p)
        return ((out - y) ** 2).mean()


def nested():
    torch.manual_seed(0)
    return Nested(), nested_batches(1)


def nested_batches(steps):
    return _xy(steps, 8, 4, 4)
