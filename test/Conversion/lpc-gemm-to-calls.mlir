// RUN: lpc-opt %s -lpc-to-linalg -one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" -lpc-gemm-to-calls | FileCheck %s
// RUN: lpc-opt %s -lpc-to-linalg -cse -one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" -lpc-gemm-to-calls | FileCheck %s --check-prefix=INIT

// The library overwrites C: the zero fills of the accumulators (and the
// copies of the zero tensor CSE shared between the GEMMs) are gone.
// INIT-LABEL: func.func @gemms
// INIT-NOT: linalg.fill
// INIT-NOT: memref.copy
// INIT: return

// Bufferized GEMMs become calls to the GEMM library on rank-3 views:
// a rank-2 GEMM gets a batch of 1, a rank-3 (transposed) x rank-2 GEMM a
// broadcast rhs;
// bf16 operands call the bf16 entry point, f16 operands the f16 one (it widens
// them to f32 itself). A bf16 GEMM whose f32 accumulator is only rounded to
// bf16 by its one reader stores bf16 itself (lpc_rt_gemm_bf16_bf16) and the
// reader takes the bf16 buffer as it is; one whose f32 result is used as
// such (an FP8 GEMM, run as a bf16 GEMM and then scaled) keeps f32 C.

// CHECK-DAG: func.func private @lpc_rt_gemm_bf16_bf16(memref<?x?x?xbf16>, memref<?x?x?xbf16>, memref<?x?x?xbf16>, i64, i64, i64) attributes {llvm.emit_c_interface}
// CHECK-DAG: func.func private @lpc_rt_gemm_f32(memref<?x?x?xf32>, memref<?x?x?xf32>, memref<?x?x?xf32>, i64, i64, i64) attributes {llvm.emit_c_interface}
// CHECK-DAG: func.func private @lpc_rt_gemm_bf16(memref<?x?x?xbf16>, memref<?x?x?xbf16>, memref<?x?x?xf32>, i64, i64, i64) attributes {llvm.emit_c_interface}
// CHECK-LABEL: func.func @gemms
// CHECK: memref.expand_shape %{{.*}} {{\[\[}}0, 1], [2]] output_shape [1, 4, 8] : memref<4x8xf32> into memref<1x4x8xf32>
// CHECK: call @lpc_rt_gemm_f32(%{{.*}}, %{{.*}}, %{{.*}}, %c0_i64, %c0_i64{{.*}}, %c0_i64{{.*}}) {lpc_writes = array<i64: 2>} : (memref<?x?x?xf32>, memref<?x?x?xf32>, memref<?x?x?xf32>, i64, i64, i64) -> ()
// CHECK: %[[CB:.*]] = memref.alloc() {alignment = 64 : i64} : memref<4x16xbf16>
// CHECK: call @lpc_rt_gemm_bf16_bf16({{.*}}) {lpc_writes = array<i64: 2>} : (memref<?x?x?xbf16>, memref<?x?x?xbf16>, memref<?x?x?xbf16>, i64, i64, i64) -> ()
// CHECK: linalg.generic {{.*}} ins(%[[CB]] : memref<4x16xbf16>)
// CHECK-NEXT: ^bb0(%[[IN:.*]]: bf16, %{{.*}}: bf16):
// CHECK-NEXT: linalg.yield %[[IN]] : bf16
// CHECK: call @lpc_rt_gemm_f32(%{{.*}}, %{{.*}}, %{{.*}}, %c1_i64, %c0_i64{{.*}}, %c1_i64{{.*}})
// CHECK: call @lpc_rt_gemm_bf16({{.*}}) {lpc_writes = array<i64: 2>} : (memref<?x?x?xbf16>, memref<?x?x?xbf16>, memref<?x?x?xf32>, i64, i64, i64) -> ()
// CHECK-NOT: lpc_gemm
func.func @gemms(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>, %c: tensor<4x8xbf16>, %d: tensor<8x16xbf16>,
                 %e: tensor<2x8x4xf32>, %f: tensor<4x8xf8E4M3FN>, %g: tensor<8x16xf8E4M3FN>, %s: tensor<f32>) -> (tensor<4x16xf32>, tensor<4x16xbf16>, tensor<2x4x16xf32>, tensor<4x16xf32>) {
  %0 = lpc.matmul %a, %b : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
  %1 = lpc.matmul %c, %d : tensor<4x8xbf16>, tensor<8x16xbf16> -> tensor<4x16xbf16>
  %2 = lpc.matmul %e, %b {transpose_a} : tensor<2x8x4xf32>, tensor<8x16xf32> -> tensor<2x4x16xf32>
  %3 = lpc.scaled_matmul %f, %g scales(%s, %s) : tensor<4x8xf8E4M3FN>, tensor<8x16xf8E4M3FN> -> tensor<4x16xf32>
  return %0, %1, %2, %3 : tensor<4x16xf32>, tensor<4x16xbf16>, tensor<2x4x16xf32>, tensor<4x16xf32>
}

// A rank-3 x rank-2 GEMM without a transposed lhs is one GEMM of all the
// rows ([2, 4, 8] as [1, 8, 8], C [1, 8, 16]), broadcast_b 0: the same
// products, one large GEMM instead of a batch of small ones.
// CHECK-LABEL: func.func @rows
// CHECK: %[[A:.*]] = memref.collapse_shape %arg0 {{\[\[}}0, 1], [2]] : memref<2x4x8xf32> into memref<8x8xf32>
// CHECK: memref.expand_shape %[[A]] {{\[\[}}0, 1], [2]] output_shape [1, 8, 8]
// CHECK: memref.collapse_shape %{{.*}} {{\[\[}}0, 1], [2]] : memref<2x4x16xf32> into memref<8x16xf32>
// CHECK: call @lpc_rt_gemm_f32(%{{.*}}, %{{.*}}, %{{.*}}, %c0_i64, %c0_i64{{.*}}, %c0_i64{{.*}})
func.func @rows(%e: tensor<2x4x8xf32>, %b: tensor<8x16xf32>) -> tensor<2x4x16xf32> {
  %0 = lpc.matmul %e, %b : tensor<2x4x8xf32>, tensor<8x16xf32> -> tensor<2x4x16xf32>
  return %0 : tensor<2x4x16xf32>
}
