"""Convolutions and pooling as lpc-import writes them out (im2col GEMMs,
strided slices, reductions): ConvMix puts every form in one small image
classifier; UpSampler the transposed convolutions."""
import torch
import torch.nn as nn
import torch.nn.functional as F

N, CLASSES = 3, 7


class ConvMix(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(3, 8, 3, padding=1)
        self.dw = nn.Conv2d(8, 8, 3, stride=2, padding=1, groups=8, bias=False)  # depthwise
        # grouped, dilated, non-square kernel, padding="same" (odd total: one more on the high side)
        self.gc = nn.Conv2d(8, 12, (3, 2), dilation=(2, 1), groups=4, padding="same")
        self.pw = nn.Conv2d(12, 6, 1, stride=(1, 2))  # 1x1, strided
        self.gn = nn.GroupNorm(3, 6)
        self.ln = nn.LayerNorm([6, 7, 3])  # over several dimensions
        self.c1d = nn.Conv1d(6, 5, 4, stride=3, padding=2)
        self.patch = nn.Conv2d(3, 4, 4, stride=4)  # tiles the image (ViT's patch embedding): 3x2 patches, the rest cropped
        self.fc = nn.Linear(5 * 3 + 6 * 2 * 3 + 6 + 4 * 3 * 2, CLASSES)

    def forward(self, x, y):
        # -inf padding, overlapping windows. On the input, whose values both
        # programs hold exactly: after computed values, a near tie can pick
        # another maximum in one program than in the other (a rounding flip
        # that moves the gradient), enough to fail the parameter check.
        h = F.max_pool2d(x, 3, stride=1, padding=1)
        h = torch.relu(self.c1(h))                      # [N, 8, 13, 11]
        h = self.dw(h)                                  # [N, 8, 7, 6]
        h = F.gelu(self.gc(h))                          # [N, 12, 7, 6]
        h = self.ln(self.gn(self.pw(h)))                # [N, 6, 7, 3]
        a = F.avg_pool2d(h, 2, ceil_mode=True, padding=1, count_include_pad=False)  # [N, 6, 4, 3]
        a = F.adaptive_avg_pool2d(a, (3, 2))            # uneven cells: 4 -> 3, 3 -> 2
        m = F.max_pool2d(h, (2, 2), ceil_mode=True)     # [N, 6, 4, 2]
        g = F.adaptive_avg_pool2d(m, 1).flatten(1)      # global
        g = g + F.avg_pool2d(h, 3, stride=2, padding=1).mean((2, 3))  # padding counted
        c = self.c1d(h.flatten(2))                      # [N, 5, 8]
        c = F.adaptive_avg_pool1d(c, 3).flatten(1)      # uneven cells: [0,3) [2,6) [5,8)
        p = self.patch(x).flatten(1)                    # [N, 4 * 3 * 2]
        z = torch.cat([c, a.flatten(1), g, p], 1)
        return F.cross_entropy(self.fc(z), y)


def make():
    torch.manual_seed(0)
    return ConvMix(), {"x": torch.randn(N, 3, 13, 11), "y": torch.randint(0, CLASSES, (N,))}


def batches(steps):
    g = torch.Generator().manual_seed(1)
    return {"x": torch.randn(steps * N, 3, 13, 11, generator=g),
            "y": torch.randint(0, CLASSES, (steps * N,), generator=g)}


class UpSampler(nn.Module):
    """Transposed convolutions: strided with output_padding, grouped and
    dilated with a non-square kernel, and 1-d with more padding than the
    kernel reaches (the upsampled input is cropped)."""
    def __init__(self):
        super().__init__()
        self.enc = nn.Conv2d(2, 6, 3, stride=2, padding=1)
        self.up = nn.ConvTranspose2d(6, 4, 3, stride=2, padding=1, output_padding=1)
        self.up2 = nn.ConvTranspose2d(4, 2, (2, 3), stride=(1, 2), padding=(0, 2), groups=2,
                                      dilation=(2, 1), bias=False)
        self.up1 = nn.ConvTranspose1d(2, 3, 4, stride=3, padding=4)

    def forward(self, x, t):
        h = torch.tanh(self.enc(x))
        h = torch.tanh(self.up(h))
        h = self.up2(h)
        z = self.up1(h.flatten(2))
        return h.square().mean() + z.square().mean() + ((h.flatten(1)[:, :8] - t) ** 2).mean()


def upsampler():
    torch.manual_seed(0)
    return UpSampler(), {"x": torch.randn(N, 2, 9, 8), "t": torch.randn(N, 8)}


def upsampler_batches(steps):
    g = torch.Generator().manual_seed(1)
    return {"x": torch.randn(steps * N, 2, 9, 8, generator=g),
            "t": torch.randn(steps * N, 8, generator=g)}
