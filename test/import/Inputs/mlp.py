"""A classifier MLP: the module returns logits; the loss is chosen on the
command line (--loss=cross_entropy:0:y)."""
import torch
import torch.nn as nn

BATCH, FEATURES, CLASSES = 8, 20, 5


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(FEATURES, 64), nn.ReLU(), nn.Linear(64, 32), nn.Tanh(),
                                 nn.Linear(32, CLASSES))

    def forward(self, x, y):
        return self.net(x)


def make():
    torch.manual_seed(0)
    return MLP(), (torch.randn(BATCH, FEATURES), torch.randint(0, CLASSES, (BATCH,)))


def batches(steps):
    g = torch.Generator().manual_seed(1)
    return {"x": torch.randn(steps * BATCH, FEATURES, generator=g),
            "y": torch.randint(0, CLASSES, (steps * BATCH,), generator=g)}
