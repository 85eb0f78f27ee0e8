"""Writes a safetensors file from NAME=DTYPE:SHAPE[:FILL] arguments (numpy
only; FILL: 'arange' mod 7 by default, or a number). For lpc-run tests."""
import json
import struct
import sys

import numpy as np

out = sys.argv[1]
header, blobs, off = {}, [], 0
np_types = {"F32": "<f4", "I32": "<i4", "I64": "<i8", "F16": "<f2"}
for spec in sys.argv[2:]:
    name, rest = spec.split("=", 1)
    parts = rest.split(":")
    dt, shape = parts[0], [int(d) for d in parts[1].split("x") if d]
    n = int(np.prod(shape)) if shape else 1
    if len(parts) > 2:
        a = np.full(n, float(parts[2]))
    else:
        a = np.arange(n) % 7
    raw = a.astype(np_types[dt]).tobytes()
    header[name] = {"dtype": dt, "shape": shape, "data_offsets": [off, off + len(raw)]}
    blobs.append(raw)
    off += len(raw)
h = json.dumps(header).encode()
h += b" " * ((8 - len(h) % 8) % 8)
open(out, "wb").write(struct.pack("<Q", len(h)) + h + b"".join(blobs))
