// The start of the CUDA back end: non-GEMM lpc ops become GPU kernels,
// compiled to PTX by LLVM's NVPTX back end (no CUDA toolkit needed for
// this part). Every kernel assembles with ptxas for sm_90 and sm_80 and
// calls nothing external (no .extern).
// RUN: lpc-opt %s --lpc-gpu-codegen -o %t.sm90.mlir
// RUN: FileCheck %s < %t.sm90.mlir
// RUN: %python %S/Inputs/check_ptx.py %t.sm90.mlir %ptxas sm_90 | FileCheck %s --check-prefix=PTX90
// RUN: lpc-opt %s --lpc-gpu-codegen="chip=sm_80" -o %t.sm80.mlir
// RUN: %python %S/Inputs/check_ptx.py %t.sm80.mlir %ptxas sm_80 | FileCheck %s --check-prefix=PTX80
// RUN: not lpc-opt %s --lpc-gpu-codegen="chip=gfx90a" 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: %python %S/Inputs/check_ptx.py %t.sm90.mlir %ptxas sm_90 --print-ptx | FileCheck %s --check-prefix=EXP
// REQUIRES: ptxas

// The kernels of the one-kernel modules outlining makes share one module
// (lpc-merge-gpu-modules), each named after its old module.
// CHECK: gpu.launch_func @lpc_kernels::@kernels_kernel
// CHECK: gpu.launch_func @lpc_kernels::@kernels_kernel_0
// CHECK: gpu.binary @lpc_kernels [#gpu.object<#nvvm.target<O = 3, chip = "sm_90"{{[^>]*}}>
// CHECK-SAME: .visible .entry kernels_kernel(
// CHECK-NOT: gpu.binary

// Eight loops, of which lpc-merge-independent-kernels launches the small
// independent ones together: five kernels.
// PTX90: lpc_kernels: 5 entry, 0 extern, target sm_90
// PTX90: assembled 5 kernels for sm_90
// PTX80: assembled 5 kernels for sm_80
// BAD: lpc-gpu-codegen: chip must be sm_XX, got 'gfx90a'

// The softmax's and GELU's exp is libdevice's __nv_expf, inlined: 2^n
// from a rounded x * log2(e), the rest by the hardware's ex2.approx
// (MLIR's polynomial, used before, has no ex2).
// EXP: fma.rm.f32
// EXP: shl.b32 {{.*}}, 23;
// EXP-NEXT: ex2.approx.ftz.f32

func.func @kernels(%x: tensor<64x128xf32>, %b: tensor<128xf32>, %s: tensor<f32>) -> (tensor<64x128xbf16>, tensor<64x128xf32>, tensor<64x128xf8E4M3FN>) {
  %0 = lpc.bias_add %x, %b : tensor<64x128xf32>, tensor<128xf32>
  %1 = lpc.gelu %0 {approximation = #lpc.gelu_approximation<tanh>} : tensor<64x128xf32>
  %2 = lpc.cast %1 : tensor<64x128xf32> to tensor<64x128xbf16>
  %3 = lpc.softmax %x : tensor<64x128xf32>
  %4 = lpc.quantize %x, %s : tensor<64x128xf32> to tensor<64x128xf8E4M3FN>
  return %2, %3, %4 : tensor<64x128xbf16>, tensor<64x128xf32>, tensor<64x128xf8E4M3FN>
}
