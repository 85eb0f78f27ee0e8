"""Integer arithmetic on the inputs: RobertaForMaskedLM computes its
position ids from the token ids (a padding mask, an integer cumsum, a
multiply and an add: padding_idx + 1 onward for real tokens, padding_idx
for padding), and a diffusion-style model embeds integer timesteps
(t.float()) with sin/cos and truncates a float back to integers (.long()).
Tiny configurations, random weights, dropout off."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from transformers import RobertaConfig, RobertaForMaskedLM

VOCAB, SEQ, BATCH, PAD = 64, 10, 4, 1


def _ids(n, g):
    ids = torch.randint(PAD + 1, VOCAB, (n, SEQ), generator=g)
    lens = torch.randint(4, SEQ + 1, (n,), generator=g)
    ids[torch.arange(SEQ)[None] >= lens[:, None]] = PAD  # right padding
    return ids


def roberta():
    torch.manual_seed(0)
    cfg = RobertaConfig(vocab_size=VOCAB, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                        num_attention_heads=4, max_position_embeddings=SEQ + PAD + 1,
                        hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0,
                        pad_token_id=PAD, attn_implementation="sdpa", initializer_range=0.2)
    return RobertaForMaskedLM(cfg), roberta_batches(1)


def roberta_batches(steps):
    g = torch.Generator().manual_seed(1)
    ids = _ids(steps * BATCH, g)
    labels = ids.masked_fill(ids == PAD, -100)
    return {"input_ids": ids, "labels": labels}


class TimeNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.inp = nn.Linear(6, 16)
        self.temb = nn.Linear(16, 16)
        self.out = nn.Linear(16, 3)

    def forward(self, x, t, y):
        half = 8
        freqs = torch.exp(-math.log(1000.0) * torch.arange(half) / half)
        a = t.float()[:, None] * freqs[None]
        e = torch.cat([a.sin(), a.cos()], -1)
        h = F.silu(self.inp(x) + self.temb(e))
        # Back to integers with .long(): truncation toward zero, of
        # negative values too (floor would differ), then integer arithmetic.
        q = ((t.float() - 500.0) / 4.0).long() * 4
        h = h + (q - t + 500).float()[:, None] * 0.1
        return F.cross_entropy(self.out(h), y)


def timenet():
    torch.manual_seed(0)
    return TimeNet(), timenet_batches(1)


def _xty_batches(steps, t_high):
    """x [n, 6] floats, t [n] integers below t_high, y [n] classes of 3."""
    g = torch.Generator().manual_seed(1)
    n = steps * 5
    return {"x": torch.randn(n, 6, generator=g), "t": torch.randint(0, t_high, (n,), generator=g),
            "y": torch.randint(0, 3, (n,), generator=g)}


def timenet_batches(steps):
    return _xty_batches(steps, 1000)


# A sequence classifier pools each sequence's last real token: its position is
# an argmax over the (padded) token ids, and logits[arange(batch), position]
# indexes with a constant and a computed index tensor (Hugging Face's
# *ForSequenceClassification of decoders, CLIP's text pooling).
def llama_cls():
    from transformers import LlamaConfig, LlamaForSequenceClassification
    torch.manual_seed(0)
    cfg = LlamaConfig(vocab_size=VOCAB, hidden_size=32, intermediate_size=48, num_hidden_layers=2,
                      num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=SEQ,
                      pad_token_id=PAD, num_labels=3, attn_implementation="sdpa")
    return LlamaForSequenceClassification(cfg), llama_cls_batches(1)


def llama_cls_batches(steps):
    g = torch.Generator().manual_seed(1)
    return {"input_ids": _ids(steps * BATCH, g),
            "labels": torch.randint(0, 3, (steps * BATCH,), generator=g)}


class ArgNet(nn.Module):
    """argmax / argmin in their forms: over a dim (keepdim or not), over the
    whole tensor, of floats with ties (the first one wins) and of integers;
    the indices pick rows and elements (one index tensor, several, two of
    them computed)."""

    def __init__(self):
        super().__init__()
        self.a = nn.Linear(6, 8)
        self.b = nn.Linear(8, 3)

    def forward(self, x, t, y):
        h = torch.tanh(self.a(x))                          # [n, 8]
        r = (h > 0).float() + (h > 0.5).float()            # 0, 1, 2: ties on purpose
        i = r.argmax(-1)                                   # [n]
        j = r.argmin(dim=1, keepdim=True)[:, 0]
        k = t.argmax()                                     # a scalar: the first largest t
        rows = torch.arange(h.shape[0])
        z = h[rows, i] + h[rows, j] * 0.5 + h[k.reshape(1)].sum() * 0.25 + h[t, i] * 0.3
        return F.cross_entropy(self.b(h) + z[:, None] * torch.tensor([1.0, -1.0, 0.5]), y)


def argnet():
    torch.manual_seed(0)
    return ArgNet(), argnet_batches(1)


def argnet_batches(steps):
    return _xty_batches(steps, 3)


class IntReduce(nn.Module):
    """Reductions of integer and boolean tensors (lpc reduces floats: these
    run in f32, exact below 2^24): a sum and a max of integer inputs, the
    max of a mask."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(6, 3)

    def forward(self, x, t, y):
        s = t.sum() + t.amax(0) * 2 + (t > 500).amax().long()
        return F.cross_entropy(self.fc(x) + (s.float() * 1e-4) * torch.tensor([1.0, -1.0, 0.5]), y)


def int_reduce():
    torch.manual_seed(0)
    return IntReduce(), int_reduce_batches(1)


def int_reduce_batches(steps):
    return _xty_batches(steps, 1000)
