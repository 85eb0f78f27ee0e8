"""Transformer Engine's delayed scaling, step by step, against lpc.

Reads the JSON of `lpc-gradcheck --trajectory` for Inputs/fp8-linear.mlir
under the fp8 policy and replays Transformer Engine's recipe for two FP8
tensors whose amax is known exactly from the trajectory: the weight `w`
(amax of the parameter before each step) and its input `w.input` (amax of the
data). The replay uses TE's own formulation: an amax history ring of length L
in which the current amax is written at index 0, the scaling amax is the max
of the ring (or index 0 for most_recent), then the ring is rolled by -1 and
index 0 zeroed; every `interval` steps scale = (fp8_max / amax) / 2^margin
in float32, keeping the old scale for a zero or non-finite amax and clamping
an infinite one to FLT_MAX. lpc keeps the window newest-first instead; the
scales must match exactly and the histories as multisets.

usage: fp8_delayed_scaling.py HISTORY_LEN MARGIN INTERVAL ALGO < trajectory.json
"""
import json
import sys

import numpy as np

FP8_MAX = {"w": 448.0, "w.input": 448.0}  # both E4M3 (forward tensors)


def te_scale(amax, scale, margin):
    amax, scale = np.float32(amax), np.float32(scale)
    with np.errstate(divide="ignore", over="ignore"):
        sf = (np.float32(448.0) / amax) / np.float32(2.0 ** margin)
    if not (amax > 0) or not np.isfinite(amax):
        sf = scale
    if np.isinf(sf):
        sf = np.finfo(np.float32).max
    return np.float32(sf)


def main():
    length, margin, interval, algo = (int(sys.argv[1]), int(sys.argv[2]),
                                      int(sys.argv[3]), sys.argv[4])
    d = json.load(sys.stdin)
    arr = lambda t: np.array(t["data"], dtype=np.float64)
    amaxes = {"w.input": [], "w": []}
    params = [arr(d["initial"]["param:w"])] + [arr(s["param:w"]) for s in d["steps"][:-1]]
    for p in params:
        amaxes["w"].append(np.float32(np.max(np.abs(p))))
        amaxes["w.input"].append(np.float32(np.max(np.abs(arr(d["inputs"]["x"])))))
    checked = 0
    for name, seq in amaxes.items():
        ring = np.zeros(length, dtype=np.float32)
        scale = np.float32(1.0)
        for t, (amax, rec) in enumerate(zip(seq, d["steps"])):
            ring[0] = amax
            if (t + 1) % interval == 0:
                scaling_amax = ring.max() if algo == "max" else ring[0]
                scale = te_scale(scaling_amax, scale, margin)
            window = sorted(ring.tolist())
            ring = np.roll(ring, -1)
            ring[0] = 0.0
            got_scale = np.float32(rec[f"fp8_scale:{name}"]["data"][0])
            got_hist = sorted(np.float32(rec[f"fp8_amax_history:{name}"]["data"]).tolist())
            if got_scale != scale or got_hist != window:
                print(f"FAIL {name} step {t}: lpc scale {got_scale!r} history "
                      f"{got_hist}\n  TE  scale {scale!r} history {window}")
                return 1
            checked += 1
    print(f"{checked} steps x tensors match Transformer Engine's delayed scaling")
    return 0


if __name__ == "__main__":
    sys.exit(main())
