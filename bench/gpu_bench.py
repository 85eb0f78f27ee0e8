"""The PyTorch side of the GPU comparison (scripts/gpu-check.sh).

Times the train step of the same GPT block lpc compiles (lpc-model gpt
--layers=1: token + position embeddings, pre-layernorm attention with a
causal mask, a GELU(tanh) MLP of 4 x d_model, a tied head, cross-entropy,
AdamW; weights [in, out] as lpc's) in PyTorch eager:

  bf16  torch.autocast("cuda", torch.bfloat16), attention through
        F.scaled_dot_product_attention (what an eager user writes)
  fp8   the same, with every Linear's three GEMMs through torch._scaled_mm:
        E4M3 activations and weights, E5M2 gradients, per-tensor current
        scaling (amax / format max), as torchao's float8 training does

and prints the median step time, achieved TFLOP/s (the GEMMs' and the
attention's FLOPs, 3x the forward's), and, given lpc's step times
(--lpc-bf16-ms / --lpc-fp8-ms, from lpc-run's summary), the ratios.

  python bench/gpu_bench.py --d-model=4096 --heads=32 --seq=2048 --batch=4
  python bench/gpu_bench.py --device=cpu --d-model=64 --heads=4 --seq=32 \
      --batch=2 --steps=3            # a smoke test of the script itself
"""
import argparse
import math
import statistics
import time

import torch
import torch.nn.functional as F

E4M3_MAX = 448.0
E5M2_MAX = 57344.0


def to_fp8(x, dtype, fmax):
    """Per-tensor current scaling: x * scale in FP8, and 1 / scale."""
    amax = x.abs().amax().float().clamp(min=1e-12)
    scale = fmax / amax
    q = (x.float() * scale).clamp(-fmax, fmax).to(dtype)
    return q, scale.reciprocal()


def mm_fp8(a, b, a_dtype, a_max, b_dtype, b_max):
    """a [M, K] @ b [K, N] on the FP8 tensor cores, bf16 out. _scaled_mm
    takes a row-major and b column-major (b.t() of a row-major [N, K])."""
    qa, sa = to_fp8(a, a_dtype, a_max)
    qbt, sb = to_fp8(b.t().contiguous(), b_dtype, b_max)
    return torch._scaled_mm(qa, qbt.t(), scale_a=sa, scale_b=sb,
                            out_dtype=torch.bfloat16)


class FP8Linear(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, w):  # x [M, K], w [K, N]
        ctx.save_for_backward(x, w)
        return mm_fp8(x, w, torch.float8_e4m3fn, E4M3_MAX,
                      torch.float8_e4m3fn, E4M3_MAX)

    @staticmethod
    def backward(ctx, g):  # g [M, N] in E5M2
        x, w = ctx.saved_tensors
        gx = mm_fp8(g, w.t(), torch.float8_e5m2, E5M2_MAX,
                    torch.float8_e4m3fn, E4M3_MAX)
        gw = mm_fp8(x.t(), g, torch.float8_e4m3fn, E4M3_MAX,
                    torch.float8_e5m2, E5M2_MAX)
        return gx, gw.to(w.dtype)


class Block(torch.nn.Module):
    def __init__(self, vocab, d, heads, seq, fp8):
        super().__init__()
        p = lambda *s: torch.nn.Parameter(torch.randn(*s) * 0.02)
        self.wte, self.wpe = p(vocab, d), p(seq, d)
        self.ln1, self.ln2, self.lnf = (torch.nn.LayerNorm(d) for _ in range(3))
        self.qkv_w, self.qkv_b = p(d, 3 * d), torch.nn.Parameter(torch.zeros(3 * d))
        self.proj_w, self.proj_b = p(d, d), torch.nn.Parameter(torch.zeros(d))
        self.fc_w, self.fc_b = p(d, 4 * d), torch.nn.Parameter(torch.zeros(4 * d))
        self.out_w, self.out_b = p(4 * d, d), torch.nn.Parameter(torch.zeros(d))
        self.heads, self.fp8 = heads, fp8

    def linear(self, x, w, b):
        if not self.fp8:
            return x @ w + b
        shape = x.shape
        y = FP8Linear.apply(x.reshape(-1, shape[-1]), w)
        return y.reshape(*shape[:-1], w.shape[1]) + b

    def forward(self, tokens, targets):
        B, S = tokens.shape
        x = self.wte[tokens] + self.wpe[:S]
        q, k, v = self.linear(self.ln1(x), self.qkv_w, self.qkv_b).split(
            x.shape[-1], dim=-1)
        hd = x.shape[-1] // self.heads
        q, k, v = (t.reshape(B, S, self.heads, hd).transpose(1, 2)
                   for t in (q, k, v))
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        a = a.transpose(1, 2).reshape(B, S, -1)
        x = x + self.linear(a, self.proj_w, self.proj_b)
        h = F.gelu(self.linear(self.ln2(x), self.fc_w, self.fc_b),
                   approximate="tanh")
        x = x + self.linear(h, self.out_w, self.out_b)
        logits = self.lnf(x) @ self.wte.t()
        return F.cross_entropy(logits.float().reshape(-1, logits.shape[-1]),
                               targets.reshape(-1))


def step_flops(vocab, d, seq, batch):
    tokens = batch * seq
    gemm = 2 * tokens * (d * 3 * d + d * d + 2 * d * 4 * d + d * vocab)
    attention = 2 * 2 * batch * seq * seq * d  # QK^T and PV, unmasked
    return 3 * (gemm + attention)  # forward + backward


def bench(args, fp8):
    dev = torch.device(args.device)
    torch.manual_seed(0)
    model = Block(args.vocab, args.d_model, args.heads, args.seq, fp8).to(dev)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    tokens = torch.randint(0, args.vocab, (args.batch, args.seq), device=dev)
    targets = torch.randint(0, args.vocab, (args.batch, args.seq), device=dev)
    dtype = torch.bfloat16
    times = []
    for i in range(args.warmup + args.steps):
        if dev.type == "cuda":
            torch.cuda.synchronize()
        t0 = time.perf_counter()
        with torch.autocast(dev.type, dtype=dtype):
            loss = model(tokens, targets)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        if dev.type == "cuda":
            torch.cuda.synchronize()
        if i >= args.warmup:
            times.append(time.perf_counter() - t0)
    if not math.isfinite(loss.item()):
        raise SystemExit(f"gpu_bench: the PyTorch loss is {loss.item()}")
    return statistics.median(times) * 1e3


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--vocab", type=int, default=256)
    ap.add_argument("--d-model", type=int, default=4096)
    ap.add_argument("--heads", type=int, default=32)
    ap.add_argument("--seq", type=int, default=2048)
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--precisions", default="bf16,fp8")
    ap.add_argument("--lpc-bf16-ms", type=float)
    ap.add_argument("--lpc-fp8-ms", type=float)
    args = ap.parse_args()
    name = (torch.cuda.get_device_name() if args.device == "cuda"
            else "cpu")
    print(f"PyTorch {torch.__version__} on {name}; GPT block d_model "
          f"{args.d_model}, {args.heads} heads, seq {args.seq}, batch "
          f"{args.batch}, vocab {args.vocab}")
    flops = step_flops(args.vocab, args.d_model, args.seq, args.batch)
    lpc = {"bf16": args.lpc_bf16_ms, "fp8": args.lpc_fp8_ms}
    for p in args.precisions.split(","):
        ms = bench(args, fp8=(p == "fp8"))
        line = (f"  torch {p:4s}: {ms:9.2f} ms/step  "
                f"{flops / ms / 1e9:7.1f} TFLOP/s")
        if lpc.get(p):
            line += (f" | lpc {lpc[p]:9.2f} ms/step "
                     f"{flops / lpc[p] / 1e9:7.1f} TFLOP/s; lpc speed / torch "
                     f"speed {ms / lpc[p]:.2f}x")
        print(line, flush=True)
    if args.lpc_bf16_ms and args.lpc_fp8_ms:
        print(f"  lpc fp8 vs lpc bf16: {args.lpc_bf16_ms / args.lpc_fp8_ms:.2f}x "
              f"faster")


if __name__ == "__main__":
    main()
