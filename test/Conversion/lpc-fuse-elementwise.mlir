// RUN: lpc-opt %s -lpc-to-linalg -lpc-fuse-elementwise -canonicalize | FileCheck %s

// bias_add -> gelu -> cast to bf16 become one loop nest; the cast feeding
// the GEMM and the GEMM itself stay apart (the GEMM becomes a library call),
// and a value with two users is not fused into either (no recomputation).

// CHECK-LABEL: func.func @chain
// CHECK: linalg.generic
// CHECK-SAME: lpc_gemm
// CHECK: %[[H:.*]] = linalg.generic
// CHECK: math.tanh
// CHECK: arith.truncf {{.*}} f32 to bf16
// CHECK-NOT: linalg.generic
// CHECK: return %[[H]]
func.func @chain(%x: tensor<8x16xf32>, %w: tensor<16x32xf32>, %b: tensor<32xf32>) -> tensor<8x32xbf16> {
  %0 = lpc.matmul %x, %w : tensor<8x16xf32>, tensor<16x32xf32> -> tensor<8x32xf32>
  %1 = lpc.bias_add %0, %b : tensor<8x32xf32>, tensor<32xf32>
  %2 = lpc.gelu %1 {approximation = #lpc.gelu_approximation<tanh>} : tensor<8x32xf32>
  %3 = lpc.cast %2 : tensor<8x32xf32> to tensor<8x32xbf16>
  return %3 : tensor<8x32xbf16>
}

// CHECK-LABEL: func.func @shared
// CHECK-COUNT-3: linalg.generic
// CHECK-NOT: linalg.generic
func.func @shared(%x: tensor<64xf32>) -> (tensor<64xf32>, tensor<64xf32>) {
  %e = lpc.exp %x : tensor<64xf32>
  %a = lpc.neg %e : tensor<64xf32>
  %b = lpc.relu %e : tensor<64xf32>
  return %a, %b : tensor<64xf32>, tensor<64xf32>
}

// A producer read through a broadcast (the bias cast to bf16, read by every
// row): fused by default (the GPU's choice), its own loop with
// broadcast=false (the host's), so that it runs once per bias element
// rather than once per output element.
// RUN: lpc-opt %s -lpc-to-linalg -lpc-fuse-elementwise -canonicalize | FileCheck %s --check-prefix=BCAST
// RUN: lpc-opt %s -lpc-to-linalg "-lpc-fuse-elementwise=broadcast=false" -canonicalize | FileCheck %s --check-prefix=HOST
// CHECK-LABEL: func.func @bias_bf16
// BCAST-LABEL: func.func @bias_bf16
// BCAST: linalg.generic
// BCAST-SAME: iterator_types = ["parallel", "parallel"]
// BCAST: arith.truncf {{.*}} f32 to bf16
// BCAST-NOT: linalg.generic
// BCAST: return
// HOST-LABEL: func.func @bias_bf16
// HOST: %[[B:.*]] = linalg.generic
// HOST-SAME: iterator_types = ["parallel"]
// HOST-SAME: ins(%{{.*}} : tensor<32xf32>)
// HOST: arith.truncf {{.*}} f32 to bf16
// HOST: linalg.generic
// HOST-SAME: iterator_types = ["parallel", "parallel"]
// HOST-SAME: %[[B]] : tensor<8x32xbf16>, tensor<32xbf16>
// HOST-NOT: linalg.generic
// HOST: return
func.func @bias_bf16(%h: tensor<8x32xbf16>, %b: tensor<32xf32>) -> tensor<8x32xbf16> {
  %c = lpc.cast %b : tensor<32xf32> to tensor<32xbf16>
  %1 = lpc.bias_add %h, %c : tensor<8x32xbf16>, tensor<32xbf16>
  return %1 : tensor<8x32xbf16>
}
