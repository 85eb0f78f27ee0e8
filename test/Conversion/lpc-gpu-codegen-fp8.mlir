// FP8 conversions in the GPU kernels: from sm_89 on the hardware's cvt
// instructions (lpc-to-linalg{fp8-hardware-cvt}, then lpc-fp8-to-nvvm),
// with selects where lpc's casts differ from them; sm_80 keeps the CPU's
// integer code. Every kernel assembles with ptxas and calls nothing
// external. Inputs/fp8_cvt_model.py (lpc-fp8-to-nvvm-model.test) checks
// the selects' logic against ml_dtypes. The tensors have an odd size so
// that lpc-widen-parallel-loops leaves one element per thread and the
// sequences below stay in order (widened, LLVM interleaves the copies).
// RUN: lpc-opt %s --lpc-gpu-codegen -o %t.sm90.mlir
// RUN: %python %S/Inputs/check_ptx.py %t.sm90.mlir %ptxas sm_90 --print-ptx | FileCheck %s --check-prefix=PTX90
// RUN: lpc-opt %s --lpc-gpu-codegen="chip=sm_89" -o %t.sm89.mlir
// RUN: %python %S/Inputs/check_ptx.py %t.sm89.mlir %ptxas sm_89 --print-ptx | FileCheck %s --check-prefix=PTX89
// RUN: lpc-opt %s --lpc-gpu-codegen="chip=sm_80" -o %t.sm80.mlir
// RUN: %python %S/Inputs/check_ptx.py %t.sm80.mlir %ptxas sm_80 --print-ptx | FileCheck %s --check-prefix=PTX80
// REQUIRES: ptxas

// Non-saturating casts: the instruction, then |x| > 464 (E4M3FN: NaN) or
// |x| > 61439.996 (E5M2: inf) and NaN (E5M2) fixed.
// PTX90-LABEL: .visible .entry cast_e4m3_kernel(
// PTX90: cvt.rn.satfinite.e4m3x2.f32 [[C:%rs[0-9]+]], [[X:%r[0-9]+]], [[X]];
// PTX90: setp.gt.u32 [[OVER:%p[0-9]+]], {{%r[0-9]+}}, 1139277824;
// PTX90: selp.b16 {{%rs[0-9]+}}, {{%rs[0-9]+}}, [[C]], [[OVER]];
// PTX90-NOT: selp
// PTX90-LABEL: .visible .entry cast_e5m2_kernel(
// PTX90: cvt.rn.satfinite.e5m2x2.f32
// PTX90: setp.gt.u32 {{%p[0-9]+}}, {{%r[0-9]+}}, 1198522367;
// PTX90: setp.gt.u32 {{%p[0-9]+}}, {{%r[0-9]+}}, 2139095040;
// Saturating casts and quantization: the instruction saturates; NaN fixed.
// PTX90-LABEL: .visible .entry cast_sat_e4m3_kernel(
// PTX90-NOT: setp.{{.*}}.f32
// PTX90: cvt.rn.satfinite.e4m3x2.f32
// PTX90: setp.gt.u32 {{%p[0-9]+}}, {{%r[0-9]+}}, 2139095040;
// PTX90-NOT: setp
// The two quantizations are one kernel (lpc-merge-independent-kernels),
// a branch each (E5M2 first: it sank past the E4M3 one).
// PTX90-LABEL: .visible .entry quantize_kernel(
// PTX90: mul.rn.f32 [[Q5:%r[0-9]+]]
// PTX90-NEXT: cvt.rn.satfinite.e5m2x2.f32 {{%rs[0-9]+}}, [[Q5]], [[Q5]];
// PTX90-NOT: 1198522367
// PTX90: setp.gt.u32 {{%p[0-9]+}}, {{%r[0-9]+}}, 2139095040;
// PTX90: bra.uni
// PTX90: mul.rn.f32 [[Q:%r[0-9]+]]
// PTX90-NEXT: cvt.rn.satfinite.e4m3x2.f32 {{%rs[0-9]+}}, [[Q]], [[Q]];
// PTX90-NOT: 1139277824
// PTX90: setp.gt.u32 {{%p[0-9]+}}, {{%r[0-9]+}}, 2139095040;
// PTX90-NOT: setp
// Decoding: the instruction (exact), f16 -> f32 (exact), lpc's NaN.
// PTX90-LABEL: .visible .entry dequantize_kernel(
// PTX90: cvt.rn.f16x2.e4m3x2
// PTX90: cvt.f32.f16
// PTX90: selp.f32 {{%r[0-9]+}}, 0fFFC00000, 0f7FC00000
// PTX90-LABEL: .visible .entry cast_from_e5m2_kernel(
// PTX90: cvt.rn.f16x2.e5m2x2
// PTX90: assembled 6 kernels for sm_90

// sm_89 has them from PTX 8.1 on.
// PTX89: lpc_kernels: 6 entry, 0 extern, target sm_89
// PTX89: .version 8.1
// PTX89: cvt.rn.satfinite.e4m3x2.f32
// PTX89: assembled 6 kernels for sm_89

// PTX80-NOT: e4m3x2
// PTX80-NOT: e5m2x2
// PTX80: lpc_kernels: 6 entry, 0 extern, target sm_80
// PTX80-NOT: e4m3x2
// PTX80-NOT: e5m2x2
// PTX80: assembled 6 kernels for sm_80

func.func @cast_e4m3(%x: tensor<1023xf32>) -> tensor<1023xf8E4M3FN> {
  %y = lpc.cast %x : tensor<1023xf32> to tensor<1023xf8E4M3FN>
  return %y : tensor<1023xf8E4M3FN>
}

func.func @cast_e5m2(%x: tensor<1023xf32>) -> tensor<1023xf8E5M2> {
  %y = lpc.cast %x : tensor<1023xf32> to tensor<1023xf8E5M2>
  return %y : tensor<1023xf8E5M2>
}

func.func @cast_sat_e4m3(%x: tensor<1023xf32>) -> tensor<1023xf8E4M3FN> {
  %y = lpc.cast %x {saturate} : tensor<1023xf32> to tensor<1023xf8E4M3FN>
  return %y : tensor<1023xf8E4M3FN>
}

func.func @quantize(%x: tensor<1023xf32>, %s: tensor<f32>) -> (tensor<1023xf8E4M3FN>, tensor<1023xf8E5M2>) {
  %a = lpc.quantize %x, %s : tensor<1023xf32> to tensor<1023xf8E4M3FN>
  %b = lpc.quantize %x, %s : tensor<1023xf32> to tensor<1023xf8E5M2>
  return %a, %b : tensor<1023xf8E4M3FN>, tensor<1023xf8E5M2>
}

func.func @dequantize(%q: tensor<1023xf8E4M3FN>, %s: tensor<f32>) -> tensor<1023xf32> {
  %y = lpc.dequantize %q, %s : tensor<1023xf8E4M3FN> to tensor<1023xf32>
  return %y : tensor<1023xf32>
}

func.func @cast_from_e5m2(%q: tensor<1023xf8E5M2>) -> tensor<1023xf32> {
  %y = lpc.cast %q : tensor<1023xf8E5M2> to tensor<1023xf32>
  return %y : tensor<1023xf32>
}
