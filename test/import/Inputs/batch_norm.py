"""BatchNorm with running statistics: BnNet trains them (2-d, 1-d over
[N, C, L] and over [N, C], a momentum and epsilon of its own, one without
affine); Frozen keeps one in eval mode inside a training model (the running
statistics are constants there, only the affine trains); TinyResNet puts
them in residual blocks."""
import torch
import torch.nn as nn
import torch.nn.functional as F

N, CLASSES = 4, 5


class BnNet(nn.Module):
    # No bias before a BatchNorm (as ResNets): its gradient would be
    # mathematically zero, so rounding noise, which AdamW turns into
    # lr-sized steps that differ between two programs.
    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(3, 6, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(6)
        self.c2 = nn.Conv2d(6, 6, 3, stride=2)
        self.bn3 = nn.BatchNorm1d(6, momentum=0.3, eps=1e-3, affine=False)  # over [N, C, L]
        self.fc1 = nn.Linear(6, 12, bias=False)
        self.bn4 = nn.BatchNorm1d(12)  # over [N, C]
        self.fc2 = nn.Linear(12, CLASSES)

    def forward(self, x, y):
        # Smooth activations: a ReLU input that lands within rounding of 0
        # in one program and not in the other moves that program's
        # gradients (a flip that 20 SGD steps amplify), which would test
        # the summation order, not BatchNorm.
        h = F.silu(self.bn1(self.c1(x)))                # [N, 6, 7, 9]
        h = torch.tanh(self.c2(h))                      # [N, 6, 3, 4]
        h = F.silu(self.bn3(h.flatten(2))).mean(2)      # [N, 6]
        h = F.gelu(self.bn4(self.fc1(h)))
        return F.cross_entropy(self.fc2(h), y)


def make():
    torch.manual_seed(0)
    m = BnNet()
    # Running statistics that are not PyTorch's fresh ones (0 and 1), as a
    # model trained before has: lpc-run --init must read them.
    with torch.no_grad():
        for bn in (m.bn1, m.bn3, m.bn4):
            bn.running_mean.uniform_(-0.5, 0.5)
            bn.running_var.uniform_(0.5, 2.0)
            bn.num_batches_tracked.fill_(7)
    return m, {"x": torch.randn(N, 3, 7, 9), "y": torch.randint(0, CLASSES, (N,))}


def batches(steps):
    g = torch.Generator().manual_seed(1)
    return {"x": torch.randn(steps * N, 3, 7, 9, generator=g) * 1.5 + 0.3,
            "y": torch.randint(0, CLASSES, (steps * N,), generator=g)}


class Frozen(nn.Module):
    """A BatchNorm kept in eval mode while the rest trains (fine-tuning
    with frozen statistics)."""
    def __init__(self):
        super().__init__()
        self.c = nn.Conv2d(3, 4, 3)
        self.bn = nn.BatchNorm2d(4)
        self.fc = nn.Linear(4, CLASSES)
        with torch.no_grad():
            self.bn.running_mean.uniform_(-0.5, 0.5)
            self.bn.running_var.uniform_(0.5, 2.0)
        self.bn.eval()

    def train(self, mode=True):
        super().train(mode)
        self.bn.eval()
        return self

    def forward(self, x, y):
        return F.cross_entropy(self.fc(F.relu(self.bn(self.c(x))).mean((2, 3))), y)


def frozen():
    torch.manual_seed(0)
    return Frozen(), {"x": torch.randn(N, 3, 7, 9), "y": torch.randint(0, CLASSES, (N,))}


class Bf16Stats(nn.Module):
    def __init__(self):
        super().__init__()
        self.bn = nn.BatchNorm1d(4).to(torch.bfloat16)

    def forward(self, x):
        return self.bn(x).float().square().mean()


def bad_buffer():
    return Bf16Stats(), (torch.randn(3, 4, dtype=torch.bfloat16),)


class Block(nn.Module):
    """A ResNet basic block: two 3x3 convolutions with BatchNorm, the
    shortcut a strided 1x1 convolution with BatchNorm where the shape
    changes."""
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride=stride, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.down = None
        if stride != 1 or cin != cout:
            self.down = nn.Sequential(nn.Conv2d(cin, cout, 1, stride=stride, bias=False),
                                      nn.BatchNorm2d(cout))

    def forward(self, x):
        h = F.silu(self.bn1(self.conv1(x)))
        h = self.bn2(self.conv2(h))
        return F.silu(h + (x if self.down is None else self.down(x)))


class TinyResNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8),
                                  nn.SiLU())
        self.layer1 = Block(8, 8, 1)
        self.layer2 = Block(8, 12, 2)
        self.fc = nn.Linear(12, CLASSES)

    def forward(self, x, y):
        h = self.layer2(self.layer1(self.stem(x)))
        return F.cross_entropy(self.fc(F.adaptive_avg_pool2d(h, 1).flatten(1)), y)


def resnet():
    torch.manual_seed(0)
    return TinyResNet(), {"x": torch.randn(N, 3, 7, 9), "y": torch.randint(0, CLASSES, (N,))}
