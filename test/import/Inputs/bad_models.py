"""Modules lpc-import must refuse, each with a clear error."""
import torch
import torch.nn as nn


class Sorts(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)

    def forward(self, x):
        y = self.fc(x)
        return torch.sort(y, dim=-1).values.sum()  # no lpc op sorts


class DataDependent(nn.Module):
    def forward(self, x):
        if x.sum() > 0:  # control flow on a value: torch.export refuses
            return x.sum()
        return -x.sum()


class NoLoss(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 4)

    def forward(self, x):
        return self.fc(x)


def sorts():
    return Sorts(), (torch.randn(2, 8),)


def data_dependent():
    return DataDependent(), (torch.randn(2, 8),)


def no_loss():
    return NoLoss(), (torch.randn(2, 8),)


def not_a_module():
    return 3, ()


def raises():
    raise RuntimeError("the factory itself failed")


class VarOfOne(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 1)

    def forward(self, x):
        return self.fc(x).var(-1).sum()  # unbiased over 1 element: NaN


def var_of_one():
    return VarOfOne(), (torch.randn(2, 8),)



class StridedWrite(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)

    def forward(self, x):
        y = self.fc(x)
        y[:, ::2] = 0.0  # a write into a strided slice: no lpc form yet
        return y.sum()


def strided_write():
    return StridedWrite(), (torch.randn(2, 8),)


class IntClamp(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)

    def forward(self, x, ids):
        return (self.fc(x) * ids.clamp(max=2.5)).sum()  # an integer tensor, a fractional bound


def int_clamp():
    return IntClamp(), (torch.randn(2, 8), torch.randint(0, 5, (2, 8)))


class WideTopk(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 128)

    def forward(self, x):
        return torch.topk(self.fc(x), 100).values.sum()  # unrolled: k <= 64


def wide_topk():
    torch.manual_seed(0)
    return WideTopk(), (torch.randn(4, 8),)


class NarrowScatter(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 6)

    def forward(self, x):
        y = self.fc(x)                                   # [4, 6]
        idx = y[:2].topk(2).indices                      # [2, 2]: fewer rows than y
        return y.scatter(1, idx, 0.0).sum()


def narrow_scatter():
    torch.manual_seed(0)
    return NarrowScatter(), (torch.randn(4, 8),)


class ComplexAbs(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)

    def forward(self, x):
        c = torch.view_as_complex(self.fc(x).reshape(4, 4, 2))
        return c.abs().sum()  # only view_as_complex, a multiply and view_as_real


def complex_abs():
    torch.manual_seed(0)
    return ComplexAbs(), (torch.randn(4, 8),)


class Noise(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)

    def forward(self, x):
        return (self.fc(x) + 0.1 * torch.randn_like(x)).sum()  # noise: refused, not folded


def noise():
    torch.manual_seed(0)
    return Noise(), (torch.randn(4, 8),)


class RandScale(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)

    def forward(self, x):
        return (self.fc(x) * torch.rand_like(x)).sum()  # uniform noise, not a keep mask


def rand_scale():
    torch.manual_seed(0)
    return RandScale(), (torch.randn(4, 8),)
