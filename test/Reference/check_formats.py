#!/usr/bin/env python3
"""Cross-checks lpc's reference rounding against ml_dtypes, bit for bit.

Drives `lpc-eval --convert=FMT [--saturate] [--bits-table]` (the reference
evaluator's roundToFormat / toBits / fromBits) and compares with

  * decoding: every bit pattern of f8E4M3FN, f8E5M2, f16 and bf16 against
    ml_dtypes / numpy (NaN == NaN);
  * rounding of f32 inputs: np.float32(x).astype(fmt) (round to nearest even,
    non-saturating); saturating mode against astype after clipping finite
    values to +-max (lpc's saturation maps +-inf to +-max as well, as PTX's
    cvt.rn.satfinite does);
  * rounding of double inputs (which lpc rounds once, directly): an exact
    rational implementation of round-to-nearest-even written here, since
    ml_dtypes converts float64 through float32 (double rounding).

Prints one line of counts per check; exits 1 on any mismatch, after printing
the first mismatches.
"""

import argparse
import math
import subprocess
import sys
from fractions import Fraction

import ml_dtypes
import numpy as np

FORMATS = {
    "f8E4M3FN": ml_dtypes.float8_e4m3fn,
    "f8E5M2": ml_dtypes.float8_e5m2,
    "f16": np.float16,
    "bf16": ml_dtypes.bfloat16,
}
UINT = {1: np.uint8, 2: np.uint16}
SHOW = 10  # mismatches printed per check

failures = 0


def report(name, total, bad, describe):
    """Prints the check's counts and its first mismatches."""
    global failures
    print(f"{name}: {total} values, {len(bad)} mismatches")
    for item in bad[:SHOW]:
        print("  MISMATCH " + describe(item))
    if bad:
        failures += 1


def f32_text(x):
    """Exact text of a float32 (or double) for lpc-eval: hex float or inf/nan."""
    x = float(x)
    if math.isnan(x):
        return "-nan" if math.copysign(1.0, x) < 0 else "nan"
    if math.isinf(x):
        return "-inf" if x < 0 else "inf"
    return x.hex()


def lpc_convert(lpc_eval, fmt, values, saturate=False):
    """Bits of lpc's conversion of each value (floats) to fmt."""
    cmd = [lpc_eval, f"--convert={fmt}"] + (["--saturate"] if saturate else [])
    text = "\n".join(f32_text(v) for v in values) + "\n"
    out = subprocess.run(cmd, input=text, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({out.returncode}):\n{out.stderr}")
    bits = [int(line, 16) for line in out.stdout.split()]
    if len(bits) != len(values):
        sys.exit(f"{' '.join(cmd)}: {len(bits)} results for {len(values)} inputs")
    return np.array(bits, dtype=np.uint64)


def lpc_bits_table(lpc_eval, fmt):
    cmd = [lpc_eval, f"--convert={fmt}", "--bits-table"]
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed ({out.returncode}):\n{out.stderr}")
    table = {}
    for line in out.stdout.splitlines():
        bits, value = line.split()
        table[int(bits, 16)] = float(value)
    return table


def info(fmt):
    dtype = FORMATS[fmt]
    width = np.dtype(dtype).itemsize
    return dtype, width, UINT[width], float(ml_dtypes.finfo(dtype).max)


# ---------------------------------------------------------------------------
# Inputs
# ---------------------------------------------------------------------------

def all_values(fmt):
    """Every non-NaN value of fmt as float32 (exact)."""
    dtype, width, uint, _ = info(fmt)
    patterns = np.arange(2 ** (8 * width), dtype=np.uint64).astype(uint)
    values = patterns.view(dtype).astype(np.float32)
    return values[~np.isnan(values)]


def neighbours(values, ulps=3):
    """values and the float32s up to `ulps` steps on either side of each."""
    out = [values]
    up = down = values
    for _ in range(ulps):
        up = np.nextafter(up, np.float32(np.inf))
        down = np.nextafter(down, np.float32(-np.inf))
        out += [up, down]
    return np.concatenate(out)


def edge_inputs(fmt):
    """Values of fmt, the ties between neighbours (and next to them), the
    overflow threshold, subnormal ties, signed zeros and specials."""
    _, _, _, fmax = info(fmt)
    values = np.unique(all_values(fmt).astype(np.float64))
    finite = values[np.isfinite(values)]
    pos = finite[finite >= 0]
    # Ties between consecutive values are exact in float32 (fp8/16 have at
    # most 11 significant bits, a tie needs one more).
    ties = (pos[:-1] + pos[1:]) / 2
    # The tie above the largest finite value (as if the exponent went on).
    step = pos[-1] - pos[-2]
    over = np.array([fmax + step / 2, fmax + step, 2 * fmax, 4 * fmax])
    with np.errstate(over="ignore"):  # bf16's 2 * max is inf in float32
        base = np.concatenate([pos, ties, over]).astype(np.float32)
    base = np.concatenate([base, -base])
    specials = np.array(
        [0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan,
         np.finfo(np.float32).max, -np.finfo(np.float32).max,
         np.finfo(np.float32).tiny, np.finfo(np.float32).smallest_subnormal,
         -np.finfo(np.float32).smallest_subnormal, 1e-30, -1e-30, 1e30, -1e30],
        dtype=np.float32)
    return np.concatenate([neighbours(base), specials])


def random_f32(rng, count, min_exp, max_exp, full_range_fraction=0.2):
    """Random float32s: uniform random mantissa and sign, exponent uniform in
    [min_exp, max_exp] (unbiased; subnormal/zero exponents where asked), plus
    a fraction of uniformly random bit patterns over the whole float32 range.
    NaN patterns become the canonical quiet NaN of their sign (lpc-eval reads
    numbers as text, which carries no NaN payload)."""
    n_focus = count - int(count * full_range_fraction)
    sign = rng.integers(0, 2, n_focus, dtype=np.uint32) << 31
    biased = np.clip(rng.integers(min_exp, max_exp + 1, n_focus) + 127, 0, 254)
    mant = rng.integers(0, 1 << 23, n_focus, dtype=np.uint32)
    focus = (sign | (biased.astype(np.uint32) << 23) | mant).view(np.float32)
    anywhere = rng.integers(0, 1 << 32, count - n_focus,
                            dtype=np.uint64).astype(np.uint32).view(np.float32)
    values = np.concatenate([focus, anywhere])
    nan = np.isnan(values)
    values[nan] = np.copysign(np.float32(np.nan), values[nan])
    return values


# ---------------------------------------------------------------------------
# References
# ---------------------------------------------------------------------------

def expected_bits(fmt, values, saturate):
    """ml_dtypes' conversion of float32 values (with lpc's saturation)."""
    dtype, _, uint, fmax = info(fmt)
    x = values.astype(np.float32)
    if saturate:
        finite = np.isfinite(x)
        x = np.where(finite, np.clip(x, -fmax, fmax), x).astype(np.float32)
        # saturation maps +-inf to +-max too (PTX cvt.rn.satfinite)
        x = np.where(np.isinf(x), np.copysign(np.float32(fmax), x), x)
    with np.errstate(invalid="ignore", over="ignore"):
        return x.astype(dtype).view(uint).astype(np.uint64)


# Parameters of the formats for the exact rational reference:
# (precision incl. the implicit bit, min normal exponent, has inf).
EXACT = {"f8E4M3FN": (4, -6, False), "f8E5M2": (3, -14, True),
         "f16": (11, -14, True), "bf16": (8, -126, True)}


def exact_round(x, fmt):
    """Round-to-nearest-even of the double x to fmt, as a double (inf or NaN
    on overflow), by rational arithmetic."""
    p, emin, has_inf = EXACT[fmt]
    fmax = info(fmt)[3]
    if math.isnan(x) or math.isinf(x):
        return x if (has_inf or math.isnan(x)) else math.nan
    if x == 0:
        return x
    a = Fraction(abs(x))
    e = max(math.frexp(abs(x))[1] - 1, emin)  # exponent of the leading bit
    quantum = Fraction(2) ** (e - (p - 1))
    n, rem = divmod(a, quantum)
    if rem > quantum / 2 or (rem == quantum / 2 and n % 2 == 1):
        n += 1
    r = n * quantum
    if r > fmax:
        return math.copysign(math.inf if has_inf else math.nan, x)
    return math.copysign(float(r), x)


def random_doubles_near_ties(rng, fmt, count):
    """Doubles within a few float32 ulps of ties of fmt (where rounding via
    float32 first would round twice), and random doubles of all magnitudes."""
    values = np.unique(all_values(fmt).astype(np.float64))
    pos = values[np.isfinite(values) & (values >= 0)]
    ties = (pos[:-1] + pos[1:]) / 2
    picks = rng.choice(ties, count // 2)
    # Offsets far below a float32 ulp of the tie: float32 would erase them.
    offsets = picks * rng.uniform(-2.0 ** -30, 2.0 ** -30, count // 2)
    near = picks + offsets
    wide = rng.standard_normal(count - count // 2) * 2.0 ** rng.integers(
        -30, 20, count - count // 2)
    signs = rng.choice([-1.0, 1.0], count)
    return np.concatenate([near, wide]) * signs


# ---------------------------------------------------------------------------
# Checks
# ---------------------------------------------------------------------------

def check_decode(lpc_eval, fmt):
    dtype, width, uint, _ = info(fmt)
    table = lpc_bits_table(lpc_eval, fmt)
    n = 2 ** (8 * width)
    with np.errstate(invalid="ignore"):  # NaN patterns
        ref = np.arange(n, dtype=np.uint64).astype(uint).view(dtype).astype(
            np.float64)
    bad = []
    for bits in range(n):
        got, want = table.get(bits), float(ref[bits])
        same = got is not None and (
            (math.isnan(got) and math.isnan(want)) or
            (got == want and math.copysign(1, got) == math.copysign(1, want)))
        if not same:
            bad.append((bits, want, got))
    if len(table) != n:
        bad.append(("count", n, len(table)))
    w = 2 * width
    report(f"{fmt} decode (all bit patterns)", n, bad,
           lambda b: f"bits {b[0]:#0{w + 2}x}: ml_dtypes {b[1]!r}, lpc {b[2]!r}"
           if b[0] != "count" else f"lpc printed {b[2]} patterns, want {b[1]}")


def check_round(lpc_eval, fmt, name, values, saturate):
    _, width, _, _ = info(fmt)
    got = lpc_convert(lpc_eval, fmt, values, saturate)
    want = expected_bits(fmt, values, saturate)
    idx = np.nonzero(got != want)[0]
    w = 2 * width
    bad = [(values[i], want[i], got[i]) for i in idx]
    report(f"{fmt} round {name}{' saturate' if saturate else ''}", len(values),
           bad, lambda b: f"f32 {f32_text(b[0])} ({float(b[0])!r}): ml_dtypes "
           f"{int(b[1]):#0{w + 2}x}, lpc {int(b[2]):#0{w + 2}x}")


def check_doubles(lpc_eval, fmt, values):
    dtype, width, uint, _ = info(fmt)
    got_bits = lpc_convert(lpc_eval, fmt, values)
    got = got_bits.astype(uint).view(dtype).astype(np.float64)
    bad = []
    for x, g in zip(values, got):
        x, g = float(x), float(g)
        want = exact_round(x, fmt)
        same = (math.isnan(g) and math.isnan(want)) or (
            g == want and math.copysign(1, g) == math.copysign(1, want))
        if not same:
            bad.append((x, want, g))
    report(f"{fmt} round doubles (exact rational reference)", len(values), bad,
           lambda b: f"f64 {b[0].hex()}: exact {b[1]!r}, lpc {b[2]!r}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lpc-eval", default="lpc-eval",
                        help="the lpc-eval binary (default: from PATH)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--fp8-random", type=int, default=100_000)
    parser.add_argument("--wide-random", type=int, default=200_000)
    parser.add_argument("--double-random", type=int, default=20_000)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)

    for fmt in ["f8E4M3FN", "f8E5M2"]:
        check_decode(args.lpc_eval, fmt)
        edges = edge_inputs(fmt)
        randoms = random_f32(rng, args.fp8_random, -30, 20)
        for saturate in [False, True]:
            check_round(args.lpc_eval, fmt, "edge cases", edges, saturate)
            check_round(args.lpc_eval, fmt, "random f32", randoms, saturate)
        check_doubles(args.lpc_eval, fmt,
                      random_doubles_near_ties(rng, fmt, args.double_random))

    for fmt, (lo, hi) in [("f16", (-30, 17)), ("bf16", (-140, 127))]:
        check_decode(args.lpc_eval, fmt)
        check_round(args.lpc_eval, fmt, "edge cases", edge_inputs(fmt), False)
        check_round(args.lpc_eval, fmt, "random f32",
                    random_f32(rng, args.wide_random, lo, hi, 0.5), False)
        check_doubles(args.lpc_eval, fmt,
                      random_doubles_near_ties(rng, fmt, args.double_random))

    print("FAILED" if failures else "all formats match")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
