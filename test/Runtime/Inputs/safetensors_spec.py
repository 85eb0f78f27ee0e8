"""safetensors files made and checked from the format's specification alone.

The `safetensors` package is not needed: the format is 8 bytes of
little-endian u64 N, N bytes of JSON header, then the tensor bytes.

  safetensors_spec.py write FILE     writes a file of every lpc dtype, laid out
                                     differently from lpc's writer (insertion
                                     order, spaced JSON, __metadata__ last), and
                                     prints what `lpc-runtime-tests
                                     --dump-safetensors` must print for it
  safetensors_spec.py check FILE     checks a file from `lpc-runtime-tests
                                     --write-sample-safetensors`: layout,
                                     header bytes as the reference
                                     implementation writes them, and values
  safetensors_spec.py corrupt KIND FILE   writes a broken file
"""
import json
import struct
import sys

import ml_dtypes
import numpy as np

DTYPES = {
    "F32": np.dtype("<f4"),
    "F16": np.dtype("<f2"),
    "BF16": np.dtype(ml_dtypes.bfloat16),
    "F8_E4M3": np.dtype(ml_dtypes.float8_e4m3fn),
    "F8_E5M2": np.dtype(ml_dtypes.float8_e5m2),
    "I32": np.dtype("<i4"),
    "I64": np.dtype("<i8"),
    "BOOL": np.dtype(np.bool_),
}
# The reference implementation's Dtype enum order ("increasing alignment");
# its writer lays tensors out by decreasing rank, then by name.
RANK = {"BOOL": 0, "F8_E5M2": 3, "F8_E4M3": 4, "F16": 7, "BF16": 8, "I32": 9,
        "F32": 11, "I64": 13}


def encode(tensors, metadata):
    """tensors: list of (name, dtype name, numpy array) in layout order."""
    header, buf = {}, b""
    for name, dt, arr in tensors:
        data = np.ascontiguousarray(arr.astype(DTYPES[dt])).tobytes()
        header[name] = {"dtype": dt, "shape": list(arr.shape),
                        "data_offsets": [len(buf), len(buf) + len(data)]}
        buf += data
    if metadata is not None:
        header["__metadata__"] = metadata
    text = json.dumps(header, ensure_ascii=False).encode("utf-8")  # spaced
    text += b" " * ((8 - len(text) % 8) % 8)
    return struct.pack("<Q", len(text)) + text + buf


def write(path):
    f32 = np.array([[0.5, -1.25, 3.0e38], [1.0e-40, -0.0, np.nan]], np.float32)
    tensors = [
        ("z.bool", "BOOL", np.array([True, False, True])),
        ("y.f8_e5m2", "F8_E5M2", np.array([1.0, -57344.0, np.inf, 0.0001], np.float32)),
        ("x.f8_e4m3", "F8_E4M3", np.array([[1.0, -448.0], [0.001953125, 3.5]], np.float32)),
        ("w.bf16", "BF16", np.array([1.0, -2.5, 3.0e38, np.inf], np.float32)),
        ("v.f16", "F16", np.array([65504.0, -0.0, 6.0e-8], np.float32)),
        ("u.i64", "I64", np.array([-(2**63), 2**63 - 1], np.int64)),
        ("t.i32", "I32", np.arange(-3, 3, dtype=np.int32).reshape(2, 3)),
        ("s.f32", "F32", f32),
        ("scalar", "F32", np.array(7.0, np.float32)),
        ("empty", "I32", np.zeros((0, 4), np.int32)),
    ]
    metadata = {"model": "mlp", "step": "12", "note": "a \"quoted\"\n\tline \u00e9\u20ac"}
    with open(path, "wb") as f:
        f.write(encode(tensors, metadata))
    out = []
    for k in sorted(metadata):
        out.append("metadata %s = %s" % (json.dumps(k, ensure_ascii=False),
                                         json.dumps(metadata[k], ensure_ascii=False)))
    for name, dt, arr in sorted(tensors):
        data = np.ascontiguousarray(arr.astype(DTYPES[dt])).tobytes()
        out.append("tensor %s %s [%s] %s" % (name, dt, ",".join(map(str, arr.shape)), data.hex()))
    sys.stdout.buffer.write(("\n".join(out) + "\n").encode("utf-8"))


EXPECTED = {
    "a.f32": ("F32", [2, 3], [0.0, 1.0, -2.5, 3.4028235e38, 1e-45, np.nan]),
    "b.f16": ("F16", [4], [1.0, 65504.0, -0.0, np.inf]),
    "c.bf16": ("BF16", [2, 2], [1.0, -2.5, np.inf, np.nan]),
    "d.f8e4m3": ("F8_E4M3", [5], [1.0, 448.0, -448.0, np.nan, 2.0**-9]),
    "e.f8e5m2": ("F8_E5M2", [5], [1.0, 57344.0, np.inf, -np.inf, np.nan]),
    "f.i32": ("I32", [3], [-1, 0, 2147483647]),
    "g.i64": ("I64", [2], [-(2**63), 1234567890123456789]),
    "h.bool": ("BOOL", [3], [True, False, True]),
    "scalar": ("F32", [], [42.0]),
    "empty": ("F32", [0, 3], []),
}
EXPECTED_METADATA = {
    "model": "mlp", "policy": "fp8", "step": "1234",
    "data.position": "batches-v1;examples=60000;batch=256;partial=pad;shuffle=1;seed=0;"
                     "epoch=0;index=3",
    "note": "quote \" backslash \\ newline \n tab \t unicode \u00e9\u20ac",
}


def check(path):
    blob = open(path, "rb").read()
    n = struct.unpack("<Q", blob[:8])[0]
    raw = blob[8:8 + n]
    assert n % 8 == 0, "header length %d is not a multiple of 8" % n
    text = raw.decode("utf-8")
    assert text.rstrip(" ") == text[:len(text.rstrip(" "))] and len(text) - len(text.rstrip(" ")) < 8
    header = json.loads(text)
    # Byte for byte what serde_json writes for this key order (compact).
    assert json.dumps(header, separators=(",", ":"), ensure_ascii=False) == text.rstrip(" "), text
    keys = list(header)
    assert keys[0] == "__metadata__", keys
    assert header.pop("__metadata__") == EXPECTED_METADATA
    # Layout: contiguous from 0, in the reference writer's order.
    names = list(header)
    assert names == sorted(names, key=lambda k: (-RANK[header[k]["dtype"]], k)), names
    buf = blob[8 + n:]
    pos = 0
    for name in names:
        info = header[name]
        begin, end = info["data_offsets"]
        assert begin == pos, (name, begin, pos)
        itemsize = DTYPES[info["dtype"]].itemsize
        assert (8 + n + begin) % itemsize == 0, "%s is not aligned" % name
        count = int(np.prod(info["shape"], dtype=np.int64))
        assert end - begin == count * itemsize
        pos = end
    assert pos == len(buf), "trailing bytes"
    assert set(names) == set(EXPECTED), names
    for name, (dt, shape, values) in EXPECTED.items():
        info = header[name]
        assert info["dtype"] == dt and info["shape"] == shape, (name, info)
        begin, end = info["data_offsets"]
        arr = np.frombuffer(buf[begin:end], DTYPES[dt]).reshape(shape)
        if dt in ("I32", "I64", "BOOL"):
            want = np.array(values, dtype=DTYPES[dt]).reshape(shape)
            assert (arr == want).all(), (name, arr, want)
        else:
            # The expected values rounded to the format (all exactly
            # representable except 1e-45, the smallest f32 subnormal).
            want = np.array(values, np.float64).astype(DTYPES[dt]).astype(np.float64)
            got = arr.astype(np.float64).reshape(-1)
            same = (got == want) | (np.isnan(got) & np.isnan(want))
            assert same.all(), (name, got, want)
            signs = np.signbit(got) == np.signbit(want)
            assert (signs | np.isnan(want)).all(), (name, got, want)
    print("ok: %d tensors, %d metadata entries, header %d bytes" %
          (len(names), len(EXPECTED_METADATA), n))


def corrupt(kind, path):
    good = {"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}}
    buf = b"\0" * 8
    if kind == "overlap":
        header = dict(good, b={"dtype": "F32", "shape": [1], "data_offsets": [4, 8]})
    elif kind == "dtype":
        header = {"a": {"dtype": "F64", "shape": [1], "data_offsets": [0, 8]}}
    elif kind == "truncated":
        header, buf = good, b"\0" * 5
    else:
        raise SystemExit("unknown kind " + kind)
    text = json.dumps(header).encode()
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + buf)


if __name__ == "__main__":
    if sys.argv[1] == "write":
        write(sys.argv[2])
    elif sys.argv[1] == "check":
        check(sys.argv[2])
    elif sys.argv[1] == "corrupt":
        corrupt(sys.argv[2], sys.argv[3])
    else:
        raise SystemExit(__doc__)
