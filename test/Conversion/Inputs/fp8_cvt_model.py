#!/usr/bin/env python3
"""Checks the reasoning of lpc-fp8-to-nvvm (lib/Conversion/FP8ToNVVM.cpp)
without a GPU: a model of the PTX conversion instructions, plus the pass's
fix-ups with the constants it emits, must give ml_dtypes' results bit for
bit. ml_dtypes is what lpc's reference evaluator and CPU integer code match
(test/Reference/check_formats.py, test/Conversion/cpu-conversions.mlir),
NaN signs and codes included.

The model, from the PTX ISA's description of cvt (written here from the
format's bit fields, independent of ml_dtypes):
  * cvt.rn.satfinite.{e4m3x2,e5m2x2}.f32: round to nearest, ties to even, at
    the format's precision (below the smallest normal, in steps of the
    smallest subnormal); a magnitude above the largest finite value, and
    +-inf, become +-max (.satfinite), the sign kept (zeros too). f32
    subnormal inputs give +-0 whether or not the hardware flushes them
    (both are tried). For NaN the manual says only "NaN": every byte is
    tried, so nothing depends on which.
  * cvt.rn.f16x2.{e4m3x2,e5m2x2}: exact (asserted: every value is an f16);
    NaN gives some f16 NaN, every one of which is tried; cvt.f32.f16 exact.
The pass's fix-ups, modelled as emitted (the constants are the ones
test/Conversion/lpc-fp8-to-nvvm.mlir checks in its output):
  * non-saturating encode: |bits(x)| >= overflow_bits -> sign | overflow_code;
  * NaN in (|bits| >= 0x7F800001) -> sign | nan_code (E4M3FN non-saturating:
    already covered by the overflow fix, same code);
  * decode: NaN -> 0x7FC00000 | sign << 24.

Inputs: every f32 high half (low half 0, 0x0001, 0x8000 and 0xFFFF), random
bit patterns over the whole range, and the edge classes: every fp8 value,
the ties between neighbours and the f32s next to them, the overflow
thresholds, subnormal ties, +-0, +-inf, NaNs of several payloads. It checks
the fix-up logic against the model, not the hardware.

Prints one line per check; exits 1 on any mismatch.
"""

import argparse
import sys

import ml_dtypes
import numpy as np


class Format:
    def __init__(self, name, dtype, mant, bias, has_inf, nan_code,
                 overflow_code, overflow_bits):
        self.name, self.dtype = name, dtype
        self.mant, self.bias, self.has_inf = mant, bias, has_inf
        self.nan_code = nan_code            # lpc's NaN, ORed with the sign
        self.overflow_code = overflow_code  # non-saturating overflow
        self.overflow_bits = overflow_bits  # smallest |bits(x)| that overflows
        # Every code's value from its bit fields (NaN for NaN codes).
        self.values = np.array([self.decode_fields(c) for c in range(256)])
        finite = self.values[:128][np.isfinite(self.values[:128])]
        self.max = finite.max()
        self.max_code = int(np.flatnonzero(self.values[:128] == self.max)[0])

    def decode_fields(self, code):
        sign = -1.0 if code & 0x80 else 1.0
        exp, frac = (code & 0x7F) >> self.mant, code & ((1 << self.mant) - 1)
        top = (1 << (7 - self.mant)) - 1
        if self.has_inf and exp == top:
            return sign * np.inf if frac == 0 else np.nan
        if not self.has_inf and code & 0x7F == 0x7F:
            return np.nan
        if exp == 0:
            return sign * frac * 2.0 ** (1 - self.bias - self.mant)
        return sign * (1 + frac / 2 ** self.mant) * 2.0 ** (exp - self.bias)


F32_BITS = lambda v: int(np.float32(v).view(np.uint32))
FORMATS = [
    # 464 (between 448 and the next step 480) rounds to the even 448: only
    # what lies above it overflows.
    Format("f8E4M3FN", ml_dtypes.float8_e4m3fn, 3, 7, False, 0x7F, 0x7F,
           F32_BITS(464.0) + 1),
    # 61440 (between 57344 and 65536) rounds up: 57344's mantissa is odd.
    Format("f8E5M2", ml_dtypes.float8_e5m2, 2, 15, True, 0x7E, 0x7C,
           F32_BITS(61440.0)),
]
NAN_BITS = 0x7F800001  # the smallest |bits| of a NaN


def cvt_satfinite(bits, fmt, hw_nan, ftz):
    """cvt.rn.satfinite.<fmt>x2.f32 on one lane: f32 bits -> code."""
    with np.errstate(invalid="ignore"):  # NaN inputs
        x = bits.view(np.float32).astype(np.float64)
    if ftz:
        x = np.where(np.abs(x) < 2.0 ** -126, 0.0, x)
    a = np.abs(x)
    finite = np.isfinite(a)
    af = np.where(finite, a, 0.0)
    _, e2 = np.frexp(af)                     # af = m * 2^e2, m in [0.5, 1)
    e = np.maximum(e2 - 1, 1 - fmt.bias)     # exponent of the leading bit
    quantum = np.ldexp(1.0, e - fmt.mant)
    rounded = np.rint(af / quantum) * quantum  # exact; rint: ties to even
    rounded = np.minimum(rounded, fmt.max)     # satfinite
    table = fmt.values[:128]
    order = np.argsort(np.where(np.isnan(table), np.inf, table))
    idx = np.searchsorted(table[order], rounded)
    mag = order[np.minimum(idx, len(order) - 1)].astype(np.uint8)
    assert np.all(table[mag] == rounded), "model: rounded off the grid"
    mag = np.where(np.isinf(a), fmt.max_code, mag).astype(np.uint8)
    sign = ((bits >> 24) & 0x80).astype(np.uint8)
    return np.where(np.isnan(a), np.uint8(hw_nan), sign | mag).astype(np.uint8)


def fix_encode(bits, code, fmt, saturate):
    """The selects lpc-fp8-to-nvvm emits after the instruction."""
    a = bits & 0x7FFFFFFF
    sign = ((bits >> 24) & 0x80).astype(np.uint8)
    if not saturate:
        code = np.where(a >= fmt.overflow_bits, sign | fmt.overflow_code, code)
    if saturate or fmt.overflow_code != fmt.nan_code:
        code = np.where(a >= NAN_BITS, sign | fmt.nan_code, code)
    return code.astype(np.uint8)


def expected_encode(bits, fmt, saturate):
    """ml_dtypes (= the reference evaluator and the CPU code)."""
    x = bits.view(np.float32)
    if saturate:  # lpc's saturation: clamp, +-inf included; NaN stays
        x = np.where(np.isnan(x), x, np.clip(x, -fmt.max, fmt.max))
        x = x.astype(np.float32)
    with np.errstate(invalid="ignore", over="ignore"):
        return x.astype(fmt.dtype).view(np.uint8)


def cvt_f16x2(codes, fmt, hw_nan16):
    """cvt.rn.f16x2.<fmt>x2 on one lane, then cvt.f32.f16: code -> f32 bits."""
    v = fmt.values[codes]
    nan = np.isnan(v)
    with np.errstate(invalid="ignore"):
        h = v.astype(np.float16)
    assert np.all((h.astype(np.float64) == v) | nan), "fp8 value not an f16"
    hbits = np.where(nan, np.uint16(hw_nan16), h.view(np.uint16))
    return hbits.astype(np.uint16).view(np.float16).astype(np.float32).view(np.uint32)


def fix_decode(codes, f32bits):
    nan = np.isnan(f32bits.view(np.float32))
    sign = (codes.astype(np.uint32) & 0x80) << 24
    return np.where(nan, np.uint32(0x7FC00000) | sign, f32bits).astype(np.uint32)


def f32(values):
    return np.asarray(values, dtype=np.float32).view(np.uint32)


def inputs(rng, count):
    hi = np.arange(1 << 16, dtype=np.uint32) << 16
    out = [hi | low for low in (0, 0x0001, 0x8000, 0xFFFF)]
    out.append(rng.integers(0, 1 << 32, count, dtype=np.uint64).astype(np.uint32))
    for fmt in FORMATS:
        vals = np.unique(fmt.values[np.isfinite(fmt.values)])
        pos = vals[vals >= 0]
        step = pos[-1] - pos[-2]
        ties = (pos[:-1] + pos[1:]) / 2
        over = np.array([fmt.max + step / 2, fmt.max + step, 2 * fmt.max])
        base = f32(np.concatenate([pos, ties, over]))
        for d in range(-3, 4):  # and the f32s next to them
            out += [base + np.uint32(d) if d >= 0 else base - np.uint32(-d)]
    base = np.concatenate(out)
    specials = np.array([0, 0x80000000, 0x7F800000, 0xFF800000, 0x7FC00000,
                         0xFFC00000, 0x7F800001, 0xFF800001, 0x7FBFFFFF,
                         0x7FFFFFFF, 0xFFFFFFFF, 0x00000001, 0x80000001,
                         0x007FFFFF, 0x00800000, 0x7F7FFFFF, 0xFF7FFFFF],
                        dtype=np.uint32)
    bits = np.concatenate([base, base | np.uint32(0x80000000), specials])
    return np.unique(bits)


failures = 0


def report(name, total, bad, show):
    global failures
    print(f"{name}: {total} inputs, {len(bad)} mismatches")
    for line in bad[:10]:
        print("  MISMATCH " + show(line))
    failures += bool(bad)


def check_encode(bits, fmt, saturate):
    want = expected_encode(bits, fmt, saturate)
    nan = np.isnan(bits.view(np.float32))
    bad = []
    for ftz in (False, True):
        got = fix_encode(bits, cvt_satfinite(bits, fmt, 0x00, ftz), fmt, saturate)
        bad += [(b, w, g) for b, w, g in
                zip(bits[got != want], want[got != want], got[got != want])]
    # Whatever NaN the instruction returns, the fix-up replaces it.
    nbits = bits[nan]
    for hw_nan in range(256):
        got = fix_encode(nbits, cvt_satfinite(nbits, fmt, hw_nan, False), fmt,
                         saturate)
        bad += [(b, w, g) for b, w, g in
                zip(nbits[got != want[nan]], want[nan][got != want[nan]],
                    got[got != want[nan]])]
    mode = "saturating" if saturate else "non-saturating"
    report(f"{fmt.name} encode {mode}", len(bits), bad,
           lambda t: f"f32 {t[0]:#010x}: ml_dtypes {t[1]:#04x}, model {t[2]:#04x}")


def check_decode(fmt):
    codes = np.arange(256, dtype=np.uint8)
    with np.errstate(invalid="ignore"):
        want = codes.view(fmt.dtype).astype(np.float32).view(np.uint32)
    f16_nans = [b for b in range(1 << 16) if (b & 0x7C00) == 0x7C00 and b & 0x3FF]
    bad = []
    for hw_nan16 in f16_nans:
        got = fix_decode(codes, cvt_f16x2(codes, fmt, hw_nan16))
        bad += [(c, w, g) for c, w, g in
                zip(codes[got != want], want[got != want], got[got != want])]
    report(f"{fmt.name} decode (every code, every f16 NaN from the instruction)",
           256, bad,
           lambda t: f"code {t[0]:#04x}: ml_dtypes {t[1]:#010x}, model {t[2]:#010x}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--random", type=int, default=1_000_000)
    args = parser.parse_args()
    bits = inputs(np.random.default_rng(args.seed), args.random)
    for fmt in FORMATS:
        # The constants lpc-fp8-to-nvvm emits (lpc-fp8-to-nvvm.mlir).
        print(f"{fmt.name}: overflow from |bits| >= {fmt.overflow_bits} to "
              f"{fmt.overflow_code:#04x}, NaN from {NAN_BITS} to "
              f"{fmt.nan_code:#04x} (| sign)")
        for saturate in (False, True):
            check_encode(bits, fmt, saturate)
        check_decode(fmt)
    print("FAILED" if failures else "all conversions match ml_dtypes")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
