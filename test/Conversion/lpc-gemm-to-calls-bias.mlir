// RUN: lpc-opt %s -lpc-to-linalg -one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" -buffer-results-to-out-params="modify-public-functions hoist-static-allocs" -lpc-gemm-to-calls | FileCheck %s

// An f32 bias added to an f32 product: the GEMM adds it (the `_bias` calls:
// cuBLASLt's bias epilogue, an f32 addition as the graph's) and writes
// straight into the result, with no kernel for the bias left.
// CHECK-LABEL: func.func @f32
// CHECK: %[[B:.*]] = memref.cast %arg1 : memref<32xf32> to memref<?xf32>
// CHECK: call @lpc_rt_gemm_f32_bias(%{{.*}}, %{{.*}}, %{{.*}}, %[[B]], %c0_i64, %c0_i64{{.*}}, %c0_i64{{.*}}) {lpc_writes = array<i64: 2>} : (memref<?x?x?xf32>, memref<?x?x?xf32>, memref<?x?x?xf32>, memref<?xf32>, i64, i64, i64) -> ()
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @f32(%x: tensor<16x64xf32>, %b: tensor<32xf32>, %w: tensor<64x32xf32>) -> tensor<16x32xf32> {
  %0 = lpc.matmul %x, %w : tensor<16x64xf32>, tensor<64x32xf32> -> tensor<16x32xf32>
  %1 = lpc.bias_add %0, %b : tensor<16x32xf32>, tensor<32xf32>
  return %1 : tensor<16x32xf32>
}

// In bf16 the product is rounded before the bias is added: no epilogue
// (cuBLASLt would add before rounding).
// CHECK-LABEL: func.func @bf16
// CHECK-NOT: _bias
// CHECK: call @lpc_rt_gemm_bf16
// CHECK-NOT: _bias
// CHECK: linalg.generic
func.func @bf16(%x: tensor<16x64xbf16>, %b: tensor<32xbf16>, %w: tensor<64x32xbf16>) -> tensor<16x32xbf16> {
  %0 = lpc.matmul %x, %w : tensor<16x64xbf16>, tensor<64x32xbf16> -> tensor<16x32xbf16>
  %1 = lpc.bias_add %0, %b : tensor<16x32xbf16>, tensor<32xbf16>
  return %1 : tensor<16x32xbf16>
}

// The pre-bias product is also needed elsewhere: it stays.
// CHECK-LABEL: func.func @product_used
// CHECK: call @lpc_rt_gemm_f32(
// CHECK: linalg.generic
func.func @product_used(%x: tensor<16x64xf32>, %b: tensor<32xf32>, %w: tensor<64x32xf32>) -> (tensor<16x32xf32>, tensor<16x32xf32>) {
  %0 = lpc.matmul %x, %w : tensor<16x64xf32>, tensor<64x32xf32> -> tensor<16x32xf32>
  %1 = lpc.bias_add %0, %b : tensor<16x32xf32>, tensor<32xf32>
  return %0, %1 : tensor<16x32xf32>, tensor<16x32xf32>
}
