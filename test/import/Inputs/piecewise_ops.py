"""A classifier built from the piecewise ATen ops that lpc expresses with
lpc.compare and lpc.where (parity-piecewise-ops.test): clamp (scalar bounds,
one bound, tensor bounds), hardtanh, relu6, leaky_relu, elu, selu, celu,
softplus (beta, threshold), mish, hardswish, hardsigmoid, threshold,
logsigmoid, maximum/minimum, sign, and masks computed from the inputs
(comparisons, masked_fill, where, bool-to-float, logical and/or/not)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

BATCH, FEATURES, CLASSES, WIDTH = 8, 20, 5, 48


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.inp = nn.Linear(FEATURES, WIDTH)
        self.mid = nn.Linear(WIDTH, WIDTH)
        self.low = nn.Parameter(torch.randn(WIDTH) * 0.3 - 0.8)   # a learned lower bound
        self.out = nn.Linear(WIDTH, CLASSES)

    def forward(self, x, y):
        h = self.inp(x) * 2.0                            # spread: every branch is taken
        a = (h.clamp(-1.5, 1.2) + h.clamp(min=-0.3) * 0.5 + h.clamp(max=0.4) * 0.25
             + torch.clamp(h, min=self.low, max=self.low + 1.5) * 0.5)
        a = a + F.hardtanh(h, -0.7, 0.9) + F.relu6(h * 4.0) * 0.1
        a = a + F.leaky_relu(h, 0.07) + F.elu(h, alpha=0.8) + F.selu(h) * 0.5 + F.celu(h, alpha=1.3) * 0.5
        a = a + F.softplus(h, beta=2.0, threshold=1.5) + F.mish(h) * 0.5 + F.logsigmoid(h) * 0.3
        a = a + F.hardswish(h * 3.0) * 0.2 + F.hardsigmoid(h * 3.0) + F.threshold(h, 0.2, -0.1)
        h = self.mid(a * 0.2)
        # Masks computed from the inputs.
        far = (h > 1.0) | (h < -1.0)
        h = h.masked_fill(far & (x.mean(-1, keepdim=True) > 0), 0.5)
        h = torch.where(~(h >= 0), h * 0.2, h) + (h != h.clamp(-0.5, 0.5)).float() * 0.1
        h = h + torch.maximum(h, h[:, torch.arange(WIDTH - 1, -1, -1)] * 0.5) + torch.minimum(h, torch.zeros(BATCH, WIDTH)) * 0.5
        h = h + torch.sign(h) * 0.05 + torch.maximum(h, torch.tensor(0.25)) * 0.1
        return self.out(h)


def make():
    torch.manual_seed(0)
    return Net(), (torch.randn(BATCH, FEATURES), torch.randint(0, CLASSES, (BATCH,)))


def batches(steps):
    g = torch.Generator().manual_seed(1)
    return {"x": torch.randn(steps * BATCH, FEATURES, generator=g),
            "y": torch.randint(0, CLASSES, (steps * BATCH,), generator=g)}
