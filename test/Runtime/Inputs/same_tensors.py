"""Whether two safetensors files hold the same tensors: names, dtypes,
shapes and bytes (the metadata may differ). Prints one line; exits 1 on a
difference, naming the first tensor that differs.

  same_tensors.py A.safetensors B.safetensors
"""
import json
import struct
import sys


def tensors(path):
    data = open(path, "rb").read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    header.pop("__metadata__", None)
    base = 8 + n
    return {k: (t["dtype"], t["shape"], data[base + t["data_offsets"][0]:base + t["data_offsets"][1]])
            for k, t in header.items()}


def main():
    a, b = tensors(sys.argv[1]), tensors(sys.argv[2])
    if sorted(a) != sorted(b):
        print("tensor names differ: only in the first: %s; only in the second: %s"
              % (sorted(set(a) - set(b)), sorted(set(b) - set(a))))
        return 1
    for k in sorted(a):
        if a[k][:2] != b[k][:2]:
            print("%s: %s %s and %s %s" % (k, a[k][0], a[k][1], b[k][0], b[k][1]))
            return 1
        if a[k][2] != b[k][2]:
            print("%s: the values differ" % k)
            return 1
    print("%d tensors, the same" % len(a))
    return 0


if __name__ == "__main__":
    sys.exit(main())
