// RUN: lpc-opt %s -split-input-file --lpc-decompose-attention | FileCheck %s
// RUN: lpc-opt %s -split-input-file --lpc-decompose-attention=policy=bf16 | FileCheck %s --check-prefix=BF16
// RUN: not lpc-opt %s --lpc-decompose-attention=policy=fp32 -o /dev/null 2>&1 | FileCheck %s --check-prefix=BADOPT

// BADOPT: lpc-decompose-attention: policy='fp32' (allowed: no, bf16, fp16, fp8)

// Causal, default scale (1/sqrt(8)), lse unused: GEMM, scale, causal mask,
// softmax, GEMM; the attention goes.
// CHECK-LABEL: func.func @causal
// CHECK-NEXT: %[[S:.*]] = lpc.matmul %arg0, %arg1 {transpose_b} : tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32> -> tensor<2x4x16x16xf32>
// CHECK-NEXT: %[[SC:.*]] = lpc.scale %[[S]] {factor = 0.35355339059327373 : f64} : tensor<2x4x16x16xf32>
// CHECK-NEXT: %[[M:.*]] = lpc.causal_mask %[[SC]] : tensor<2x4x16x16xf32>
// CHECK-NEXT: %[[P:.*]] = lpc.softmax %[[M]] : tensor<2x4x16x16xf32>
// CHECK-NEXT: %[[O:.*]] = lpc.matmul %[[P]], %arg2 : tensor<2x4x16x16xf32>, tensor<2x4x16x8xf32> -> tensor<2x4x16x8xf32>
// CHECK-NEXT: return %[[O]]
// CHECK-NOT: lpc.attention
// Under bf16 too: 16 keys (cuDNN up to 9.15, CUDA 13.0's, has no backward
// for a key length that is not a multiple of 128).
// BF16-LABEL: func.func @causal
// BF16-NEXT: lpc.matmul
// BF16-NOT: lpc.attention
func.func @causal(%q: tensor<2x4x16x8xf32>, %k: tensor<2x4x16x8xf32>, %v: tensor<2x4x16x8xf32>) -> tensor<2x4x16x8xf32> {
  %o, %l = lpc.attention %q, %k, %v {causal} : tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32> -> tensor<2x4x16x8xf32>, tensor<2x4x16xf32>
  return %o : tensor<2x4x16x8xf32>
}

// -----

// A mask (decomposed under every policy: cuDNN's step takes none), Sq < Skv,
// lse used: the broadcast mask is added, lse is the row logsumexp.
// CHECK-LABEL: func.func @mask_lse
// CHECK-NEXT: %[[S:.*]] = lpc.matmul %arg0, %arg1 {transpose_b} : tensor<3x8xf32>, tensor<5x8xf32> -> tensor<3x5xf32>
// CHECK-NEXT: %[[SC:.*]] = lpc.scale %[[S]] {factor = 5.000000e-01 : f64}
// CHECK-NEXT: %[[MB:.*]] = lpc.broadcast %arg2 dims = [0, 1] : tensor<3x5xf32> -> tensor<3x5xf32>
// CHECK-NEXT: %[[A:.*]] = lpc.add %[[SC]], %[[MB]]
// CHECK-NEXT: %[[CM:.*]] = lpc.causal_mask %[[A]]
// CHECK-NEXT: %[[P:.*]] = lpc.softmax %[[CM]]
// CHECK-NEXT: %[[O:.*]] = lpc.matmul %[[P]], %arg1
// CHECK-NEXT: %[[MX:.*]] = lpc.reduce_max %[[CM]] {axes = array<i64: 1>} : tensor<3x5xf32> -> tensor<3xf32>
// CHECK-NEXT: %[[MXB:.*]] = lpc.broadcast %[[MX]] dims = [0]
// CHECK-NEXT: %[[D:.*]] = lpc.sub %[[CM]], %[[MXB]]
// CHECK-NEXT: %[[E:.*]] = lpc.exp %[[D]]
// CHECK-NEXT: %[[SUM:.*]] = lpc.reduce_sum %[[E]] {axes = array<i64: 1>}
// CHECK-NEXT: %[[LOG:.*]] = lpc.log %[[SUM]]
// CHECK-NEXT: %[[LSE:.*]] = lpc.add %[[MX]], %[[LOG]]
// CHECK-NEXT: return %[[O]], %[[LSE]]
// BF16-LABEL: func.func @mask_lse
// BF16-NOT: lpc.attention
// BF16: return
func.func @mask_lse(%q: tensor<3x8xf32>, %k: tensor<5x8xf32>, %m: tensor<3x5xf32>) -> (tensor<3x8xf32>, tensor<3xf32>) {
  %o, %l = lpc.attention %q, %k, %k mask %m {causal, scale = 0.5 : f64} : tensor<3x8xf32>, tensor<5x8xf32>, tensor<5x8xf32>, tensor<3x5xf32> -> tensor<3x8xf32>, tensor<3xf32>
  return %o, %l : tensor<3x8xf32>, tensor<3xf32>
}

// -----

// Under bf16, kept only where cuDNN runs it: head dims multiples of 8 up to
// 128, a key length that is a multiple of 128, and no fp32 pin.
// BF16-LABEL: func.func @cudnn_limits
// BF16-COUNT-1: lpc.attention %arg0, %arg0, %arg0 :
// BF16-NOT: lpc.attention
func.func @cudnn_limits(%a: tensor<128x8xf32>, %b: tensor<128x12xf32>, %c: tensor<128x256xf32>, %d: tensor<96x8xf32>) -> (tensor<128x8xf32>, tensor<128x12xf32>, tensor<128x256xf32>, tensor<128x8xf32>, tensor<96x8xf32>) {
  %o1, %l1 = lpc.attention %a, %a, %a : tensor<128x8xf32>, tensor<128x8xf32>, tensor<128x8xf32> -> tensor<128x8xf32>, tensor<128xf32>
  %o2, %l2 = lpc.attention %b, %b, %b : tensor<128x12xf32>, tensor<128x12xf32>, tensor<128x12xf32> -> tensor<128x12xf32>, tensor<128xf32>
  %o3, %l3 = lpc.attention %c, %c, %c : tensor<128x256xf32>, tensor<128x256xf32>, tensor<128x256xf32> -> tensor<128x256xf32>, tensor<128xf32>
  %o4, %l4 = lpc.attention %a, %a, %a {lpc.precision = #lpc.precision<fp32>} : tensor<128x8xf32>, tensor<128x8xf32>, tensor<128x8xf32> -> tensor<128x8xf32>, tensor<128xf32>
  %o5, %l5 = lpc.attention %d, %d, %d : tensor<96x8xf32>, tensor<96x8xf32>, tensor<96x8xf32> -> tensor<96x8xf32>, tensor<96xf32>
  return %o1, %o2, %o3, %o4, %o5 : tensor<128x8xf32>, tensor<128x12xf32>, tensor<128x256xf32>, tensor<128x8xf32>, tensor<96x8xf32>
}

// -----

// More queries than keys without the causal mask: every row sees every key.
// (Causal, it is an error: lpc-decompose-attention-invalid.mlir.)
// Under bf16 cuDNN runs it: it stays.
// CHECK-LABEL: func.func @more_queries
// CHECK: lpc.softmax %{{.*}} : tensor<160x128xf32>
// CHECK-NOT: lpc.attention
// BF16-LABEL: func.func @more_queries
// BF16-NEXT: lpc.attention
func.func @more_queries(%q: tensor<160x8xf32>, %k: tensor<128x8xf32>) -> tensor<160x8xf32> {
  %o, %l = lpc.attention %q, %k, %k : tensor<160x8xf32>, tensor<128x8xf32>, tensor<128x8xf32> -> tensor<160x8xf32>, tensor<160xf32>
  return %o : tensor<160x8xf32>
}
