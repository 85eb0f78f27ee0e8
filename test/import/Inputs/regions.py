"""Regions torch.export keeps as higher-order ops: torch.utils.checkpoint
(activation checkpointing: the same values, recomputed in PyTorch's backward)
and a torch.autocast region (bf16 in PyTorch; lpc-import inlines it and lpc's
precision policy decides its ops' precision). Tiny sizes, random weights."""
import torch
import torch.nn as nn
from torch.utils.checkpoint import checkpoint


class Checkpointed(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(8, 16)
        self.b = nn.Linear(16, 4)

    def forward(self, x, y):
        h = checkpoint(lambda t: torch.tanh(self.a(t)), x, use_reentrant=False)
        return ((self.b(h) - y) ** 2).mean()


class Autocast(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(8, 16)
        self.b = nn.Linear(16, 4)

    def forward(self, x, y):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            h = torch.tanh(self.a(x))
        return ((self.b(h.float()) - y) ** 2).mean()


def batches(steps):
    g = torch.Generator().manual_seed(1)
    return {"x": torch.randn(steps * 8, 8, generator=g), "y": torch.randn(steps * 8, 4, generator=g)}


def checkpointed():
    torch.manual_seed(0)
    return Checkpointed(), batches(1)


def autocast():
    torch.manual_seed(0)
    return Autocast(), batches(1)
