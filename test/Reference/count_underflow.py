"""Counts gradients flushed to zero, from `lpc-eval --print=json` outputs.

usage: count_underflow.py FP32.json FP16.json FP16_SCALED.json
Each file holds the results of the same @<model>_grad function (loss first,
then one gradient per parameter) under policy no, fp16 without loss
scaling, and fp16 with loss scaling. Prints, per run, how many gradient
elements are exactly zero (none are in fp32) and the relative error
||g - g_fp32|| / ||g_fp32||, then a verdict line.
"""
import json
import sys

import numpy as np


def grads(path):
    with open(path) as f:
        results = json.load(f)
    if isinstance(results, dict):
        results = results.get("results", results)
    return np.concatenate([np.asarray(r["data"], dtype=np.float64).ravel()
                           for r in results[1:]])


def main():
    ref, plain, scaled = (grads(p) for p in sys.argv[1:4])
    n = ref.size
    rows = [("fp32", ref), ("fp16 without loss scaling", plain),
            ("fp16 with loss scaling", scaled)]
    for name, g in rows:
        zeros = int(np.count_nonzero(g == 0))
        err = np.linalg.norm(g - ref) / np.linalg.norm(ref)
        print(f"{name}: {zeros} of {n} gradient elements are zero "
              f"({100.0 * zeros / n:.1f}%), relative error {err:.2e}")
    ok = (np.count_nonzero(ref == 0) == 0
          and np.count_nonzero(plain == 0) > n // 2
          and np.count_nonzero(scaled == 0) < n // 100
          and np.linalg.norm(scaled - ref) / np.linalg.norm(ref) < 1e-2)
    print("underflow shown and fixed by loss scaling" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
