"""Writes a safetensors data file for an MLP of 16 features and 4 classes
(inputs "image" F32 [ROWS, 16], "label" I32 [ROWS]): standard normal
features, except one large value in row ROW (default 27: global batch 2 of
16 rows, the second half, which rank 1 of two takes with 8 rows each).
That value stays finite in an fp16 forward, but its weight gradient times
the initial loss scale (65536) overflows fp16: the step's gradients are
non-finite on that rank alone.

  make_inf_batch.py OUT.safetensors [--rows=96] [--row=27] [--value=3000]
"""
import json
import random
import struct
import sys


def main():
    out = sys.argv[1]
    opts = dict(a[2:].split("=", 1) for a in sys.argv[2:])
    rows, row = int(opts.get("rows", 96)), int(opts.get("row", 27))
    value, cols = float(opts.get("value", 3000)), 16
    rng = random.Random(1)
    feat = [rng.gauss(0, 1) for _ in range(rows * cols)]
    feat[row * cols + 5] = value
    lab = [rng.randrange(4) for _ in range(rows)]
    fb = struct.pack("<%df" % len(feat), *feat)
    lb = struct.pack("<%di" % len(lab), *lab)
    header = {
        "image": {"dtype": "F32", "shape": [rows, cols],
                  "data_offsets": [0, len(fb)]},
        "label": {"dtype": "I32", "shape": [rows],
                  "data_offsets": [len(fb), len(fb) + len(lb)]},
    }
    h = json.dumps(header).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    with open(out, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + fb + lb)


if __name__ == "__main__":
    main()
