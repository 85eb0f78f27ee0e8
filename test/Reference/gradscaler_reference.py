#!/usr/bin/env python3
"""lpc.loss_scale_update, run by the reference evaluator (lpc-eval), against
PyTorch GradScaler's update rule re-implemented here.

For each scenario (initial scale and growth tracker, factors, interval, and a
scripted pattern of steps with and without inf/NaN gradients) this writes
one function that chains one lpc.loss_scale_update per step, with the
found-inf flags as lpc.constant i1 values, and returns every intermediate
scale and tracker; lpc-eval evaluates it and the trajectory must match the
Python one exactly (f32 bits, tracker values).

The rule is torch._amp_update_scale_ (aten/src/ATen/native/cuda/
AmpKernels.cu, amp_update_scale_cuda_kernel; the CPU kernel is the same):
the scale is an f32, the factors are doubles, products are computed in
double and rounded to f32 when stored:

    if found_inf:  scale = float(scale * backoff_factor); tracker = 0
    else:
        successful = tracker + 1
        if successful == growth_interval:
            new_scale = float(scale * growth_factor)
            if isfinite(new_scale): scale = new_scale   # never grow to inf
            tracker = 0
        else:
            tracker = successful

With --gradcheck, also runs a real train step (lpc-autodiff, fp16 policy,
lpc-loss-scaling) for several steps in the reference evaluator
(lpc-gradcheck --trajectory) from a scale so large that the fp16 gradients
overflow: the loss-scale state and metrics must follow the same rule, with
found_inf = the step's `skipped` metric; a skipped step must leave every
other piece of state (parameters, AdamW moments, step counter) unchanged;
and the applied steps must be bit-identical, one for one, to a run with a
static power-of-two scale (scaling by a power of two is exact while nothing
overflows or underflows, so the scale must not change the update).

Pure Python (struct does the f32 rounding): no numpy or torch needed.
"""

import argparse
import json
import math
import os
import struct
import subprocess
import sys

FLT_MAX = struct.unpack("<f", bytes.fromhex("ffff7f7f"))[0]


def f32(x):
    """Rounds a double to the nearest f32 (ties to even), as a C cast."""
    try:
        return struct.unpack("<f", struct.pack("<f", x))[0]
    except OverflowError:  # rounds past FLT_MAX
        return math.copysign(math.inf, x)


def f32_bits(x):
    return struct.unpack("<I", struct.pack("<f", x))[0]


def gradscaler_update(scale, tracker, found_inf, growth_factor,
                      backoff_factor, growth_interval):
    """One torch._amp_update_scale_: returns (scale, growth_tracker)."""
    if found_inf:
        return f32(scale * backoff_factor), 0
    successful = tracker + 1
    if successful == growth_interval:
        new_scale = f32(scale * growth_factor)
        if math.isfinite(new_scale):
            scale = new_scale
        return scale, 0
    return scale, successful


# name, init scale, init tracker, tracker type, growth, backoff, interval,
# pattern ('.' = finite gradients, 'x' = inf/NaN found), and whether to
# print the trajectory (FileCheck looks at some steps).
SCENARIOS = [
    # GradScaler's defaults but growth_interval 3: growth after 3 clean
    # steps, an inf in the middle of a run resets the count, runs of infs.
    dict(name="interval3", scale=65536.0, tracker=0, itype="i64",
         growth=2.0, backoff=0.5, interval=3,
         pattern="...x..x.....xxx.......x.x.x........", show=True),
    # Growth beyond the f32 range is refused (the tracker still resets).
    dict(name="near_f32_max", scale=2.0**126, tracker=0, itype="i64",
         growth=2.0, backoff=0.5, interval=3,
         pattern="......x.........", show=True),
    # A product just above FLT_MAX that rounds to FLT_MAX is finite: taken;
    # the next growth overflows: refused.
    dict(name="round_to_flt_max", scale=f32(FLT_MAX / 2), tracker=0,
         itype="i64", growth=2.0000000001, backoff=0.5, interval=2,
         pattern="......", show=True),
    # Factors that are not powers of two: every product rounds to f32; the
    # tracker is i32 (as torch's growth_tracker).
    dict(name="inexact_factors", scale=1000.0, tracker=0, itype="i32",
         growth=1.1, backoff=0.3, interval=2,
         pattern="..x...x.......xx..x.......x..x.x.........", show=False),
    # Back-off through the subnormals to zero (2^-150 ties to even: 0);
    # zero grows to zero.
    dict(name="subnormal", scale=2.0**-146, tracker=0, itype="i64",
         growth=2.0, backoff=0.5, interval=2,
         pattern="xxxxx....", show=True),
    dict(name="subnormal_inexact", scale=3 * 2.0**-149, tracker=0,
         itype="i64", growth=3.0, backoff=0.3, interval=2,
         pattern="x..x..xx..", show=False),
    # Resuming from a checkpoint with a tracker one short of the interval:
    # the first clean step grows.
    dict(name="resume", scale=512.0, tracker=2, itype="i32",
         growth=2.0, backoff=0.5, interval=3, pattern="...x", show=True),
    # growth_interval 1: every clean step grows.
    dict(name="interval1", scale=1.0, tracker=0, itype="i64",
         growth=2.0, backoff=0.5, interval=1, pattern="." * 20 + "x" + "...",
         show=False),
    # PyTorch's defaults exactly (init 65536, x2 after 2000 clean steps,
    # x0.5 on inf): an inf first, growth at the 2000th clean step after it.
    dict(name="defaults", scale=65536.0, tracker=0, itype="i64",
         growth=2.0, backoff=0.5, interval=2000,
         pattern="x" + "." * 2001 + "x", show=False),
]


def mlir_float(x):
    # repr() round-trips the double; MLIR parses it back to the same value.
    r = repr(float(x))
    return r if ("e" in r or "." in r) else r + ".0"


def build_module(scenarios):
    lines = []
    for sc in scenarios:
        k = len(sc["pattern"])
        it = "tensor<%s>" % sc["itype"]
        results = ", ".join(["tensor<f32>, " + it] * k)
        lines.append("func.func @%s() -> (%s) {" % (sc["name"], results))
        lines.append("  %%s0 = lpc.constant dense<%s> : tensor<f32>"
                     % mlir_float(sc["scale"]))
        lines.append("  %%t0 = lpc.constant dense<%d> : %s"
                     % (sc["tracker"], it))
        lines.append("  %finite = lpc.constant dense<true> : tensor<i1>")
        lines.append("  %inf = lpc.constant dense<false> : tensor<i1>")
        attrs = ("{growth_factor = %s : f64, backoff_factor = %s : f64, "
                 "growth_interval = %d : i64}"
                 % (mlir_float(sc["growth"]), mlir_float(sc["backoff"]),
                    sc["interval"]))
        rets = []
        for i, c in enumerate(sc["pattern"]):
            flag = "%inf" if c == "x" else "%finite"
            lines.append("  %%s%d, %%t%d = lpc.loss_scale_update %%s%d, %%t%d, "
                         "%s %s : %s" % (i + 1, i + 1, i, i, flag, attrs, it))
            rets += ["%%s%d" % (i + 1), "%%t%d" % (i + 1)]
        lines.append("  return %s : %s" % (", ".join(rets), results))
        lines.append("}")
    return "\n".join(lines) + "\n"


def reference(sc):
    scale, tracker = f32(sc["scale"]), sc["tracker"]
    out = []
    for c in sc["pattern"]:
        scale, tracker = gradscaler_update(scale, tracker, c == "x",
                                           sc["growth"], sc["backoff"],
                                           sc["interval"])
        out.append((scale, tracker))
    return out


def evaluate(lpc_eval, path, name):
    proc = subprocess.run([lpc_eval, path, "--function=" + name,
                           "--print=json"], capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit("lpc-eval failed on @%s:\n%s" % (name, proc.stderr))
    values = [r["data"][0] for r in json.loads(proc.stdout)["results"]]
    return [(f32(float(values[2 * i])), int(values[2 * i + 1]))
            for i in range(len(values) // 2)]


MODEL = """\
func.func @lin() -> tensor<f32> {
  %x = lpc.input "x" features : tensor<8x16xf32>
  %y = lpc.input "y" labels : tensor<8xi32>
  %w = lpc.param "w" xavier_uniform : tensor<16x4xf32>
  %b = lpc.param "b" zeros : tensor<4xf32>
  %h = lpc.matmul %x, %w : tensor<8x16xf32>, tensor<16x4xf32> -> tensor<8x4xf32>
  %z = lpc.bias_add %h, %b : tensor<8x4xf32>, tensor<4xf32>
  %l = lpc.softmax_cross_entropy %z, %y : tensor<8x4xf32>, tensor<8xi32>
  return %l : tensor<f32>
}
"""
FP16 = "lpc-assign-precision{policy=fp16},lpc-insert-casts,canonicalize"
STEPS = 14
INIT, BACKOFF, INTERVAL, STATIC = 2.0**40, 0.0625, 3, 2.0**12
SCALER_STATE = ("loss_scale:", "loss_scale_growth_tracker:")
SCALER_METRICS = ("loss_scale", "skipped")


def trajectory(gradcheck, model, loss_scaling):
    proc = subprocess.run(
        [gradcheck, model, "--trajectory=%d" % STEPS,
         "--autodiff=optimizer=adamw lr=0.01",
         "--pipeline=%s,lpc-loss-scaling{%s},canonicalize"
         % (FP16, loss_scaling)], capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit("lpc-gradcheck failed:\n%s" % proc.stderr)
    return json.loads(proc.stdout)


def check_train_step(gradcheck, work_dir):
    model = os.path.join(work_dir, "lin.mlir")
    with open(model, "w") as f:
        f.write(MODEL)
    dyn = trajectory(gradcheck, model,
                     "init-scale=%r backoff-factor=%r growth-interval=%d"
                     % (INIT, BACKOFF, INTERVAL))
    static = trajectory(gradcheck, model, "mode=static static-scale=%r"
                        % STATIC)
    errors = []
    prev = dyn["initial"]
    scale, tracker = f32(INIT), 0
    applied = 0
    pattern = ""
    for k, st in enumerate(dyn["steps"]):
        skipped = bool(st["skipped"])
        pattern += "x" if skipped else "."
        if st["loss_scale"] != scale:
            errors.append("step %d: loss_scale metric %r, expected %r"
                          % (k, st["loss_scale"], scale))
        scale, tracker = gradscaler_update(scale, tracker, skipped,
                                           2.0, BACKOFF, INTERVAL)
        if (st["loss_scale:"]["data"][0] != scale
                or st["loss_scale_growth_tracker:"]["data"][0] != tracker):
            errors.append("step %d: scale state %r / tracker %r, expected "
                          "%r / %r" % (k, st["loss_scale:"]["data"][0],
                                       st["loss_scale_growth_tracker:"]
                                       ["data"][0], scale, tracker))
        # State keys are "state:name"; metrics have no colon.
        state = [key for key in prev
                 if ":" in key and key not in SCALER_STATE]
        if skipped:
            for key in state:
                if st[key] != prev[key]:
                    errors.append("step %d (skipped): %s changed" % (k, key))
        else:
            ref = static["steps"][applied]
            for key in ref:
                if key not in SCALER_METRICS and st[key] != ref[key]:
                    errors.append("step %d (applied #%d): %s differs from the "
                                  "static-scale run" % (k, applied, key))
            applied += 1
        prev = st
    # The run must exercise the skip, the back-off to a working scale, and
    # an overflow again after growth (random data and a new evaluator could
    # change the pattern, not these).
    if not (pattern.startswith("x") and "." in pattern
            and "x" in pattern[pattern.index("."):]):
        errors.append("pattern %s does not skip, apply, then skip again"
                      % pattern)
    print("train step (fp16, adamw), %d steps: skipped pattern %s"
          % (STEPS, pattern))
    print("  loss scale per step: %s"
          % " ".join("2^%d" % math.log2(st["loss_scale"])
                     for st in dyn["steps"]))
    for e in errors:
        print("  MISMATCH: " + e)
    print("train step: %d skipped steps leave the state unchanged, %d applied "
          "steps match the static-scale run, %d mismatches"
          % (pattern.count("x"), applied, len(errors)))
    return 1 if errors else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lpc-eval", default="lpc-eval")
    ap.add_argument("--gradcheck", default="",
                    help="lpc-gradcheck: also check a real train step")
    ap.add_argument("--work-dir", required=True,
                    help="where to write the generated module")
    args = ap.parse_args()

    os.makedirs(args.work_dir, exist_ok=True)
    path = os.path.join(args.work_dir, "loss-scale-updates.mlir")
    with open(path, "w") as f:
        f.write(build_module(SCENARIOS))

    failed = 0
    for sc in SCENARIOS:
        want = reference(sc)
        got = evaluate(args.lpc_eval, path, sc["name"])
        print("scenario %s: init scale %r, tracker %d (%s), growth %r, "
              "backoff %r, interval %d" % (sc["name"], sc["scale"],
                                           sc["tracker"], sc["itype"],
                                           sc["growth"], sc["backoff"],
                                           sc["interval"]))
        mismatches = 0
        if len(got) != len(want):
            print("  %d results from lpc-eval, expected %d"
                  % (len(got), len(want)))
            mismatches += 1
        for i, (c, w, g) in enumerate(zip(sc["pattern"], want, got)):
            ok = f32_bits(w[0]) == f32_bits(g[0]) and w[1] == g[1]
            if sc["show"] or not ok:
                print("  step %d %s: scale %.9g (%s) tracker %d%s"
                      % (i, "inf " if c == "x" else "ok  ", w[0],
                         w[0].hex(), w[1],
                         "" if ok else "  MISMATCH: lpc-eval %.9g (%s) "
                         "tracker %d" % (g[0], g[0].hex(), g[1])))
            mismatches += not ok
        print("%s: %d steps, %d mismatches" % (sc["name"], len(want),
                                               mismatches))
        failed += mismatches != 0
    print("all scenarios match" if failed == 0
          else "%d scenarios differ" % failed)
    if args.gradcheck:
        failed += check_train_step(args.gradcheck, args.work_dir)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
