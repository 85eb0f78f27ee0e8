"""GELU's tanh form written out (as Hugging Face's NewGELUActivation), once
alone and once with a piece of it used elsewhere."""
import math

import torch
import torch.nn as nn


def new_gelu(x):
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


class Written(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)

    def forward(self, x):
        return new_gelu(self.fc(x)).sum()


class Shared(nn.Module):
    """The cube is also used outside the GELU: the pattern must stay ops."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)

    def forward(self, x):
        h = self.fc(x)
        c = torch.pow(h, 3.0)
        g = 0.5 * h * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (h + 0.044715 * c)))
        return (g + c).sum()


def written():
    return Written(), (torch.randn(2, 8),)


def shared():
    return Shared(), (torch.randn(2, 8),)
