"""cross_entropy in the forms training code writes beyond the plain one:
label smoothing (with ignore_index), class weights, both, reduction='sum',
and reduction='none' weighted per example by the model; next to a plain one
(lpc.softmax_cross_entropy). Image-shaped logits [N, C, H, W] too."""
import torch
import torch.nn as nn
import torch.nn.functional as F

C, BATCH, IGNORE = 5, 8, 2


class Smoothed(nn.Module):
    def __init__(self):
        super().__init__()
        self.l = nn.Linear(6, C)
        self.conv = nn.Conv2d(6, C, 1)

    def forward(self, x, y, seg):
        z = self.l(x)
        zz = self.conv(x[:, :, None, None].expand(-1, -1, 2, 3))
        return (F.cross_entropy(z, y) + F.cross_entropy(z * 2, y, label_smoothing=0.1, ignore_index=IGNORE)
                + 0.5 * F.cross_entropy(zz, seg, label_smoothing=0.2))


class Weighted(nn.Module):
    def __init__(self):
        super().__init__()
        self.l = nn.Linear(6, C)
        self.register_buffer("w", torch.tensor([1.0, 2.0, 0.5, 1.5, 3.0]))

    def forward(self, x, y, seg):
        z = self.l(x)
        per = F.cross_entropy(z, y, reduction="none", ignore_index=IGNORE)
        return (F.cross_entropy(z, y, weight=self.w, ignore_index=IGNORE)
                + F.cross_entropy(z, y, weight=self.w, label_smoothing=0.15)
                + 0.05 * F.cross_entropy(z, y, weight=self.w, label_smoothing=0.2, reduction="sum")
                + (per * torch.linspace(0.5, 1.5, per.shape[0])).mean())


def batches(steps):
    g = torch.Generator().manual_seed(1)
    n = steps * BATCH
    return {"x": torch.randn(n, 6, generator=g), "y": torch.randint(0, C, (n,), generator=g),
            "seg": torch.randint(0, C, (n, 2, 3), generator=g)}


def smoothed():
    torch.manual_seed(0)
    return Smoothed(), batches(1)


def weighted():
    torch.manual_seed(0)
    return Weighted(), batches(1)
