#!/usr/bin/env python3
"""Randomized sweep of the CPU back end's op-by-op check (lpc-jit --op-check).

Draws small models from both builders (lpc-model mlp and gpt: odd widths,
every activation, layernorm and rmsnorm, tied and untied heads, fused and
unfused attention, dropout), an optimizer (AdamW, SGD with or without
momentum, gradient clipping) and a precision policy, and checks every op of
the compiled train step against the reference evaluator, two steps each.
Exit status 1 if any configuration fails.

--end-to-end also runs lpc-jit's end-to-end check (--check at its default
tolerances) on each configuration and counts the ones where it reports a
mismatch: what a rounding that flips with the summation order does there.

  op_check_sweep.py --tools DIR [--seed S] [--configs N] [--policies bf16,fp16]
"""

import argparse
import os
import random
import subprocess
import sys
import tempfile


def mlp_config(rng):
    hidden = ",".join(str(rng.randint(3, 70)) for _ in range(rng.randint(1, 2)))
    act = rng.choice(["gelu", "relu", "silu", "tanh"])
    args = ["mlp", f"--input={rng.randint(2, 40)}", f"--hidden={hidden}",
            f"--classes={rng.randint(2, 13)}", f"--batch={rng.randint(1, 9)}",
            f"--activation={act}"]
    if act == "gelu":
        args.append(f"--gelu={rng.choice(['erf', 'tanh'])}")
    return args


def gpt_config(rng):
    heads = rng.randint(1, 3)
    fused = rng.random() < 0.5
    # A fused lpc.attention has no dropout on the probabilities.
    dropout = "0" if fused else rng.choice(["0", "0", "0.1"])
    return ["gpt", f"--layers={rng.randint(1, 2)}", f"--heads={heads}",
            f"--d-model={heads * rng.randint(3, 11)}",
            f"--seq={rng.randint(2, 11)}", f"--vocab={rng.randint(5, 40)}",
            f"--batch={rng.randint(1, 3)}", f"--mlp-ratio={rng.randint(1, 4)}",
            rng.choice(["--tied", "--untied"]),
            f"--norm={rng.choice(['layernorm', 'rmsnorm'])}",
            f"--attention={'fused' if fused else 'unfused'}",
            f"--dropout={dropout}"]


def optimizer(rng):
    kind = rng.choice(["adamw", "sgd", "sgd-momentum"])
    opts = {"adamw": "optimizer=adamw lr=0.01",
            "sgd": "optimizer=sgd lr=0.1",
            "sgd-momentum": "optimizer=sgd lr=0.1 momentum=0.9"}[kind]
    if rng.random() < 0.3:
        opts += " clip-grad-norm=0.5"
    return opts


def pipeline(policy):
    if policy == "fp8":
        return "lpc-mixed-precision{policy=fp8 fp8-min-mnk=0 amax-history-len=4}"
    return "lpc-mixed-precision{policy=%s}" % policy


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tools", required=True, help="folder of lpc-model and lpc-jit")
    ap.add_argument("--seed", type=int, default=0, help="seed of the draw")
    ap.add_argument("--configs", type=int, default=8, help="configurations to draw")
    ap.add_argument("--policies", default="bf16,fp16",
                    help="comma-separated: no, bf16, fp16, fp8")
    ap.add_argument("--steps", type=int, default=2)
    ap.add_argument("--end-to-end", action="store_true",
                    help="also run the end-to-end check and count its mismatches")
    ap.add_argument("--jit-args", default="", help="more lpc-jit arguments")
    a = ap.parse_args()
    if a.configs < 1 or a.steps < 1:
        ap.error("--configs and --steps must be >= 1")
    policies = [p for p in a.policies.split(",") if p]
    for p in policies:
        if p not in ("no", "bf16", "fp16", "fp8"):
            ap.error(f"--policies: unknown policy '{p}' (no, bf16, fp16, fp8)")
    model_tool = os.path.join(a.tools, "lpc-model")
    jit_tool = os.path.join(a.tools, "lpc-jit")
    rng = random.Random(a.seed)
    passed = failed = e2e_mismatch = 0
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(a.configs):
            model = (mlp_config if rng.random() < 0.4 else gpt_config)(rng)
            opt = optimizer(rng)
            policy = rng.choice(policies)
            path = os.path.join(tmp, f"m{i}.mlir")
            subprocess.run([model_tool, *model, "-o", path], check=True)
            cmd = [jit_tool, path, f"--steps={a.steps}", f"--seed={i}",
                   f"--autodiff={opt}", "--op-check", *a.jit_args.split()]
            if policy != "no":
                cmd.append(f"--pipeline={pipeline(policy)}")
            what = f"config {i}: lpc-model {' '.join(model)} | {opt} | {policy}"
            r = subprocess.run(cmd, capture_output=True, text=True)
            summary = [l.strip() for l in r.stdout.splitlines() if "op check:" in l]
            if r.returncode == 0:
                passed += 1
                print(f"ok   {what}")
                for l in summary:
                    print(f"       {l}")
            else:
                failed += 1
                print(f"FAIL {what}\n  {' '.join(cmd)}")
                sys.stdout.write(r.stdout + r.stderr)
            if a.end_to_end:
                e2e = [c for c in cmd if c != "--op-check"]
                r = subprocess.run(e2e, capture_output=True, text=True)
                worst = [l.strip() for l in r.stdout.splitlines() if "MISMATCH" in l]
                if r.returncode != 0:
                    e2e_mismatch += 1
                    print(f"       end-to-end check: {len(worst)} mismatches, e.g. "
                          f"{worst[0] if worst else r.stderr.strip()[:200]}")
    if a.end_to_end:
        print(f"end-to-end check at its default tolerances: {e2e_mismatch} of "
              f"{a.configs} configurations report mismatches")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
