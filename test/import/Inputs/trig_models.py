"""sin, cos and erf on computed values: a diffusion model's sinusoidal
timestep embedding of an input, a sine activation (SIREN) and GELU written
out with erf (BERT's original code), next to erf used on its own."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

N, D = 6, 16


def timestep_embedding(t, dim, max_period=100.0):
    half = dim // 2
    freqs = torch.exp(-math.log(max_period) * torch.arange(half, dtype=torch.float32) / half)
    args = t[:, None].float() * freqs[None]
    return torch.cat([torch.cos(args), torch.sin(args)], dim=-1)


def erf_gelu(x):
    return x * 0.5 * (1.0 + torch.erf(x / math.sqrt(2.0)))


class TrigNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.temb = nn.Linear(D, D)
        self.inp = nn.Linear(8, D)
        self.siren = nn.Linear(D, D)
        self.out = nn.Linear(D, 4)

    def forward(self, x, t, y):
        h = self.inp(x) + self.temb(timestep_embedding(t, D))
        h = torch.sin(1.5 * self.siren(erf_gelu(h)))
        h = h + 0.1 * torch.erf(h * 2.0) * torch.cos(h)
        return F.mse_loss(self.out(h), y)


def make():
    torch.manual_seed(0)
    return TrigNet(), {"x": torch.randn(N, 8), "t": torch.rand(N) * 50, "y": torch.randn(N, 4)}


def batches(steps):
    g = torch.Generator().manual_seed(1)
    return {"x": torch.randn(steps * N, 8, generator=g),
            "t": torch.rand(steps * N, generator=g) * 50,
            "y": torch.randn(steps * N, 4, generator=g)}
