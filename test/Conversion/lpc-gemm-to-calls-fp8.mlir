// RUN: lpc-opt %s -lpc-to-linalg="fp8-gemm=true" -one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" -lpc-gemm-to-calls="fp8=true" | FileCheck %s
// RUN: lpc-opt %s -lpc-to-linalg -one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" -lpc-gemm-to-calls="fp8=true" | FileCheck %s --check-prefix=WIDEN

// With fp8-gemm the GEMM reads the FP8 operands themselves, and with fp8 the
// call is in cuBLASLt's TN layout: A [M, K] as it is, B [K, N] copied
// transposed into a new [N, K] buffer (freed after the call), trans_b = 1.
// An E5M2 gradient against an E4M3 weight stored [N, K] needs no copy. The
// recipe's fast accumulation (fprop) stays on the call (lpc_fast_accum),
// which also applies the scale inverses (the `_scaled` variants: A/B scale
// pointers, here the same buffer for both). A
// GEMM whose M is not a multiple of 16 widens to bf16 as before (E5M2 x E5M2
// the verifier rejects).
// CHECK-LABEL: func.func @fp8
// CHECK: %[[BT:.*]] = memref.alloc() {alignment = 64 : i64} : memref<32x16xf8E4M3FN>
// CHECK: linalg.transpose ins(%{{.*}} : memref<16x32xf8E4M3FN>) outs(%[[BT]] : memref<32x16xf8E4M3FN>) permutation = [1, 0]
// CHECK: call @lpc_rt_gemm_f8e4m3_f8e4m3_scaled(%{{.*}}, %{{.*}}, %{{.*}}, %[[S:.*]], %[[S]], %c0_i64, %c1_i64, %c0_i64{{.*}}) {lpc_fast_accum, lpc_writes = array<i64: 2>} : (memref<?x?x?xf8E4M3FN>, memref<?x?x?xf8E4M3FN>, memref<?x?x?xf32>, memref<f32>, memref<f32>, i64, i64, i64) -> ()
// CHECK-NEXT: memref.dealloc %[[BT]]
// The dequantization is the call's now: what is left copies C.
// CHECK: linalg.generic
// CHECK-NEXT: ^bb0(%[[IN:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: linalg.yield %[[IN]] : f32
// CHECK-NOT: linalg.transpose
// CHECK: call @lpc_rt_gemm_f8e5m2_f8e4m3_scaled(%{{.*}}, %{{.*}}, %{{.*}}, %[[S]], %[[S]], %c0_i64{{.*}}, %c1_i64{{.*}}, %c0_i64{{.*}}) {lpc_writes = array<i64: 2>} :
// CHECK: call @lpc_rt_gemm_bf16(
// CHECK-NOT: lpc_rt_gemm_f8
// Without fp8-gemm the operands are widened: bf16 calls only.
// WIDEN-NOT: lpc_rt_gemm_f8
func.func @fp8(%x: tensor<16x16xf8E4M3FN>, %w: tensor<16x32xf8E4M3FN>, %g: tensor<16x32xf8E5M2>,
               %x8: tensor<8x16xf8E4M3FN>, %s: tensor<f32>)
    -> (tensor<16x32xf32>, tensor<16x16xf32>, tensor<8x32xf32>) {
  %0 = lpc.scaled_matmul %x, %w scales(%s, %s) {fast_accum} : tensor<16x16xf8E4M3FN>, tensor<16x32xf8E4M3FN> -> tensor<16x32xf32>
  %1 = lpc.scaled_matmul %g, %w scales(%s, %s) {transpose_b} : tensor<16x32xf8E5M2>, tensor<16x32xf8E4M3FN> -> tensor<16x16xf32>
  %2 = lpc.scaled_matmul %x8, %w scales(%s, %s) : tensor<8x16xf8E4M3FN>, tensor<16x32xf8E4M3FN> -> tensor<8x32xf32>
  return %0, %1, %2 : tensor<16x32xf32>, tensor<16x16xf32>, tensor<8x32xf32>
}
