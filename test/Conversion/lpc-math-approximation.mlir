// lpc-math-approximation replaces f32 exp/log/tanh/erf with MLIR's
// polynomials (vectorizable on the CPU); `keep` leaves the ops it names.
// lpc-gpu-codegen keeps math.exp: libdevice's __nv_expf, a range reduction
// around the hardware's ex2.approx, is a handful of instructions where the
// polynomial takes about twenty (CUDA documents expf within 2 ulp).
// RUN: lpc-opt %s --lpc-math-approximation | FileCheck %s --check-prefix=ALL
// RUN: lpc-opt %s --lpc-math-approximation="keep=math.exp" | FileCheck %s --check-prefix=KEEP
// RUN: not lpc-opt %s --lpc-math-approximation="keep=math.sqrt" 2>&1 | FileCheck %s --check-prefix=BAD

// ALL-LABEL: func.func @f(
// ALL-NOT: math.exp
// ALL-NOT: math.log
// ALL: return

// KEEP-LABEL: func.func @f(
// KEEP: math.exp %
// KEEP-NOT: math.log
// KEEP: return

// BAD: error: lpc-math-approximation: keep=math.sqrt is not an op it approximates

func.func @f(%x: f32) -> (f32, f32) {
  %e = math.exp %x : f32
  %l = math.log %x : f32
  return %e, %l : f32, f32
}
