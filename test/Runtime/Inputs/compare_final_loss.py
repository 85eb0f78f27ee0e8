"""Compares where two lpc-run runs ended: the mean of the per-step losses of
the last N steps of their --log files (the same batches in both runs, so a
mean over several steps says where training is, not which batch came last).

  compare_final_loss.py REFERENCE.jsonl RUN.jsonl [--last=10] [--tol=0.005]
                        [--steps=S]  (each log must hold exactly S steps)

Prints the two means and their relative difference; exits 1 when it
exceeds --tol (or a log is short, or a loss is not finite).
"""
import json
import math
import sys


def losses(path):
    out = []
    for line in open(path):
        rec = json.loads(line)
        if "step" in rec and "loss" in rec and not rec.get("final"):
            out.append(rec["loss"])
    return out


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    opts = dict(a[2:].split("=", 1) for a in sys.argv[1:] if a.startswith("--"))
    last = int(opts.get("last", 10))
    tol = float(opts.get("tol", 0.005))
    ref, run = losses(args[0]), losses(args[1])
    if "steps" in opts:
        for path, ls in ((args[0], ref), (args[1], run)):
            if len(ls) != int(opts["steps"]):
                print(f"{path}: {len(ls)} steps, expected {opts['steps']}")
                return 1
    if len(ref) < last or len(run) < last:
        print(f"fewer than {last} steps")
        return 1
    a = sum(ref[-last:]) / last
    b = sum(run[-last:]) / last
    if not (math.isfinite(a) and math.isfinite(b)):
        print(f"not finite: {a} {b}")
        return 1
    rel = abs(b - a) / abs(a)
    ok = rel <= tol
    print(f"last {last} of {len(run)} steps: mean loss {b:.6g} against "
          f"{a:.6g}: {rel:.2e} relative {'<=' if ok else '>'} {tol:g}: "
          f"{'ok' if ok else 'FAIL'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
