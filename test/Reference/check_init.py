#!/usr/bin/env python3
"""Checks parameter initializers printed by `lpc-eval --print=json` against
the PyTorch formulas: bounds of the uniform forms, mean and standard deviation
of every form within 5 standard errors. Reads the JSON on stdin; the expected
distribution of each result comes as an argument KIND:A:B in result order:
  uniform:LOW:HIGH   normal:MEAN:STD   constant:VALUE:_
Plain Python (no numpy), so it runs under any interpreter."""

import json
import math
import sys


def main():
    results = json.load(sys.stdin)["results"]
    specs = sys.argv[1:]
    if len(specs) != len(results):
        sys.exit(f"{len(specs)} specs for {len(results)} results")
    failed = False
    for i, (spec, result) in enumerate(zip(specs, results)):
        kind, a, b = spec.split(":")
        data = result["data"]
        n = len(data)
        mean = sum(data) / n
        std = math.sqrt(sum((x - mean) ** 2 for x in data) / n)
        ok = True
        if kind == "uniform":
            low, high = float(a), float(b)
            want_mean, want_std = (low + high) / 2, (high - low) / math.sqrt(12)
            kurtosis = 1.8
            ok = min(data) >= low and max(data) <= high
        elif kind == "normal":
            want_mean, want_std, kurtosis = float(a), float(b), 3.0
        else:
            want_mean, want_std, kurtosis = float(a), 0.0, 1.0
            ok = all(x == data[0] for x in data)
        # Standard errors of the sample mean and of the sample deviation.
        se_mean = want_std / math.sqrt(n)
        se_std = want_std * math.sqrt((kurtosis - 1) / (4 * n))
        tol = 1e-6 * abs(want_mean)  # f32 rounding of constants
        ok = ok and abs(mean - want_mean) <= 5 * se_mean + tol
        ok = ok and abs(std - want_std) <= 5 * se_std + tol
        print(f"result #{i} {spec}: n={n} mean={mean:.6g} (want {want_mean:.6g}) "
              f"std={std:.6g} (want {want_std:.6g}) {'ok' if ok else 'FAIL'}")
        failed = failed or not ok
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
