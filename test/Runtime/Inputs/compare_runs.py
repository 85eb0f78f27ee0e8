"""Compares two lpc-run runs: the per-step losses of their --log files and
the tensors of their --save-weights files (safetensors, read without numpy).

  compare_runs.py A.jsonl B.jsonl A.safetensors B.safetensors [--tol=1e-6]
                  [--loss-tol=T]  (the losses' own tolerance; default --tol)
                  [--resumed]     (B resumed A's run from a checkpoint: only
                                   the steps B logged are compared)

Differences are relative: |a - b| / max(|a|, tiny) for each loss, and
max |a - b| / max |a| over the elements of each tensor. Prints one line per
kind with the largest difference and whether everything is bit-identical;
exits 1 when a difference exceeds --tol.
"""
import json
import struct
import sys


def losses(path, metric="loss"):
    """(step, value) of a per-step metric, in the order logged."""
    out = []
    for line in open(path):
        rec = json.loads(line)
        if "step" in rec and metric in rec:
            out.append((rec["step"], rec[metric]))
    return out


def tensors(path):
    data = open(path, "rb").read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    base = 8 + n
    out = {}
    for name, t in header.items():
        if name == "__metadata__":
            continue
        assert t["dtype"] == "F32", (name, t["dtype"])
        lo, hi = t["data_offsets"]
        raw = data[base + lo:base + hi]
        out[name] = (raw, struct.unpack("<%df" % (len(raw) // 4), raw))
    return out


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    tol = 1e-6
    loss_tol = None
    resumed = "--resumed" in sys.argv[1:]
    for a in sys.argv[1:]:
        if a.startswith("--tol="):
            tol = float(a[6:])
        elif a.startswith("--loss-tol="):
            loss_tol = float(a[11:])
    if loss_tol is None:
        loss_tol = tol
    la, lb, wa, wb = args
    ok = True
    a, b = losses(la), losses(lb)
    if resumed:
        logged = {s for s, _ in b}
        a = [(s, x) for s, x in a if s in logged]
    if [s for s, _ in a] != [s for s, _ in b] or not a:
        print("steps differ: %d and %d logged" % (len(a), len(b)))
        return 1
    worst = max(abs(x - y) / max(abs(x), 1e-30) for (_, x), (_, y) in zip(a, b))
    same = all(x == y for (_, x), (_, y) in zip(a, b))
    print("losses: %d steps, max relative difference %.3g%s" %
          (len(a), worst, ", bit-identical" if same else ""))
    if worst > loss_tol:
        print("losses above their tolerance %g" % loss_tol)
    ok = ok and worst <= loss_tol
    ta, tb = tensors(wa), tensors(wb)
    if sorted(ta) != sorted(tb):
        print("parameter names differ: %s and %s" % (sorted(ta), sorted(tb)))
        return 1
    worst, same = 0.0, True
    for name in sorted(ta):
        ra, xa = ta[name]
        rb, xb = tb[name]
        if len(xa) != len(xb):
            print("%s: %d and %d elements" % (name, len(xa), len(xb)))
            return 1
        scale = max(max(abs(v) for v in xa), 1e-30)
        d = max(abs(x - y) for x, y in zip(xa, xb)) / scale
        worst = max(worst, d)
        same = same and ra == rb
    print("parameters: %d tensors, max relative difference %.3g%s" %
          (len(ta), worst, ", bit-identical" if same else ""))
    ok = ok and worst <= tol
    print("ok" if ok else "FAILED: above the tolerance %g" % tol)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
