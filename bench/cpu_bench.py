#!/usr/bin/env python3
"""CPU train-step benchmark: lpc-jit (each precision policy) vs. PyTorch, same run.

Run from the repository root: `scripts/lpc bench [ARGS]` builds lpc and runs this script with
PyPI's PyTorch (in .venv-torch). By hand, with any Python that has torch:

    python bench/cpu_bench.py            # 2 full runs, 3 warm-up + 10 timed steps
    python bench/cpu_bench.py --reps=3 --steps=20 --models=gpt

Models (both emitted by lpc-model, same shapes on the PyTorch side):
  mlp: lpc-model mlp   (784-1024-1024-10, GELU(erf), batch 256, softmax cross entropy)
  gpt: lpc-model gpt --layers=1 --d-model=512 --heads=8 --seq=128 --batch=16 --mlp-ratio=4
       --vocab=256   (ONE transformer block, but the step also includes the token + position
       embedding, the final LayerNorm, the tied LM head (512 -> 256) and the loss)
  gpt2: Hugging Face GPT2LMHeadModel at GPT-2 small (12 layers, d_model 768, 12 heads,
       vocab 50257, seq 128, batch 8; random weights, no dropout) brought in by lpc-import
       (not in the default --models: it needs transformers, and a step takes seconds)
Optimizer: AdamW lr 1e-3 on both sides. Inputs are random (timing only).

Per (model, policy) and per repetition, lpc-jit runs once (a fresh process: compile, then
warm-up + timed steps; the time of each step is what lpc-jit prints) and then the matching
PyTorch step runs in this process (fresh model, warm-up + timed steps), so both share the
machine's noise. The figure reported is the median over all timed steps of all repetitions.

FLOPs per train step (used for GFLOP/s, identical for both sides):
  6 * (parameters in GEMM weights) * tokens       (forward 2, backward dX 2 + dW 2)
  + attention 2 (QK^T, PV) * 2 * 3 (fwd+bwd) * B * H * S^2 * Dh   (full S^2, causal not halved)
Element-wise ops, norms, softmax, embeddings and the optimizer are not counted. The 6x
convention counts dX of the first layer too, which neither side computes.
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LPC_ENV = dict(os.environ)  # lpc-jit runs with the environment as it was given

# OpenBLAS 0.3.21 takes this CPU for an older one unless told (about 2x slower FP32 GEMMs,
# /work/shared/DESIGN.md section 5). Only this (PyTorch) process gets the override; it must be
# set before torch (and so libopenblas) is loaded.
os.environ["OPENBLAS_CORETYPE"] = os.environ.get("LPC_BENCH_OPENBLAS_CORETYPE", "SkylakeX")

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

POLICIES = ["no", "bf16", "fp16", "fp8"]
# PyTorch counterpart of each lpc policy. PyTorch's CPU autocast only does bf16, and has no
# fp8: fp16 and fp8 are compared with the fp32 step.
TORCH_VARIANT = {"no": "fp32", "bf16": "bf16-autocast", "fp16": "fp32", "fp8": "fp32"}

MLP = dict(input=784, hidden=[1024, 1024], classes=10, batch=256)
GPT = dict(d=512, heads=8, seq=128, batch=16, mlp_ratio=4, vocab=256)
GPT2 = dict(layers=12, d=768, heads=12, seq=128, batch=8, vocab=50257)


def gemm_flops(model):
    if model == "gpt2":
        L, d, h, s, b, v = (GPT2[k] for k in ("layers", "d", "heads", "seq", "batch", "vocab"))
        params = L * 12 * d * d + v * d  # c_attn, c_proj, c_fc, mlp c_proj per layer; lm_head
        tokens = b * s
        return 6 * params * tokens + L * 2 * 2 * 3 * b * h * s * s * (d // h), b
    if model == "mlp":
        dims = [MLP["input"]] + MLP["hidden"] + [MLP["classes"]]
        params = sum(a * b for a, b in zip(dims, dims[1:]))
        return 6 * params * MLP["batch"], MLP["batch"]
    d, h, s, b, r, v = (GPT[k] for k in ("d", "heads", "seq", "batch", "mlp_ratio", "vocab"))
    params = d * 3 * d + d * d + d * r * d + r * d * d + v * d  # qkv, proj, fc, proj, lm_head
    tokens = b * s
    attn = 2 * 2 * 3 * b * h * s * s * (d // h)
    return 6 * params * tokens + attn, b


# ----------------------------------------------------------------------------- lpc side
def gen_models(outdir):
    os.makedirs(outdir, exist_ok=True)
    model_bin = os.path.join(ROOT, "build/bin/lpc-model")
    paths = {"mlp": os.path.join(outdir, "mlp.mlir"), "gpt": os.path.join(outdir, "gpt.mlir")}
    subprocess.run([model_bin, "mlp", "-o", paths["mlp"]], check=True)
    subprocess.run([model_bin, "gpt", "--layers=1", f"--d-model={GPT['d']}", f"--heads={GPT['heads']}",
                    f"--seq={GPT['seq']}", f"--batch={GPT['batch']}", f"--mlp-ratio={GPT['mlp_ratio']}",
                    f"--vocab={GPT['vocab']}", "-o", paths["gpt"]], check=True)
    return paths


def gpt2_config():
    from transformers import GPT2Config
    return GPT2Config(vocab_size=GPT2["vocab"], n_positions=GPT2["seq"], n_embd=GPT2["d"],
                      n_layer=GPT2["layers"], n_head=GPT2["heads"], resid_pdrop=0.0, embd_pdrop=0.0,
                      attn_pdrop=0.0, use_cache=False, attn_implementation="sdpa")


def gen_gpt2(outdir):
    """The imported GPT-2 small: lpc-import of a factory written here."""
    factory = os.path.join(outdir, "gpt2_small.py")
    with open(factory, "w") as f:
        f.write("import sys\nsys.path.insert(0, %r)\nimport cpu_bench, torch\n"
                "from transformers import GPT2LMHeadModel\n"
                "def make():\n    torch.manual_seed(0)\n    m = GPT2LMHeadModel(cpu_bench.gpt2_config())\n"
                "    ids = torch.randint(0, %d, (%d, %d))\n"
                "    return m, {'input_ids': ids, 'labels': ids.clone()}\n"
                % (os.path.dirname(os.path.abspath(__file__)), GPT2["vocab"], GPT2["batch"], GPT2["seq"]))
    sys.path.insert(0, os.path.join(ROOT, "tools", "lpc-import"))
    import lpc_import
    out = os.path.join(outdir, "gpt2.mlir")
    if lpc_import.main([factory + ":make", "-o", out]) != 0:
        raise RuntimeError("lpc-import of GPT-2 small failed")
    return out


STEP_RE = re.compile(r"^step (\d+): loss ([-+0-9.eEnaif]+), ([0-9.eE+-]+) s")


def run_lpc(path, policy, warmup, steps):
    cmd = [os.path.join(ROOT, "build/bin/lpc-jit"), path, f"--steps={warmup + steps}", "--check=false",
           "--autodiff=optimizer=adamw lr=1e-3"]
    if policy != "no":
        cmd.append(f"--pipeline=lpc-mixed-precision{{policy={policy}}}")
    p = subprocess.run(cmd, capture_output=True, text=True, env=LPC_ENV)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{p.stdout}\n{p.stderr}")
    times, losses, compile_s = [], [], None
    for line in (p.stdout + p.stderr).splitlines():
        m = STEP_RE.match(line.strip())
        if m:
            times.append(float(m.group(3)))
            losses.append(float(m.group(2)))
        m = re.match(r"compiled .* in ([0-9.]+) s", line.strip())
        if m:
            compile_s = float(m.group(1))
    if len(times) != warmup + steps:
        raise RuntimeError(f"expected {warmup + steps} steps from lpc-jit, got {len(times)}:\n{p.stdout}")
    return times[warmup:], losses, compile_s


# ----------------------------------------------------------------------------- the floor
# Issue 16's CPU goal: the GPT bf16 step within 1.1x of its floor, the step's GEMM FLOPs at
# oneDNN's measured peak plus one optimizer pass. Peak: the best rate lpc-gemm-bench measures
# (lpc's own GEMM path, every thread and wait policy it tries) over the block's large shapes.
# Optimizer pass: the AdamW updates of the step as they run in it (lpc-jit --profile: the
# element-wise ops at each parameter with its shape in f32).
PROFILE_RE = re.compile(r"^\s*([0-9.]+) ms\s+[0-9.]+%\s+(.*)$")


def gemm_peak(dtype):
    """oneDNN's best GFLOP/s for `dtype` (bf16 / f32) over lpc-gemm-bench's transformer shapes."""
    cmd = [os.path.join(ROOT, "build/bin/lpc-gemm-bench"), "--filter", "tfm", "--no-naive",
           "--rounds", "3"]
    p = subprocess.run(cmd, capture_output=True, text=True, env=LPC_ENV)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{p.stdout}\n{p.stderr}")
    lines = p.stdout.splitlines()
    at = max(i for i, l in enumerate(lines) if l.startswith("GFLOP/s, best round"))
    cols = lines[at + 1].split()
    best, what = 0.0, ""
    for l in lines[at + 2:]:
        if not l.startswith("tfm") or "ms per train step" in l:
            continue
        vals = l.split()[-(len(cols) - cols.index("op") - 1):]
        for name, v in zip(cols[cols.index("op") + 1:], vals):
            # /1t: one thread, not the machine's peak.
            if name.startswith(f"dnnl-{dtype}") and not name.endswith("/1t") and float(v) > best:
                best, what = float(v), f"{l[5:30].strip()} ({name})"
    return best, what


def step_profile(path, policy, steps=6):
    """Every op's per-step ms in lpc's step: (ms, label) pairs from one profiled lpc-jit run."""
    cmd = [os.path.join(ROOT, "build/bin/lpc-jit"), path, f"--steps={steps}", "--check=false",
           "--autodiff=optimizer=adamw lr=1e-3", "--profile=100000"]
    if policy != "no":
        cmd.append(f"--pipeline=lpc-mixed-precision{{policy={policy}}}")
    p = subprocess.run(cmd, capture_output=True, text=True, env=LPC_ENV)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{p.stdout}\n{p.stderr}")
    ops, kinds, in_kinds = [], {}, False
    for line in p.stdout.splitlines():
        if line.startswith("profile by kind"):
            in_kinds = True
        m = PROFILE_RE.match(line)
        if m and in_kinds:
            kinds[m.group(2)] = float(m.group(1))
        elif m:
            ops.append((float(m.group(1)), m.group(2)))
    return ops, kinds


def optimizer_ms(path, ops):
    """Per-step ms of the AdamW updates in lpc's step (the profile's element-wise ops at each
    parameter, with its shape in f32)."""
    params = dict(re.findall(r'lpc\.param "([^"]+)".*: tensor<([0-9x]+)xf32>', open(path).read()))
    total, found = 0.0, set()
    for ms, what in ops:
        for name, shape in params.items():
            if what == f"map {shape}xf32 @ {name}":
                total += ms
                found.add(name)
    if found != set(params):
        raise RuntimeError(f"no AdamW update found in the profile for {sorted(set(params) - found)}")
    return total


GEMM_LABEL_RE = re.compile(r"^call (lpc_rt_gemm\w*) (.* -> \S+) @ ")


def per_shape_gemm_ms(ops, rounds=3):
    """The step's GEMMs, each at the best rate lpc-gemm-bench measures for its own shape and
    entry point (--gemm with the profile's labels): (ms, GFLOP, number of GEMMs)."""
    labels = []
    for _, what in ops:
        m = GEMM_LABEL_RE.match(what)
        if m:
            labels.append(f"call {m.group(1)} {m.group(2)}")
        elif what.startswith("call lpc_rt_gemm"):
            raise RuntimeError(f"cannot read the GEMM label '{what}'")
    cmd = [os.path.join(ROOT, "build/bin/lpc-gemm-bench"), "--rounds", str(rounds)]
    for label in labels:
        cmd += ["--gemm", label]
    p = subprocess.run(cmd, capture_output=True, text=True, env=LPC_ENV)
    if p.returncode != 0:
        raise RuntimeError(f"lpc-gemm-bench --gemm failed:\n{p.stdout}\n{p.stderr}")
    m = re.search(r"^total: (\d+) GEMMs .*?, ([0-9.]+) GFLOP: ([0-9.]+) ms at each shape's best rate",
                  p.stdout, re.M)
    if not m or int(m.group(1)) != len(labels):
        raise RuntimeError(f"unexpected lpc-gemm-bench output:\n{p.stdout}")
    return float(m.group(3)), float(m.group(2)), len(labels)


# ----------------------------------------------------------------------------- PyTorch side
class TorchMLP(nn.Module):
    def __init__(self):
        super().__init__()
        dims = [MLP["input"]] + MLP["hidden"] + [MLP["classes"]]
        layers = []
        for i, (a, b) in enumerate(zip(dims, dims[1:])):
            layers.append(nn.Linear(a, b))
            if i < len(dims) - 2:
                layers.append(nn.GELU())  # erf form, as lpc-model mlp's default
        self.net = nn.Sequential(*layers)

    def forward(self, x, y):
        return F.cross_entropy(self.net(x), y)


class TorchGPT(nn.Module):
    """GPT-2 block as lpc-model gpt --layers=1 emits it: pre-LN, causal attention, GELU(tanh),
    tied head, no dropout."""

    def __init__(self, d=GPT["d"], heads=GPT["heads"], seq=GPT["seq"], vocab=GPT["vocab"],
                 mlp_ratio=GPT["mlp_ratio"]):
        super().__init__()
        d, v, s, r = d, vocab, seq, mlp_ratio
        self.h = heads
        self.wte = nn.Embedding(v, d)
        self.wpe = nn.Embedding(s, d)
        self.ln_1 = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        self.ln_2 = nn.LayerNorm(d)
        self.fc = nn.Linear(d, r * d)
        self.mlp_proj = nn.Linear(r * d, d)
        self.ln_f = nn.LayerNorm(d)
        self.register_buffer("mask", torch.ones(s, s, dtype=torch.bool).tril().logical_not())
        self.register_buffer("pos", torch.arange(s))
        nn.init.normal_(self.wte.weight, std=0.02)  # as lpc-model gpt (and GPT-2)
        nn.init.normal_(self.wpe.weight, std=0.02)

    def forward(self, tok, tgt):
        b, s = tok.shape
        d, h = self.wte.weight.shape[1], self.h
        x = self.wte(tok) + self.wpe(self.pos)
        q, k, v = self.qkv(self.ln_1(x)).split(d, dim=-1)
        q, k, v = (t.view(b, s, h, d // h).transpose(1, 2) for t in (q, k, v))
        if hasattr(F, "scaled_dot_product_attention"):
            a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        else:  # torch 1.x
            att = (q @ k.transpose(-2, -1)) * (1.0 / (d // h) ** 0.5)
            att = att.masked_fill(self.mask, float("-inf")).softmax(dim=-1)
            a = att @ v
        x = x + self.proj(a.transpose(1, 2).reshape(b, s, d))
        x = x + self.mlp_proj(F.gelu(self.fc(self.ln_2(x)), approximate="tanh"))
        logits = self.ln_f(x) @ self.wte.weight.t()
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]).float(), tgt.reshape(-1))


def torch_inputs(model):
    g = torch.Generator().manual_seed(0)
    if model == "mlp":
        return (torch.randn(MLP["batch"], MLP["input"], generator=g),
                torch.randint(0, MLP["classes"], (MLP["batch"],), generator=g))
    cfg = GPT2 if model == "gpt2" else GPT
    shape = (cfg["batch"], cfg["seq"])
    ids = torch.randint(0, cfg["vocab"], shape, generator=g)
    if model == "gpt2":  # a language model's labels are its inputs (it shifts them)
        return ids, ids.clone()
    return ids, torch.randint(0, cfg["vocab"], shape, generator=g)


def make_adamw(params):
    try:
        return torch.optim.AdamW(params, lr=1e-3, foreach=True)
    except TypeError:
        return torch.optim.AdamW(params, lr=1e-3)


def run_torch(model, variant, warmup, steps, compiled=False):
    torch.manual_seed(0)
    if model == "gpt2":
        from transformers import GPT2LMHeadModel
        hf = GPT2LMHeadModel(gpt2_config())
        net = lambda ids, labels: hf(input_ids=ids, labels=labels).loss  # noqa: E731
        params = hf.parameters()
    else:
        net = TorchMLP() if model == "mlp" else TorchGPT()
        params = net.parameters()
    opt = make_adamw(params)
    x, y = torch_inputs(model)
    fwd = torch.compile(net) if compiled else net

    def step():
        opt.zero_grad(set_to_none=True)
        if variant == "bf16-autocast":
            with torch.autocast("cpu", dtype=torch.bfloat16):
                loss = fwd(x, y)
        else:
            loss = fwd(x, y)
        loss.backward()
        opt.step()
        return loss.item()

    times, losses = [], []
    for _ in range(warmup + steps):
        t0 = time.perf_counter()
        losses.append(step())
        times.append(time.perf_counter() - t0)
    return times[warmup:], losses


# ----------------------------------------------------------------------------- main
def torch_facts():
    cfg = torch.__config__.show()
    blas = re.search(r"BLAS_INFO=(\w+)", cfg)
    dnnl = re.search(r"(MKL-DNN|oneDNN) v[0-9.]+", cfg)
    libs = []
    try:
        with open(f"/proc/{os.getpid()}/maps") as f:
            for line in f:
                for name in ("libopenblas", "libblas", "libmkl", "libdnnl"):
                    if name in line:
                        libs.append(line.split()[-1])
    except OSError:
        pass
    cpu_flags = ""
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("flags"):
                cpu_flags = line
                break
    amx_cpu = [t for t in cpu_flags.split() if t.startswith("amx")]
    return {
        "torch": torch.__version__,
        "blas_info": blas.group(1) if blas else "?",
        "blas_libs_loaded": sorted(set(libs)),
        "onednn": dnnl.group(0) if dnnl else "none",
        "mkldnn_available": torch.backends.mkldnn.is_available(),
        "openblas_coretype": os.environ.get("OPENBLAS_CORETYPE"),
        "threads": torch.get_num_threads(),
        "cpu_amx_flags": amx_cpu,
        "torch_compile": hasattr(torch, "compile"),
    }


def onednn_isa_for_bf16():
    """Which oneDNN kernel PyTorch's bf16 GEMM uses (from ONEDNN_VERBOSE in a child process)."""
    code = ("import torch;torch.set_num_threads(%d);l=torch.nn.Linear(512,512);x=torch.randn(64,512)\n"
            "with torch.autocast('cpu',dtype=torch.bfloat16): l(x)" % torch.get_num_threads())
    env = dict(os.environ, DNNL_VERBOSE="1", ONEDNN_VERBOSE="1")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    isa = re.search(r"isa:([^\n]*)", p.stdout)
    impl = re.search(r"exec,cpu,(?:matmul|inner_product),([^,]+)", p.stdout)
    return (isa.group(1).strip() if isa else "?"), (impl.group(1) if impl else "no oneDNN exec line")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=2, help="full repetitions (alternating lpc / PyTorch)")
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--steps", type=int, default=10, help="timed steps per run")
    ap.add_argument("--models", default="mlp,gpt")
    ap.add_argument("--policies", default=",".join(POLICIES))
    ap.add_argument("--threads", type=int, default=os.cpu_count(), help="PyTorch intra-op threads")
    ap.add_argument("--workdir", default="/tmp/lpc-cpu-bench")
    ap.add_argument("--json", help="also write all raw step times here")
    ap.add_argument("--floor", action="store_true",
                    help="also print the gpt bf16 step against its floor (issue 16): GEMM FLOPs at "
                         "oneDNN's measured peak (lpc-gemm-bench) + the step's AdamW updates")
    ap.add_argument("--merge", nargs="+", metavar="JSON",
                    help="no measuring: pool the step times of earlier --json files and print the table")
    args = ap.parse_args()
    if args.merge:
        return merge(args.merge)

    torch.set_num_threads(args.threads)  # Debian's torch starts with 1 thread here
    facts = torch_facts()
    isa, impl = onednn_isa_for_bf16()
    facts["onednn_isa"], facts["bf16_gemm_kernel"] = isa, impl
    facts["amx_used"] = "amx" in impl
    print(f"PyTorch {facts['torch']} ({sys.executable}, {os.path.dirname(torch.__file__)})")
    print(f"  BLAS_INFO={facts['blas_info']}, loaded {', '.join(facts['blas_libs_loaded']) or '?'}, "
          f"OPENBLAS_CORETYPE={facts['openblas_coretype']} (PyTorch process only), threads={facts['threads']}")
    print(f"  {facts['onednn']}; oneDNN ISA: {isa}; bf16 GEMM kernel: {impl}; "
          f"AMX used: {'yes' if facts['amx_used'] else 'no'} (CPU amx flags: {facts['cpu_amx_flags'] or 'none'})")
    compile_ok = facts["torch_compile"]
    if not compile_ok:
        print("  torch.compile: not available in this torch version (added in 2.0): skipped")
    print("FLOPs/step = 6 * params_in_GEMM_weights * tokens + 2*2*3*B*H*S^2*Dh (attention; gpt only)")
    for m in args.models.split(","):
        fl, _ = gemm_flops(m)
        print(f"  {m}: {fl / 1e9:.3f} GFLOP per train step")
    print("gpt = 1 block + embeddings + final LN + tied LM head (vocab 256) + loss, batch 16 x seq 128")
    sys.stdout.flush()

    paths = gen_models(args.workdir)
    models = args.models.split(",")
    if "gpt2" in models:
        paths["gpt2"] = gen_gpt2(args.workdir)
    policies = args.policies.split(",")
    lpc_t = {(m, p): [] for m in models for p in policies}
    lpc_run_med = {(m, p): [] for m in models for p in policies}
    torch_t, torch_rep_med = {}, {}  # torch_rep_med[(m, v)][rep]: that repetition's median
    variants = sorted(set(TORCH_VARIANT[p] for p in policies), key=lambda v: v != "fp32")
    if compile_ok:
        variants += [v + "+compile" for v in list(variants)]
    for rep in range(args.reps):
        for m in models:
            # Alternate: one lpc policy, then one PyTorch variant, ... so both see the same noise.
            vq = list(variants)
            for p in policies:
                t, losses, cs = run_lpc(paths[m], p, args.warmup, args.steps)
                lpc_t[(m, p)] += t
                lpc_run_med[(m, p)].append(statistics.median(t))
                print(f"[rep {rep}] lpc {m} {p}: median {statistics.median(t) * 1e3:.1f} ms "
                      f"(compile {cs} s, loss {losses[0]:.3f} -> {losses[-1]:.3f})", flush=True)
                if vq:
                    v = vq.pop(0)
                    try:
                        tt, tl = run_torch(m, v.replace("+compile", ""), args.warmup, args.steps,
                                           compiled=v.endswith("+compile"))
                    except Exception as e:  # e.g. torch.compile without a C compiler
                        print(f"[rep {rep}] torch {m} {v}: failed ({type(e).__name__}: {e}); skipped")
                        continue
                    torch_t.setdefault((m, v), []).extend(tt)
                    torch_rep_med.setdefault((m, v), {})[rep] = statistics.median(tt)
                    print(f"[rep {rep}] torch {m} {v}: median {statistics.median(tt) * 1e3:.1f} ms "
                          f"(loss {tl[0]:.3f} -> {tl[-1]:.3f})", flush=True)

    print()
    print(f"{args.reps} run(s) x {args.steps} timed steps (after {args.warmup} warm-up); medians over all timed steps")
    hdr = ("| model | policy | lpc ms/step | samples/s | GFLOP/s | PyTorch variant | PyTorch ms/step "
           "| PyTorch GFLOP/s | ratio (PyTorch / lpc) |")
    print(hdr)
    print("|" + " --- |" * hdr.count(" | ") + " --- |")
    rows = []
    for m in models:
        fl, batch = gemm_flops(m)
        for p in policies:
            lt = statistics.median(lpc_t[(m, p)])
            v = TORCH_VARIANT[p]
            best = [vv for vv in (v, v + "+compile") if (m, vv) in torch_t]
            tt = min(statistics.median(torch_t[(m, vv)]) for vv in best) if best else float("nan")
            vname = min(best, key=lambda vv: statistics.median(torch_t[(m, vv)])) if best else v
            print(f"| {m} | {p} | {lt * 1e3:.1f} | {batch / lt:.0f} | {fl / lt / 1e9:.0f} | {vname} | "
                  f"{tt * 1e3:.1f} | {fl / tt / 1e9:.0f} | {tt / lt:.2f} |")
            rows.append(dict(model=m, policy=p, lpc_ms=lt * 1e3, torch_variant=vname, torch_ms=tt * 1e3))
    # The machine's noise moves both sides from one repetition to the next; the ratio of each
    # repetition's medians (the two ran back to back) shows how far the table's ratio can be
    # trusted.
    print("per-repetition ratios (PyTorch variant of the table / lpc, medians of the same repetition):")
    for row in rows:
        m, p, vname = row["model"], row["policy"], row["torch_variant"]
        reps = torch_rep_med.get((m, vname), {})
        ratios = [reps[r] / l for r, l in enumerate(lpc_run_med[(m, p)]) if r in reps]
        if ratios:
            print(f"  {m} {p} ({vname}): " + ", ".join(f"{r:.2f}" for r in ratios)
                  + f"  (min {min(ratios):.2f}, max {max(ratios):.2f})")
    print("per-run medians (ms):")
    for (m, p), r in lpc_run_med.items():
        print(f"  lpc {m} {p}: " + ", ".join(f"{x * 1e3:.1f}" for x in r))
    for (m, v), r in torch_rep_med.items():
        print(f"  torch {m} {v}: " + ", ".join(f"{x * 1e3:.1f}" for x in r.values()))
    floor = None
    if args.floor and ("gpt", "bf16") in lpc_t:
        peak, where = gemm_peak("bf16")
        fl, _ = gemm_flops("gpt")
        ops, kinds = step_profile(paths["gpt"], "bf16")
        opt = optimizer_ms(paths["gpt"], ops)
        shape_ms, shape_gflop, n_gemms = per_shape_gemm_ms(ops)
        gemm_ms = fl / peak / 1e6
        step = statistics.median(lpc_t[("gpt", "bf16")]) * 1e3
        floor = dict(peak_gflops=peak, peak_shape=where, gemm_ms=gemm_ms, optimizer_ms=opt,
                     floor_ms=gemm_ms + opt, step_ms=step, per_shape_gemm_ms=shape_ms,
                     per_shape_floor_ms=shape_ms + opt,
                     profiled_gemm_ms=next((v for k, v in kinds.items() if k.startswith("GEMM")), None))
        print(f"gpt bf16 floor: {fl / 1e9:.3f} GFLOP of GEMMs at {peak:.0f} GFLOP/s (oneDNN's best "
              f"bf16 rate here, {where}) = {gemm_ms:.1f} ms, + AdamW updates {opt:.1f} ms "
              f"(lpc-jit --profile) = {gemm_ms + opt:.1f} ms; lpc's step {step:.1f} ms = "
              f"{step / (gemm_ms + opt):.2f} x the floor (goal: at most 1.10)")
        # What the library gives this step shape by shape: the same GEMMs (the profile's
        # labels), each at oneDNN's best rate for its own shape, layout and entry point.
        print(f"gpt bf16 per-shape floor: the step's {n_gemms} GEMMs ({shape_gflop:.3f} GFLOP), each "
              f"at oneDNN's best rate for its own shape (lpc-gemm-bench --gemm) = {shape_ms:.1f} ms "
              f"({shape_gflop / shape_ms * 1e3:.0f} GFLOP/s on average), + AdamW {opt:.1f} ms = "
              f"{shape_ms + opt:.1f} ms = {(shape_ms + opt) / (gemm_ms + opt):.2f} x the floor; "
              f"lpc's step = {step / (shape_ms + opt):.2f} x this"
              + (f"; its GEMMs in the profiled step: {floor['profiled_gemm_ms']:.1f} ms"
                 if floor["profiled_gemm_ms"] is not None else ""))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(dict(facts=facts, rows=rows, floor=floor,
                           lpc={f"{m}/{p}": t for (m, p), t in lpc_t.items()},
                           torch={f"{m}/{v}": t for (m, v), t in torch_t.items()}), f, indent=1)


def merge(files):
    lpc, tor = {}, {}
    for fn in files:
        with open(fn) as f:
            d = json.load(f)
        for k, t in d["lpc"].items():
            lpc.setdefault(k, []).extend(t)
        for k, t in d["torch"].items():
            tor.setdefault(k, []).extend(t)
    print(f"pooled {len(files)} file(s); medians over all timed steps")
    print("| model | policy | lpc ms/step | samples/s | GFLOP/s | PyTorch variant | PyTorch ms/step "
          "| PyTorch GFLOP/s | ratio (PyTorch / lpc) |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for key, t in lpc.items():
        m, p = key.split("/")
        fl, batch = gemm_flops(m)
        lt = statistics.median(t)
        v = TORCH_VARIANT[p]
        tt = statistics.median(tor[f"{m}/{v}"]) if f"{m}/{v}" in tor else float("nan")
        print(f"| {m} | {p} | {lt * 1e3:.1f} | {batch / lt:.0f} | {fl / lt / 1e9:.0f} | {v} | "
              f"{tt * 1e3:.1f} | {fl / tt / 1e9:.0f} | {tt / lt:.2f} |")


if __name__ == "__main__":
    main()
