"""Writes a safetensors file of random features 'x' and targets 't' for the
grouped_*.mlir models: python grouped_data.py OUT ROWS COLS (two batches)."""
import json
import struct
import sys

import numpy as np

out, rows, cols = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rng = np.random.default_rng(0)
tensors = {name: rng.standard_normal((2 * rows, cols)).astype("<f4") for name in ("x", "t")}
header, blobs, offset = {}, [], 0
for name, a in tensors.items():
    header[name] = {"dtype": "F32", "shape": list(a.shape), "data_offsets": [offset, offset + a.nbytes]}
    blobs.append(a.tobytes())
    offset += a.nbytes
text = json.dumps(header).encode()
with open(out, "wb") as f:
    f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))
