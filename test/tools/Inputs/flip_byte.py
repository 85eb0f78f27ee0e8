"""Flips one bit in the data of a named tensor of a safetensors file, in
place (a stand-in for a disk or copy error): flip_byte.py FILE TENSOR."""
import json
import struct
import sys

path, name = sys.argv[1], sys.argv[2]
with open(path, "r+b") as f:
    n = struct.unpack("<Q", f.read(8))[0]
    header = json.loads(f.read(n))
    begin, end = header[name]["data_offsets"]
    assert end > begin, f"tensor {name} is empty"
    at = 8 + n + (begin + end) // 2
    f.seek(at)
    b = f.read(1)[0]
    f.seek(at)
    f.write(bytes([b ^ 0x10]))
