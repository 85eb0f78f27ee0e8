// RUN: lpc-opt %s -split-input-file -lpc-assign-precision -verify-diagnostics
// RUN: not lpc-opt %s -lpc-assign-precision=policy=fp4 2>&1 | FileCheck %s --check-prefix=POLICY
// RUN: not lpc-opt %s -lpc-assign-precision="keep-fp32=lpc.frob" 2>&1 | FileCheck %s --check-prefix=OPNAME
// RUN: not lpc-opt %s -lpc-assign-precision="override-linear-precision=bprop" 2>&1 | FileCheck %s --check-prefix=ROLE
// RUN: not lpc-opt %s -lpc-assign-precision="fp8-format=e3m4" 2>&1 | FileCheck %s --check-prefix=FORMAT

// POLICY: error: lpc-assign-precision: unknown policy 'fp4' (expected no, fp16, bf16 or fp8)
// OPNAME: error: lpc-assign-precision: keep-fp32: unknown op 'lpc.frob'
// ROLE: error: lpc-assign-precision: unknown GEMM role 'bprop' in override-linear-precision (expected fprop, dgrad, wgrad)
// FORMAT: error: lpc-assign-precision: unknown fp8-format 'e3m4' (expected hybrid or e4m3)

func.func @loss_pin(%x: tensor<4x3xf32>, %y: tensor<4xi32>) -> tensor<f32> {
  // expected-error @+1 {{lpc-assign-precision: losses run in fp32; cannot pin 'lpc.softmax_cross_entropy' to bf16}}
  %l = lpc.softmax_cross_entropy %x, %y {lpc.precision = #lpc.precision<bf16>} : tensor<4x3xf32>, tensor<4xi32>
  return %l : tensor<f32>
}

// -----

func.func @fp8_pin(%x: tensor<4x16xf32>, %w: tensor<16x16xf32>) -> tensor<4x16xf32> {
  // expected-error @+1 {{lpc-assign-precision: fp8 pins are not supported; pin bf16/fp16/fp32 and use policy=fp8 for FP8 GEMMs}}
  %h = lpc.matmul %x, %w {lpc.precision = #lpc.precision<fp8_e4m3>} : tensor<4x16xf32>, tensor<16x16xf32> -> tensor<4x16xf32>
  return %h : tensor<4x16xf32>
}
