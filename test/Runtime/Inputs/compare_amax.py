"""Compares the FP8 amax of the forward tensors (activations and weights,
not output gradients) that two lpc-run --log files record at a step.

  compare_amax.py A.jsonl B.jsonl [--step=1]

With FP8 amax reduction, every rank of a data-parallel run holds the amax of
the whole global batch: the same as one process training on that batch.
(Output gradients differ: each rank's loss averages its own rows.) Prints the
tensors compared and exits 1 when one differs.
"""
import json
import sys


def record(path, step):
    for line in open(path):
        rec = json.loads(line)
        if rec.get("step") == step and "loss" in rec:
            return rec
    raise SystemExit("%s: no record of step %d" % (path, step))


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    step = 1
    for a in sys.argv[1:]:
        if a.startswith("--step="):
            step = int(a[7:])
    a, b = record(args[0], step), record(args[1], step)
    names = sorted(k for k in a if k.startswith("fp8_amax/") and
                   not k.endswith(".grad_output") and k in b)
    if not names:
        print("no forward FP8 tensors in both logs")
        return 1
    bad = [k for k in names if a[k] != b[k]]
    for k in bad:
        print("%s: %r and %r" % (k, a[k], b[k]))
    print("fp8 amax: %d forward tensors, %s" %
          (len(names), "equal" if not bad else "%d differ" % len(bad)))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
