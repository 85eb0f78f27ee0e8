"""Ops lpc-import takes through PyTorch's own decompositions (einsum, norms,
cosine_similarity, triu, outer, logsumexp, pixel_shuffle, repeat_interleave,
instance_norm, the l1 / huber / smooth-l1 / kl-div / bce-with-logits / nll
losses) or writes itself on top of them (gather, repeat, cumsum, nearest and
linear interpolation, BatchNorm without running statistics), in one model."""
import torch
import torch.nn as nn
import torch.nn.functional as F

N, D = 4, 12


class Decomposed(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(D, 2 * D)
        self.conv = nn.Conv2d(1, 4, 3, padding=1, bias=False)  # a bias before BatchNorm has no gradient
        self.bn = nn.BatchNorm2d(4, track_running_stats=False)
        self.inorm = nn.InstanceNorm2d(4, affine=True)
        self.head = nn.Linear(D, 5)

    def forward(self, x, y):
        h = self.fc(x)                                            # [N, 24]
        a, b = h[:, :D], h[:, D:]
        g = torch.einsum("ni,nj->ij", a, b)                       # [12, 12]
        u = F.normalize(a, dim=-1) + torch.linalg.vector_norm(b, dim=-1, keepdim=True) / 8
        c = F.cosine_similarity(a, b).mean()
        t = torch.triu(g).sum() / 100 + torch.outer(a[0], b[1]).mean()
        s = torch.logsumexp(u, -1).mean() + a.cumsum(-1).square().mean() / 100
        img = u.reshape(N, 1, 3, 4)
        up = F.interpolate(img, scale_factor=2, mode="nearest")   # [N, 1, 6, 8]
        up = up + F.interpolate(img, size=(6, 8), mode="bilinear", align_corners=False)
        up = up + F.interpolate(img, size=(5, 7), mode="bilinear", align_corners=True)[:, :, :1, :1]
        up = up + F.interpolate(img, size=(6, 8), mode="nearest")
        up = up + F.interpolate(img, scale_factor=(2.0, 2.5), mode="bilinear")[:, :, :, :8]
        f = self.inorm(F.gelu(self.bn(self.conv(up))))          # [N, 4, 6, 8]
        f = F.pixel_shuffle(f, 2)                                 # [N, 1, 12, 16]
        z = f[:, :, :5, :7].mean((2, 3)).repeat(1, 3) + b.repeat_interleave(2, dim=1)[:, :3].mean(1, keepdim=True)
        logits = self.head(u) + z[:, :1]
        logp = F.log_softmax(logits, -1)
        picked = logp.gather(1, y.unsqueeze(1)).mean()
        losses = (F.nll_loss(logp, y) - picked
                  + F.kl_div(logp, torch.full_like(logp, 0.2), reduction="batchmean")
                  + F.binary_cross_entropy_with_logits(logits, torch.full_like(logits, 0.3))
                  + F.smooth_l1_loss(a, b) + F.huber_loss(a, 0.5 * b, delta=0.7) + F.l1_loss(u, a))
        return losses + 0.1 * (c + t + s)


def make():
    torch.manual_seed(0)
    return Decomposed(), {"x": torch.randn(N, D), "y": torch.randint(0, 5, (N,))}


def batches(steps):
    g = torch.Generator().manual_seed(1)
    return {"x": torch.randn(steps * N, D, generator=g), "y": torch.randint(0, 5, (steps * N,), generator=g)}
