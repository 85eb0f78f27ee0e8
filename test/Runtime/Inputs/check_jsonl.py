"""Checks lpc-runtime-tests --write-sample-jsonl output with Python's json:
every line parses strictly (no NaN/Infinity literals), floats round-trip to
their exact f32 / f64 bits, non-finite values are null + "nonfinite", strings
and 64-bit integers come back exactly."""
import json
import struct
import sys


def strict(text):
    def bad(name):
        raise ValueError("non-JSON constant " + name)
    return json.loads(text, parse_constant=bad)


lines = open(sys.argv[1], "rb").read().decode("utf-8").split("\n")
assert lines[-1] == "", "file must end with a newline"
objs = [strict(line) for line in lines[:-1]]
n32 = n64 = 0
for o in objs:
    if o["kind"] == "f32":
        bits = struct.unpack("<I", struct.pack("<f", o["value"]))[0]
        assert "%08x" % bits == o["bits"], o
        n32 += 1
    elif o["kind"] == "f64":
        bits = struct.unpack("<Q", struct.pack("<d", o["value"]))[0]
        assert "%016x" % bits == o["bits"], o
        n64 += 1
    elif o["kind"] == "nonfinite":
        assert o["loss"] is None and o["grad_norm"] is None and o["amax"] is None, o
        assert o["nonfinite"] == {"loss": "nan", "grad_norm": "inf", "amax": "-inf"}, o
        assert o["step"] == 7
    elif o["kind"] == "strings":
        want = ("quote \" backslash \\ newline \n tab \t bell \x07 "
                "unicode \u00e9\u20ac\U0001F600 bad \ufffd end")
        assert o["text"] == want, repr(o["text"])
        assert o["big"] == 2**64 - 1 and o["neg"] == -(2**63) and o["flag"] is False, o
print("ok: %d lines, %d f32, %d f64" % (len(objs), n32, n64))
