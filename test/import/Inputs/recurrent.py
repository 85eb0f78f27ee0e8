"""Recurrent layers as torch.export gives them (aten.lstm / gru / rnn_tanh /
rnn_relu and their cells), each with an option that changes the unrolled
graph: two layers, bidirectional, batch_first, proj_size, no biases, an
initial state from the inputs, unbatched cells."""
import torch
import torch.nn as nn
import torch.nn.functional as F

B, T, IN = 3, 5, 4


class LstmNet(nn.Module):
    """A two-layer bidirectional LSTM (batch_first) under a GRU, a classifier
    on the GRU's last step plus the LSTM's final states."""

    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(IN, 8, num_layers=2, batch_first=True, bidirectional=True)
        self.gru = nn.GRU(16, 6)
        self.out = nn.Linear(6 + 8, 4)

    def forward(self, x, y):
        s, (h, c) = self.lstm(x)
        g, hg = self.gru(s.transpose(0, 1))
        feat = torch.cat([g[-1], (h[-1] * c[-1]).tanh()], dim=-1)
        return F.cross_entropy(self.out(feat), y)


class ProjNet(nn.Module):
    """LSTM with proj_size and no biases, an Elman RNN (relu) whose initial
    state is computed from the input, and a tanh RNN."""

    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(IN, 9, proj_size=4, bias=False)
        self.h0 = nn.Linear(IN, 6)
        self.rnn = nn.RNN(4, 6, nonlinearity="relu")
        self.rnn2 = nn.RNN(6, 5, num_layers=2)
        self.out = nn.Linear(5, 1)

    def forward(self, x, y):
        xt = x.transpose(0, 1)                 # [T, B, IN]
        s, _ = self.lstm(xt)
        h0 = torch.tanh(self.h0(x.mean(1)))[None]
        r, _ = self.rnn(s, h0)
        r2, _ = self.rnn2(r)
        return F.mse_loss(self.out(r2.mean(0)).squeeze(-1), (y.float() - 1.5) / 2)


class CellNet(nn.Module):
    """LSTMCell, GRUCell and RNNCell stepped in Python (the loop unrolled by
    export), and an unbatched GRU over the first example's sequence."""

    def __init__(self):
        super().__init__()
        self.lc = nn.LSTMCell(IN, 6)
        self.gc = nn.GRUCell(6, 5)
        self.rc = nn.RNNCell(5, 5)
        self.ug = nn.GRU(IN, 4)
        self.out = nn.Linear(5, 4)

    def forward(self, x, y):
        h = c = torch.zeros(x.shape[0], 6)
        g = r = torch.zeros(x.shape[0], 5)
        for t in range(x.shape[1]):
            h, c = self.lc(x[:, t], (h, c))
            g = self.gc(h, g)
            r = self.rc(g, r)
        u, _ = self.ug(x[0])                   # [T, IN]: no batch dimension
        return F.cross_entropy(self.out(r) + u.mean(0), y)


MODELS = {"lstm": LstmNet, "proj": ProjNet, "cell": CellNet}


def _make(name):
    torch.manual_seed(0)
    m = MODELS[name]()
    return m, {"x": torch.randn(B, T, IN), "y": torch.randint(0, 4, (B,))}


def make():
    return _make("lstm")


def make_proj():
    return _make("proj")


def make_cell():
    return _make("cell")


def batches(steps):
    g = torch.Generator().manual_seed(1)
    return {"x": torch.randn(steps * B, T, IN, generator=g),
            "y": torch.randint(0, 4, (steps * B,), generator=g)}


class DropoutNet(nn.Module):
    """A three-layer GRU with dropout between its layers (two lpc.dropout)."""

    def __init__(self):
        super().__init__()
        self.gru = nn.GRU(IN, 6, num_layers=3, dropout=0.25)
        self.out = nn.Linear(6, 4)

    def forward(self, x, y):
        g, _ = self.gru(x.transpose(0, 1))
        return F.cross_entropy(self.out(g[-1]), y)


def make_dropout():
    torch.manual_seed(0)
    return DropoutNet(), {"x": torch.randn(B, T, IN), "y": torch.randint(0, 4, (B,))}

