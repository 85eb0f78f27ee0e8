"""Random keep masks (stochastic depth) in the forms models write them:
floor(keep + rand) per example (Hugging Face, timm), rand >= p (LeViT),
bernoulli(keep) on a new tensor (torchvision). Each model's loss is the mean
of its mask over N examples, scaled by 1 / keep: 1 in expectation, with a
standard deviation of sqrt((1 - keep) / (keep N)) per step. A parameter
rides along (its gradient is 0) so lpc-run has something to train."""
import torch
import torch.nn as nn

N, KEEP = 4096, 0.8


class Mask(nn.Module):
    def __init__(self, form):
        super().__init__()
        self.form = form
        self.fc = nn.Linear(4, 1)

    def forward(self, x):
        shape = (x.shape[0], 1)
        if self.form == "floor":
            m = (KEEP + torch.rand(shape, dtype=x.dtype)).floor()
        elif self.form == "ge":
            m = torch.rand(shape).ge(1 - KEEP).float()
        else:
            m = x.new_empty(shape).bernoulli_(KEEP)
        return (m / KEEP).mean() + 0.0 * self.fc(x).sum()


def _make(form):
    def f():
        torch.manual_seed(0)
        return Mask(form), (torch.randn(N, 4),)
    return f


floor, ge, bernoulli = _make("floor"), _make("ge"), _make("bernoulli")


# BEiT as configured by default: stochastic depth 0.1 (two drop paths in its
# second layer). Its evaluation skips them in PyTorch; lpc's evaluation
# function must give PyTorch's eval loss on the same weights and batch.
def beit():
    from transformers import BeitConfig, BeitForImageClassification
    torch.manual_seed(0)
    m = BeitForImageClassification(BeitConfig(
        image_size=32, patch_size=8, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
        num_attention_heads=4, num_labels=5, use_relative_position_bias=True))
    assert m.config.drop_path_rate > 0
    g = torch.Generator().manual_seed(1)
    return m, {"pixel_values": torch.randn(4, 3, 32, 32, generator=g),
               "labels": torch.randint(0, 5, (4,), generator=g)}


def save_beit_batch(path):
    """The batch as a safetensors file, and PyTorch's eval loss on it."""
    from safetensors.torch import save_file
    m, batch = beit()
    save_file(batch, path)
    m.eval()
    with torch.no_grad():
        print(f"torch eval loss {float(m(**batch).loss):.6f}")
