"""The PyTorch side of the GPU comparison (scripts/gpu-check.sh).

Times the train step of the same GPT block lpc compiles (lpc-model gpt
--layers=1: token + position embeddings, pre-layernorm attention with a
causal mask, a GELU(tanh) MLP of 4 x d_model, a tied head, cross-entropy,
AdamW; bench/cpu_bench.py's TorchGPT at these sizes) in PyTorch eager:

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

from cpu_bench import TorchGPT  # the same block, at any size

E4M3_MAX = 448.0
E5M2_MAX = 57344.0


def to_fp8(x, dtype, fmax):
    """Per-tensor current scaling: x * scale in FP8 (row-major), and 1 / scale."""
    amax = x.abs().amax().float().clamp(min=1e-12)
    scale = fmax / amax
    q = (x.float() * scale).clamp(-fmax, fmax).to(dtype).contiguous()
    return q, scale.reciprocal()


def mm_fp8(a, b, a_dtype, a_max, b_dtype, b_max):
    """a [M, K] @ b [K, N] on the FP8 tensor cores, bf16 out. _scaled_mm
    takes a row-major and b column-major (b.t() of a row-major [N, K])."""
    qa, sa = to_fp8(a, a_dtype, a_max)
    qbt, sb = to_fp8(b.t(), b_dtype, b_max)
    return torch._scaled_mm(qa, qbt.t(), scale_a=sa, scale_b=sb,
                            out_dtype=torch.bfloat16)


class FP8Matmul(torch.autograd.Function):
    """x [M, K] @ w.t() for an nn.Linear weight w [N, K]: E4M3 forward,
    E5M2 gradients."""

    @staticmethod
    def forward(ctx, x, w):
        ctx.save_for_backward(x, w)
        return mm_fp8(x, w.t(), torch.float8_e4m3fn, E4M3_MAX,
                      torch.float8_e4m3fn, E4M3_MAX)

    @staticmethod
    def backward(ctx, g):
        x, w = ctx.saved_tensors
        gx = mm_fp8(g, w, torch.float8_e5m2, E5M2_MAX,
                    torch.float8_e4m3fn, E4M3_MAX)
        gw = mm_fp8(g.t(), x, torch.float8_e5m2, E5M2_MAX,
                    torch.float8_e4m3fn, E4M3_MAX)
        return gx, gw.to(w.dtype)


class FP8Linear(torch.nn.Linear):
    def forward(self, x):
        y = FP8Matmul.apply(x.reshape(-1, x.shape[-1]), self.weight)
        return y.reshape(*x.shape[:-1], self.out_features) + self.bias


def block(args, fp8):
    """bench/cpu_bench.py's TorchGPT (the block lpc-model gpt --layers=1
    emits) at these sizes, its Linears on FP8 tensor cores with `fp8`."""
    model = TorchGPT(d=args.d_model, heads=args.heads, seq=args.seq,
                     vocab=args.vocab)
    if fp8:
        for name in ("qkv", "proj", "fc", "mlp_proj"):
            lin = getattr(model, name)
            f = FP8Linear(lin.in_features, lin.out_features)
            f.load_state_dict(lin.state_dict())
            setattr(model, name, f)
    return model


def step_flops(vocab, d, seq, batch):
    tokens = batch * seq
    gemm = 2 * tokens * (d * 3 * d + d * d + 2 * d * 4 * d + d * vocab)
    attention = 2 * 2 * batch * seq * seq * d  # QK^T and PV, unmasked
    return 3 * (gemm + attention)  # forward + backward


def bench(args, fp8):
    dev = torch.device(args.device)
    torch.manual_seed(0)
    model = block(args, fp8).to(dev)
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
