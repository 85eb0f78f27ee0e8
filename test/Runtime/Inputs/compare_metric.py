"""Compares one per-step metric of two lpc-run logs (JSONL).

  compare_metric.py A.jsonl B.jsonl METRIC [--tol=1e-6]

Relative difference |a - b| / max(|a|, tiny) at every step both logged.
Prints one line; exits 1 when the metric is missing, the steps differ or a
difference exceeds --tol.
"""
import sys

from compare_runs import losses


def values(path, metric):
    return dict(losses(path, metric))


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    tol = 1e-6
    for a in sys.argv[1:]:
        if a.startswith("--tol="):
            tol = float(a[6:])
    a, b, metric = args
    va, vb = values(a, metric), values(b, metric)
    if not va or sorted(va) != sorted(vb):
        print(f"{metric}: logged at {len(va)} and {len(vb)} steps")
        return 1
    worst = max(abs(va[s] - vb[s]) / max(abs(va[s]), 1e-30) for s in va)
    if worst > tol:
        print(f"{metric}: {len(va)} steps, max relative difference {worst:.3g} above {tol:g}")
        return 1
    print(f"{metric}: {len(va)} steps, within {tol:g} (max relative difference {worst:.3g})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
