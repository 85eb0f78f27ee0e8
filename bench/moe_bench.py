#!/usr/bin/env python3
"""Mixture-of-experts train-step speed on the CPU: lpc's sparse experts
(lpc.grouped_matmul, what lpc-import emits by default) against lpc's dense
form (lpc-import --experts=dense: every expert on every token) and against
PyTorch running the same sparse layer the way transformers' grouped_mm
implementation does (tokens sorted by expert, torch._grouped_mm, autograd).

  .venv-torch/bin/python bench/moe_bench.py [--tokens 1024 --top-k 2 --experts 8
      --hidden 512 --inner 1024 --policies no,bf16 --reps 2]

The layer: each token's top_k (token, expert) pairs (a fixed random routing,
top_k distinct experts per token), up projection [hidden -> inner], GELU
(tanh), down projection [inner -> hidden], weighted by a routing weight and
summed per token; MSE loss against random targets; AdamW (lr 1e-3). lpc-jit
times the compiled step; PyTorch the wall time of zero_grad + forward +
backward + AdamW.step + loss.item(). Runs alternate, medians of the timed
steps are printed with the ratios of each repetition.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
LPC_ENV = dict(os.environ, OMP_WAIT_POLICY=os.environ.get("OMP_WAIT_POLICY", "passive"))
STEP_RE = re.compile(r"step (\d+): loss ([-0-9.e+naninf]+), ([0-9.e+-]+) s")


def routing(a):
    rng = np.random.default_rng(0)
    ids = np.stack([rng.permutation(a.experts)[:a.top_k] for _ in range(a.tokens)])  # [T, k]
    weights = rng.random((a.tokens, a.top_k)).astype(np.float32)
    return ids, weights / weights.sum(1, keepdims=True)


def lpc_models(a, workdir):
    ids, weights = routing(a)
    T, k, E, D, F = a.tokens, a.top_k, a.experts, a.hidden, a.inner
    S = T * k
    fmt = lambda v: ", ".join(repr(float(x)) if isinstance(x, np.floating) else str(int(x)) for x in v)
    common = (f'  %x = lpc.input "x" features : tensor<{T}x{D}xf32>\n'
              f'  %t = lpc.input "t" targets : tensor<{T}x{D}xf32>\n')
    sparse = (f"func.func @sparse() -> tensor<f32> {{\n{common}"
              f"  %g = lpc.constant dense<[{fmt(ids.reshape(-1))}]> : tensor<{S}xi32>\n"
              f"  %r = lpc.constant dense<[{fmt(weights.reshape(-1))}]> : tensor<{S}xf32>\n"
              f'  %w1 = lpc.param "w1" normal {{std = 2.0e-02 : f64}} : tensor<{E}x{F}x{D}xf32>\n'
              f'  %w2 = lpc.param "w2" normal {{std = 2.0e-02 : f64}} : tensor<{E}x{D}x{F}xf32>\n'
              # each token's row repeated top_k times: [T, D] -> [T, k, D] -> [S, D]
              f"  %xb = lpc.broadcast %x dims = [0, 2] : tensor<{T}x{D}xf32> -> tensor<{T}x{k}x{D}xf32>\n"
              f"  %xs = lpc.reshape %xb : tensor<{T}x{k}x{D}xf32> -> tensor<{S}x{D}xf32>\n"
              f"  %h = lpc.grouped_matmul %xs, %w1, %g {{transpose_b}} : tensor<{S}x{D}xf32>, tensor<{E}x{F}x{D}xf32>, tensor<{S}xi32> -> tensor<{S}x{F}xf32>\n"
              f"  %a = lpc.gelu %h {{approximation = #lpc.gelu_approximation<tanh>}} : tensor<{S}x{F}xf32>\n"
              f"  %y = lpc.grouped_matmul %a, %w2, %g {{transpose_b}} : tensor<{S}x{F}xf32>, tensor<{E}x{D}x{F}xf32>, tensor<{S}xi32> -> tensor<{S}x{D}xf32>\n"
              f"  %rb = lpc.broadcast %r dims = [0] : tensor<{S}xf32> -> tensor<{S}x{D}xf32>\n"
              f"  %yw = lpc.mul %y, %rb : tensor<{S}x{D}xf32>\n"
              f"  %y3 = lpc.reshape %yw : tensor<{S}x{D}xf32> -> tensor<{T}x{k}x{D}xf32>\n"
              f"  %o = lpc.reduce_sum %y3 {{axes = array<i64: 1>}} : tensor<{T}x{k}x{D}xf32> -> tensor<{T}x{D}xf32>\n"
              f"  %l = lpc.mse_loss %o, %t : tensor<{T}x{D}xf32>\n"
              f"  return %l : tensor<f32>\n}}\n")
    route = np.zeros((T, E), np.float32)
    np.put_along_axis(route, ids, weights, axis=1)
    dense = (f"func.func @dense() -> tensor<f32> {{\n{common}"
             f"  %r = lpc.constant dense<[{', '.join(f'[{fmt(row)}]' for row in route)}]> : tensor<{T}x{E}xf32>\n"
             f'  %w1 = lpc.param "w1" normal {{std = 2.0e-02 : f64}} : tensor<{E * F}x{D}xf32>\n'
             f'  %w2 = lpc.param "w2" normal {{std = 2.0e-02 : f64}} : tensor<{E * F}x{D}xf32>\n'
             f"  %h = lpc.matmul %x, %w1 {{transpose_b}} : tensor<{T}x{D}xf32>, tensor<{E * F}x{D}xf32> -> tensor<{T}x{E * F}xf32>\n"
             f"  %a = lpc.gelu %h {{approximation = #lpc.gelu_approximation<tanh>}} : tensor<{T}x{E * F}xf32>\n"
             f"  %a3 = lpc.reshape %a : tensor<{T}x{E * F}xf32> -> tensor<{T}x{E}x{F}xf32>\n"
             f"  %rb = lpc.broadcast %r dims = [0, 1] : tensor<{T}x{E}xf32> -> tensor<{T}x{E}x{F}xf32>\n"
             f"  %aw3 = lpc.mul %a3, %rb : tensor<{T}x{E}x{F}xf32>\n"
             f"  %aw = lpc.reshape %aw3 : tensor<{T}x{E}x{F}xf32> -> tensor<{T}x{E * F}xf32>\n"
             f"  %o = lpc.matmul %aw, %w2 : tensor<{T}x{E * F}xf32>, tensor<{E * F}x{D}xf32> -> tensor<{T}x{D}xf32>\n"
             f"  %l = lpc.mse_loss %o, %t : tensor<{T}x{D}xf32>\n"
             f"  return %l : tensor<f32>\n}}\n")
    paths = {}
    for name, text in (("sparse", sparse), ("dense", dense)):
        paths[name] = os.path.join(workdir, f"moe_{name}.mlir")
        with open(paths[name], "w") as f:
            f.write(text)
    return paths


def run_lpc(path, policy, a):
    cmd = [os.path.join(ROOT, "build/bin/lpc-jit"), path, f"--steps={a.warmup + a.steps}", "--check=false",
           "--autodiff=optimizer=adamw lr=1e-3"]
    if policy != "no":
        cmd.append(f"--pipeline=lpc-mixed-precision{{policy={policy}}}")
    p = subprocess.run(cmd, capture_output=True, text=True, env=LPC_ENV)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{p.stdout[-2000:]}\n{p.stderr[-2000:]}")
    times = [float(m.group(3)) for m in map(STEP_RE.match, p.stdout.splitlines()) if m]
    if len(times) != a.warmup + a.steps:
        raise RuntimeError(f"expected {a.warmup + a.steps} steps from lpc-jit:\n{p.stdout}")
    return times[a.warmup:]


def run_torch(policy, a):
    import torch
    ids_np, weights_np = routing(a)
    T, k, E, D, F = a.tokens, a.top_k, a.experts, a.hidden, a.inner
    torch.manual_seed(0)
    w1 = torch.nn.Parameter(torch.randn(E, F, D) * 0.02)
    w2 = torch.nn.Parameter(torch.randn(E, D, F) * 0.02)
    opt = torch.optim.AdamW([w1, w2], lr=1e-3)
    x, t = torch.randn(T, D), torch.randn(T, D)
    ids = torch.from_numpy(ids_np).reshape(-1)
    weights = torch.from_numpy(weights_np).reshape(-1)
    low = torch.bfloat16 if policy == "bf16" else torch.float32

    def step():
        opt.zero_grad(set_to_none=True)
        # transformers' grouped_mm_experts_forward: sort, gather, offsets, grouped GEMMs.
        order = torch.sort(ids, stable=True).indices
        counts = torch.bincount(ids, minlength=E)
        offs = torch.cumsum(counts, 0).to(torch.int32)
        xs = x[order // k].to(low)
        h = torch._grouped_mm(xs, w1.to(low).transpose(-2, -1), offs=offs)
        h = torch.nn.functional.gelu(h.float(), approximate="tanh").to(low)
        y = torch._grouped_mm(h, w2.to(low).transpose(-2, -1), offs=offs).float()
        y = y * weights[order].unsqueeze(-1)
        out = torch.zeros(T * k, D).index_copy(0, order, y).view(T, k, D).sum(1)
        loss = torch.nn.functional.mse_loss(out, t)
        loss.backward()
        opt.step()
        return loss.item()

    times = []
    for _ in range(a.warmup + a.steps):
        t0 = time.perf_counter()
        step()
        times.append(time.perf_counter() - t0)
    return times[a.warmup:]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tokens", type=int, default=1024)
    ap.add_argument("--top-k", type=int, default=2)
    ap.add_argument("--experts", type=int, default=8)
    ap.add_argument("--hidden", type=int, default=512)
    ap.add_argument("--inner", type=int, default=1024)
    ap.add_argument("--policies", default="no,bf16")
    ap.add_argument("--reps", type=int, default=2)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--no-torch", action="store_true", help="lpc only")
    a = ap.parse_args()
    if not 1 <= a.top_k <= a.experts:
        ap.error(f"--top-k={a.top_k}: must be between 1 and --experts={a.experts}")
    workdir = tempfile.mkdtemp(prefix="lpc-moe-bench-")
    paths = lpc_models(a, workdir)
    flops = 6 * a.tokens * a.top_k * 2 * a.hidden * a.inner  # the sparse layer's GEMMs, fwd + bwd
    print(f"experts layer: {a.tokens} tokens, top {a.top_k} of {a.experts} experts, hidden {a.hidden}, "
          f"inner {a.inner}; {flops / 1e9:.2f} GFLOP of sparse GEMMs per step (dense: "
          f"{a.experts / a.top_k:.1f}x)")
    for policy in a.policies.split(","):
        med = {}
        for rep in range(a.reps):
            for name in ("sparse", "dense", "torch"):
                if name == "torch" and a.no_torch:
                    continue
                t = run_torch(policy, a) if name == "torch" else run_lpc(paths[name], policy, a)
                med.setdefault(name, []).append(statistics.median(t) * 1e3)
        line = [f"policy {policy}:"]
        for name, label in (("sparse", "lpc sparse"), ("dense", "lpc dense"), ("torch", "PyTorch grouped_mm")):
            if name in med:
                m = statistics.median(med[name])
                line.append(f"{label} {m:.1f} ms ({flops / m / 1e6:.0f} useful GFLOP/s)")
        print("  ".join(line))
        for peer in ("dense", "torch"):
            if peer in med:
                ratios = [p / s for p, s in zip(med[peer], med["sparse"])]
                print(f"  {peer} / lpc sparse per repetition: " + ", ".join(f"{r:.2f}" for r in ratios))
    return 0


if __name__ == "__main__":
    sys.exit(main())
