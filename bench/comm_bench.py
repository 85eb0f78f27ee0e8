#!/usr/bin/env python3
"""Data-parallel communication: measured here, modelled at scale (issue 19).

  python3 bench/comm_bench.py [--steps=60] [--skip-measure] [--skip-model]
                              [--work=build/bench-comm]

1. Measured on this machine (Open MPI's mpirun, lpc-run on the CPU): the MLP
   and the GPT example on 1 process (the model built for the global batch)
   and on 2 ranks (the model's batch each) with fp32, bf16 and fp8 gradient
   communication, and on 2 ranks with ZeRO-1 (--zero=1, fp32): ms per step
   (lpc-run's own figure, the JIT step and its collectives), the bytes each
   rank's collectives sent per step (lpc-run counts them: 2(N-1)/N of each
   all-reduce's payload, (N-1)/N of a reduce-scatter's or all-gather's, a
   ring's traffic) and the optimizer state each rank holds.
2. Modelled (no GPU, no network here): the d_model-4096 GPT block of
   docs/cost-model.md, its artifacts compiled for sm_90 with the bf16 and the
   fp8 policy; per step and GPU, a ring all-reduce of its gradients takes
   2(N-1)/N x bytes / bandwidth (+ 2(N-1) hops of latency, shown apart), for
   N = 8 (one node: NVLink) and 64, 1024 (8 GPUs per node, one InfiniBand
   NDR port per GPU: the inter-node link bounds the ring), in each
   communication precision, next to the GEMM time and the whole step the
   cost model gives for the artifacts (lpc-cuda-check --estimate, mid).

Link figures are the vendors' specifications (peaks; NCCL reaches ~80% of
them in nccl-tests' bus bandwidth):
  NVLink 4 (H100/H200 SXM): 900 GB/s per GPU, both directions: 450 GB/s each
    way (NVIDIA H200 Tensor Core GPU datasheet).
  InfiniBand NDR (ConnectX-7): 400 Gb/s per port = 50 GB/s each way (NVIDIA
    ConnectX-7 datasheet; DGX H100/H200: one port per GPU).
  Latency per ring hop: 2 us (NVLink), 5 us (InfiniBand), typical figures,
    not specifications; NCCL's tree and NVLS algorithms cut that term from
    O(N) to O(log N) hops.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.join(ROOT, "build", "bin")
WIRES = ["fp32", "bf16", "fp8"]
WIDTH = {"fp32": 4, "bf16": 2, "fp8": 1}
LINKS = {  # bytes/s each way, seconds per hop
    "nvlink": (450e9, 2e-6),
    "ib-ndr": (50e9, 5e-6),
}


def opts():
    o = {"steps": "60", "work": os.path.join(ROOT, "build", "bench-comm")}
    for a in sys.argv[1:]:
        if a in ("-h", "--help"):
            print(__doc__)
            sys.exit(0)
        if not a.startswith("--"):
            sys.exit(f"comm_bench.py: unexpected argument '{a}' (see --help)")
        k, _, v = a[2:].partition("=")
        if k not in ("steps", "work", "skip-measure", "skip-model"):
            sys.exit(f"comm_bench.py: unknown option --{k} (see --help)")
        o[k] = v or "1"
    return o


def run(cmd, env=None, **kw):
    r = subprocess.run(cmd, env=env, capture_output=True, text=True, **kw)
    if r.returncode != 0:
        sys.exit(f"comm_bench.py: failed ({r.returncode}): {' '.join(cmd)}\n"
                 f"{r.stderr[-2000:]}")
    return r


def summary(log):
    for line in open(log):
        rec = json.loads(line)
        if rec.get("final"):
            return rec
    sys.exit(f"comm_bench.py: no summary in {log}")


def measure(o):
    mpirun = shutil.which("mpirun")
    if not mpirun:
        print("measured: skipped (no mpirun; scripts/lpc install installs Open MPI)")
        return
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1",
               OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_btl_vader_single_copy_mechanism="none")
    work = tempfile.mkdtemp(prefix="lpc-comm-bench-")
    readme = os.path.join(ROOT, "README.md")
    # (name, per-rank model, 1-process model at the global batch, data)
    header = open(os.path.join(ROOT, "examples", "gpt.mlir")).readline()
    gpt_cmd = re.search(r"lpc-model (gpt .*)$", header).group(1).split()
    models = [
        ("mlp", os.path.join(ROOT, "examples", "mlp.mlir"),
         ["mlp", "--batch=512"], ["--data=synthetic"]),
        ("gpt", os.path.join(ROOT, "examples", "gpt.mlir"),
         [a if not a.startswith("--batch=") else "--batch=32" for a in gpt_cmd],
         [f"--data=text:{readme}"]),
    ]
    common = [f"--steps={o['steps']}", "--print-every=1000", "--cpu-threads=1"]
    print(f"measured here: {o['steps']} steps, lpc-run's ms/step (2 ranks: "
          f"rank 0's; --cpu-threads=1, one core per rank)")
    print(f"  {'model':5} {'ranks':>5} {'wire':>10} {'ms/step':>8} "
          f"{'vs 1':>6} {'sent/step':>11} {'collectives':>11} {'opt. state':>11}")

    def state(s):  # the optimizer state one rank holds, MiB
        b = s.get("sharded_state_bytes")
        if b is None:  # not sharded: every state tensor but the parameters
            b = s["state_bytes"] - 4 * s["parameters"]
        return f"{b / 2**20:7.2f} MiB"

    for name, per_rank, one_cmd, data in models:
        one = os.path.join(work, f"{name}-one.mlir")
        if name == "mlp":
            run([os.path.join(BIN, "lpc-model"), "mlp", "--batch=512", "-o", one])
        else:
            run([os.path.join(BIN, "lpc-model")] + one_cmd + ["-o", one])
        log = os.path.join(work, f"{name}-1.jsonl")
        run([os.path.join(BIN, "lpc-run"), one] + data + common + [f"--log={log}"],
            env=env)
        s = summary(log)
        base = s["ms_per_step"]
        print(f"  {name:5} {1:>5} {'-':>10} {base:8.1f} {1.0:6.2f} {'-':>11} {'-':>11} "
              f"{state(s):>11}")
        for wire, extra in [(w, []) for w in WIRES] + [("fp32 ZeRO-1", ["--zero=1"])]:
            log = os.path.join(work, f"{name}-2-{wire.replace(' ', '-')}.jsonl")
            run([mpirun, "--oversubscribe", "-np", "2",
                 os.path.join(BIN, "lpc-run"), per_rank] + data + common +
                [f"--comm-precision={wire.split()[0]}", f"--log={log}"] + extra,
                env=env)
            s = summary(log)
            print(f"  {name:5} {2:>5} {wire:>10} {s['ms_per_step']:8.1f} "
                  f"{s['ms_per_step'] / base:6.2f} "
                  f"{s['comm_bytes_per_step'] / 2**20:8.2f} MiB "
                  f"{s['collectives_per_step']:11.0f} {state(s):>11}")
    shutil.rmtree(work)


def estimate(artifact):
    r = run([os.path.join(BIN, "lpc-cuda-check"), "--estimate", artifact,
             "--scenario=mid", "--format=json", "--top=1"])
    mid = json.loads(r.stdout)["estimate"]["scenarios"]["mid"]
    return mid["gemm_ms"], mid["step_ms"]


def model(o):
    work = o["work"]
    os.makedirs(work, exist_ok=True)
    mlir = os.path.join(work, "gpt-d4096.mlir")
    gen = ["gpt", "--layers=1", "--d-model=4096", "--heads=32", "--seq=2048",
           "--vocab=256", "--batch=4", "--attention=fused"]
    if not os.path.exists(mlir):
        run([os.path.join(BIN, "lpc-model")] + gen + ["-o", mlir])
    params = int(re.search(r"([0-9]+) parameters", open(mlir).read(4096)).group(1))
    figures = {}
    for policy in ("bf16", "fp8"):
        art = os.path.join(work, f"gpt-d4096-{policy}.json")
        if not os.path.exists(art):
            print(f"(compiling the {policy} artifact of the d_model-4096 block "
                  f"into {art}: a few minutes, once)", flush=True)
            run([os.path.join(BIN, "lpc-run"), mlir, "--device=cuda",
                 "--gpu-arch=sm_90", f"--mixed-precision={policy}",
                 f"--data=text:{os.path.join(ROOT, 'README.md')}", "--steps=30",
                 f"--emit-artifact={art}"])
        figures[policy] = estimate(art)
    print()
    print(f"modelled: GPT block d_model 4096 ({' '.join(gen)}), {params:,} "
          f"gradients per GPU per step, ring all-reduce per step (bandwidth "
          f"term; + latency)")
    for policy, (gemm, step) in figures.items():
        print(f"  {policy} policy on an H200 (cost model, mid): GEMMs "
              f"{gemm:.2f} ms, whole step {step:.2f} ms")
    print(f"  {'GPUs':>5} {'link':>7} " +
          " ".join(f"{w + ' ms':>16}" for w in WIRES) +
          f" {'fp8 / bf16 step':>16}")
    for n, link in ((8, "nvlink"), (64, "ib-ndr"), (1024, "ib-ndr")):
        bw, hop = LINKS[link]
        cells = []
        for wire in WIRES:
            # FP8: + one f32 amax per bucket; one 25 MiB bucket per 6.5 M
            # gradients (negligible either way).
            payload = params * WIDTH[wire]
            t = 2 * (n - 1) / n * payload / bw
            lat = 2 * (n - 1) * hop
            cells.append(f"{t * 1e3:7.2f} +{lat * 1e3:6.2f}")
        comm = {w: 2 * (n - 1) / n * params * WIDTH[w] / bw * 1e3 for w in WIRES}
        # Without overlap, step + all-reduce; fp8 policy with fp8 wire
        # against bf16 policy with bf16 wire.
        ratio = (figures["fp8"][1] + comm["fp8"]) / (figures["bf16"][1] + comm["bf16"])
        print(f"  {n:>5} {link:>7} " + " ".join(f"{c:>16}" for c in cells) +
              f" {ratio:16.2f}")
    print("  (fp8 / bf16 step: the fp8 policy with fp8 gradients against the "
          "bf16 policy with bf16 gradients, collectives not overlapped)")


def main():
    o = opts()
    for tool in ("lpc-run", "lpc-model", "lpc-cuda-check"):
        if not os.path.exists(os.path.join(BIN, tool)):
            sys.exit(f"comm_bench.py: {os.path.join(BIN, tool)} is missing: "
                     "build lpc first (scripts/lpc build)")
    if "skip-measure" not in o:
        measure(o)
    if "skip-model" not in o:
        model(o)


if __name__ == "__main__":
    main()
