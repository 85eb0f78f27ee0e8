// RUN: lpc-opt %s -split-input-file -lpc-insert-casts | FileCheck %s
// RUN: lpc-opt %s -split-input-file -lpc-insert-casts -canonicalize | FileCheck %s --check-prefix=CANON

// Operands are cast to the assigned type once per (value, type); results
// take the assigned type; an unassigned consumer (func.return) gets the
// original type back.

// CHECK-LABEL: func.func @gemms
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>, %[[W:.*]]: tensor<8x8xf32>)
// CHECK-DAG: %[[XC:.*]] = lpc.cast %[[X]] : tensor<4x8xf32> to tensor<4x8xbf16>
// CHECK-DAG: %[[WC:.*]] = lpc.cast %[[W]] : tensor<8x8xf32> to tensor<8x8xbf16>
// CHECK: %[[A:.*]] = lpc.matmul %[[XC]], %[[WC]] {{.*}} : tensor<4x8xbf16>, tensor<8x8xbf16> -> tensor<4x8xbf16>
// The second GEMM reuses both casts.
// CHECK-NOT: lpc.cast %[[W]]
// CHECK: %[[B:.*]] = lpc.matmul %[[A]], %[[WC]] {{.*}} -> tensor<4x8xbf16>
// CHECK: %[[BF:.*]] = lpc.cast %[[B]] : tensor<4x8xbf16> to tensor<4x8xf32>
// CHECK: return %[[BF]] : tensor<4x8xf32>
func.func @gemms(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>) -> tensor<4x8xf32> {
  %a = lpc.matmul %x, %w {lpc.assigned = #lpc.precision<bf16>} : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32>
  %b = lpc.matmul %a, %w {lpc.assigned = #lpc.precision<bf16>} : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32>
  return %b : tensor<4x8xf32>
}

// -----

// Keep-fp32 consumers of a bf16 value get one cast up; a bf16 consumer of
// the same value uses it directly (no bf16 -> f32 -> bf16 chain). Losses
// keep their f32 result, and the loss gradient keeps its f32 seed.

// CHECK-LABEL: func.func @loss
// CHECK: %[[H:.*]] = lpc.matmul {{.*}} -> tensor<4x16xbf16>
// CHECK: %[[HF:.*]] = lpc.cast %[[H]] : tensor<4x16xbf16> to tensor<4x16xf32>
// CHECK: %[[L:.*]] = lpc.softmax_cross_entropy %[[HF]], %{{.*}} : tensor<4x16xf32>, tensor<4xi32>
// CHECK: %[[G:.*]] = lpc.softmax_cross_entropy_grad %[[SEED:.*]], %[[HF]], %{{.*}} : tensor<4x16xf32>
// CHECK: lpc.relu %[[H]] {{.*}} : tensor<4x16xbf16>
// CHECK-NOT: lpc.cast %[[HF]]
func.func @loss(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>, %y: tensor<4xi32>) -> (tensor<f32>, tensor<4x16xf32>, tensor<4x16xf32>) {
  %h = lpc.matmul %x, %w {lpc.assigned = #lpc.precision<bf16>} : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
  %l = lpc.softmax_cross_entropy %h, %y {lpc.assigned = #lpc.precision<fp32>} : tensor<4x16xf32>, tensor<4xi32>
  %seed = lpc.grad_seed : tensor<f32>
  %g = lpc.softmax_cross_entropy_grad %seed, %h, %y {lpc.assigned = #lpc.precision<fp32>} : tensor<4x16xf32>, tensor<4xi32>
  %r = lpc.relu %h {lpc.assigned = #lpc.precision<bf16>} : tensor<4x16xf32>
  return %l, %g, %r : tensor<f32>, tensor<4x16xf32>, tensor<4x16xf32>
}

// -----

// Optimizer ops (fixed precision) see FP32 masters and FP32 gradients.

// CHECK-LABEL: func.func @masters
// CHECK: %[[GW:.*]] = lpc.matmul {{.*}} -> tensor<8x8xbf16>
// CHECK: %[[GF:.*]] = lpc.cast %[[GW]] : tensor<8x8xbf16> to tensor<8x8xf32>
// CHECK: lpc.sgd %arg0, %[[GF]], %arg1 lr(%arg3) : tensor<8x8xf32>
func.func @masters(%w: tensor<8x8xf32>, %buf: tensor<8x8xf32>, %x: tensor<4x8xf32>, %lr: tensor<f32>, %dy: tensor<4x8xf32>) -> (tensor<8x8xf32>, tensor<8x8xf32>) {
  %gw = lpc.matmul %x, %dy {lpc.assigned = #lpc.precision<bf16>, transpose_a} : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<8x8xf32>
  %p, %b = lpc.sgd %w, %gw, %buf lr(%lr) : tensor<8x8xf32>
  return %p, %b : tensor<8x8xf32>, tensor<8x8xf32>
}

// -----

// FP8 GEMMs are left for lpc-fp8-scaling: operands in their original types.

// CHECK-LABEL: func.func @fp8_left_alone
// CHECK: %[[A:.*]] = lpc.gelu {{.*}} : tensor<32x32xbf16>
// CHECK: %[[AF:.*]] = lpc.cast %[[A]] : tensor<32x32xbf16> to tensor<32x32xf32>
// CHECK: lpc.matmul %[[AF]], %arg1 {{.*}}lpc.fp8 = {{.*}} : tensor<32x32xf32>, tensor<32x32xf32> -> tensor<32x32xf32>
func.func @fp8_left_alone(%x: tensor<32x32xf32>, %w: tensor<32x32xf32>) -> tensor<32x32xf32> {
  %h = lpc.matmul %x, %w {lpc.assigned = #lpc.precision<bf16>} : tensor<32x32xf32>, tensor<32x32xf32> -> tensor<32x32xf32>
  %a = lpc.gelu %h {lpc.assigned = #lpc.precision<bf16>} : tensor<32x32xf32>
  %o = lpc.matmul %a, %w {lpc.assigned = #lpc.precision<bf16>, lpc.fp8 = [#lpc.precision<fp8_e4m3>, #lpc.precision<fp8_e4m3>]} : tensor<32x32xf32>, tensor<32x32xf32> -> tensor<32x32xf32>
  return %o : tensor<32x32xf32>
}

// -----

// A user cast of a value that became bf16: cast back, then the user's cast;
// canonicalize folds the exact bf16 -> f32 -> bf16 round trip.

// CANON-LABEL: func.func @user_cast
// CANON: %[[G:.*]] = lpc.gelu {{.*}} : tensor<4x4xbf16>
// CANON-NOT: lpc.cast
// CANON: return %[[G]] : tensor<4x4xbf16>
func.func @user_cast(%x: tensor<4x4xf32>, %w: tensor<4x4xf32>) -> tensor<4x4xbf16> {
  %h = lpc.matmul %x, %w {lpc.assigned = #lpc.precision<bf16>} : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
  %g = lpc.gelu %h {lpc.assigned = #lpc.precision<bf16>} : tensor<4x4xf32>
  %c = lpc.cast %g : tensor<4x4xf32> to tensor<4x4xbf16>
  return %c : tensor<4x4xbf16>
}

// -----

// Attention in bf16: query, key, value, the result and the gradients take
// bf16; the mask and the row statistics (lse) stay f32, in the forward and
// the backward op.

// CHECK-LABEL: func.func @attention
// CHECK-SAME: (%[[Q:.*]]: tensor<4x8xf32>, %[[M:.*]]: tensor<4x4xf32>)
// CHECK: %[[QC:.*]] = lpc.cast %[[Q]] : tensor<4x8xf32> to tensor<4x8xbf16>
// CHECK: %[[O:.*]], %[[L:.*]] = lpc.attention %[[QC]], %[[QC]], %[[QC]] mask %[[M]] {{.*}} : tensor<4x8xbf16>, tensor<4x8xbf16>, tensor<4x8xbf16>, tensor<4x4xf32> -> tensor<4x8xbf16>, tensor<4xf32>
// CHECK: lpc.attention_grad %[[O]], %[[QC]], %[[QC]], %[[QC]], %[[O]], %[[L]] mask %[[M]] {{.*}} : tensor<4x8xbf16>, tensor<4x8xbf16>, tensor<4x8xbf16>, tensor<4x8xbf16>, tensor<4x8xbf16>, tensor<4xf32>, tensor<4x4xf32>
func.func @attention(%q: tensor<4x8xf32>, %m: tensor<4x4xf32>) -> (tensor<4x8xf32>, tensor<4xf32>) {
  %o, %l = lpc.attention %q, %q, %q mask %m {lpc.assigned = #lpc.precision<bf16>} : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x4xf32> -> tensor<4x8xf32>, tensor<4xf32>
  %dq, %dk, %dv = lpc.attention_grad %o, %q, %q, %q, %o, %l mask %m {lpc.assigned = #lpc.precision<bf16>} : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4xf32>, tensor<4x4xf32>
  return %dq, %l : tensor<4x8xf32>, tensor<4xf32>
}
