// FP8 policy on a train step: linear-layer GEMMs become FP8 with HYBRID
// formats per role, the others stay bf16 with the reason recorded.
// RUN: lpc-opt %s -lpc-autodiff -lpc-assign-precision="policy=fp8 fp8-min-mnk=0" | FileCheck %s
// RUN: lpc-opt %s -lpc-autodiff -lpc-assign-precision="policy=fp8 fp8-min-mnk=0 fp8-format=e4m3" | FileCheck %s --check-prefix=E4M3
// RUN: lpc-opt %s -lpc-autodiff -lpc-assign-precision="policy=fp8 fp8-min-mnk=0 override-linear-precision=wgrad" | FileCheck %s --check-prefix=OVERRIDE
// RUN: lpc-opt %s -lpc-autodiff -lpc-assign-precision="policy=fp8" | FileCheck %s --check-prefix=SMALL

// CHECK-LABEL: func.func @net_train_step
// fc1 fprop: activations and weights in E4M3.
// CHECK: lpc.matmul {{.*}}lpc.fp8 = [#lpc.precision<fp8_e4m3>, #lpc.precision<fp8_e4m3>], lpc.reason = "fp8 fprop GEMM (E4M3 x E4M3), bf16 output", role = #lpc.role<fprop>}
// The attention-like GEMM of two activations stays bf16.
// CHECK: lpc.matmul {{.*}}lpc.reason = "fp8 policy: fprop GEMM of activations (not a linear layer) stays bf16", role = #lpc.role<fprop>, transpose_b}
// The 10-class head: N = 10 is not a multiple of 16.
// CHECK: lpc.matmul {{.*}}lpc.reason = "fp8 fallback to bf16: K = 32, N = 10 not both multiples of 16", role = #lpc.role<fprop>}
// dgrad: the gradient in E5M2, the weight in E4M3; wgrad: activation E4M3,
// gradient E5M2. Never E5M2 x E5M2.
// CHECK-NOT: [#lpc.precision<fp8_e5m2>, #lpc.precision<fp8_e5m2>]
// CHECK-DAG: lpc.fp8 = [#lpc.precision<fp8_e5m2>, #lpc.precision<fp8_e4m3>], lpc.reason = "fp8 dgrad GEMM (E5M2 x E4M3), bf16 output", role = #lpc.role<dgrad>
// CHECK-DAG: lpc.fp8 = [#lpc.precision<fp8_e4m3>, #lpc.precision<fp8_e5m2>], lpc.reason = "fp8 wgrad GEMM (E4M3 x E5M2), bf16 output", role = #lpc.role<wgrad>
// Non-GEMM ops run in bf16 / fp32, never fp8.
// CHECK-NOT: lpc.assigned = #lpc.precision<fp8

// E4M3-LABEL: func.func @net_train_step
// E4M3-NOT: fp8_e5m2
// E4M3: lpc.reason = "fp8 dgrad GEMM (E4M3 x E4M3), bf16 output"

// OVERRIDE-LABEL: func.func @net_train_step
// OVERRIDE-NOT: fp8 wgrad GEMM
// OVERRIDE: lpc.reason = "fp8 policy: override-linear-precision keeps wgrad in bf16"

// With the default threshold (M*N*K >= 128^3) these GEMMs are too small.
// SMALL-LABEL: func.func @net_train_step
// SMALL-NOT: lpc.fp8 =
// SMALL: lpc.reason = "fp8 fallback to bf16: M*N*K = 32768 < fp8-min-mnk = 2097152"
func.func @net() -> tensor<f32> {
  %x = lpc.input "x" features : tensor<32x32xf32>
  %y = lpc.input "y" labels : tensor<32xi32>
  %w1 = lpc.param "fc1.weight" xavier_uniform : tensor<32x32xf32>
  %w2 = lpc.param "fc2.weight" xavier_uniform : tensor<32x32xf32>
  %w3 = lpc.param "head.weight" xavier_uniform : tensor<32x10xf32>
  %h = lpc.matmul %x, %w1 : tensor<32x32xf32>, tensor<32x32xf32> -> tensor<32x32xf32>
  %a = lpc.gelu %h : tensor<32x32xf32>
  %s = lpc.matmul %a, %a {transpose_b} : tensor<32x32xf32>, tensor<32x32xf32> -> tensor<32x32xf32>
  %h2 = lpc.matmul %s, %w2 : tensor<32x32xf32>, tensor<32x32xf32> -> tensor<32x32xf32>
  %o = lpc.matmul %h2, %w3 : tensor<32x32xf32>, tensor<32x10xf32> -> tensor<32x10xf32>
  %l = lpc.softmax_cross_entropy %o, %y : tensor<32x10xf32>, tensor<32xi32>
  return %l : tensor<f32>
}
