// RUN: lpc-opt %s -lpc-autodiff | FileCheck %s

// The vector-Jacobian products of lpc.grouped_matmul (a mixture of experts:
// each row times its expert's matrix). For h = x w1[g] and y = a w2[g]^T:
// dx and da are grouped GEMMs with the matrices transposed the other way,
// dw1 = per-expert x^T dh, dw2 = per-expert dy^T a (transposed layout), and
// the groups get no gradient. lpc-gradcheck checks the values
// (test/Reference/gradcheck-ops.mlir); this pins the form.

// CHECK-LABEL: func.func @moe_train_step(
// CHECK: %[[G:.*]] = lpc.constant dense<[1, 0, 1, 2, -1, 0]> : tensor<6xi32>
// CHECK: %[[H:.*]] = lpc.grouped_matmul %[[X:.*]], %[[W1:.*]], %[[G]] : tensor<6x4xf32>, tensor<3x4x5xf32>, tensor<6xi32> -> tensor<6x5xf32>
// CHECK: lpc.grouped_matmul %{{.*}}, %[[W2:.*]], %[[G]] {transpose_b} : tensor<6x5xf32>, tensor<3x4x5xf32>, tensor<6xi32> -> tensor<6x4xf32>
// Backward of the second: da (the matrices untransposed), dw2 = dy^T a.
// CHECK: lpc.grouped_matmul %[[DY:.*]], %[[W2]], %[[G]] : tensor<6x4xf32>, tensor<3x4x5xf32>, tensor<6xi32> -> tensor<6x5xf32>
// CHECK: lpc.grouped_matmul_weight_grad %[[DY]], %{{.*}}, %[[G]] : tensor<6x4xf32>, tensor<6x5xf32>, tensor<6xi32> -> tensor<3x4x5xf32>
// Backward of the first: dw1 = x^T dh; x is an input, so no dx.
// CHECK: lpc.grouped_matmul_weight_grad %[[X]], %{{.*}}, %[[G]] : tensor<6x4xf32>, tensor<6x5xf32>, tensor<6xi32> -> tensor<3x4x5xf32>
// CHECK-NOT: lpc.grouped_matmul
// CHECK: return

func.func @moe() -> tensor<f32> {
  %x = lpc.input "x" features : tensor<6x4xf32>
  %g = lpc.constant dense<[1, 0, 1, 2, -1, 0]> : tensor<6xi32>
  %w1 = lpc.param "w1" normal {std = 2.0e-01 : f64} : tensor<3x4x5xf32>
  %w2 = lpc.param "w2" normal {std = 2.0e-01 : f64} : tensor<3x4x5xf32>
  %t = lpc.input "t" targets : tensor<6x4xf32>
  %h = lpc.grouped_matmul %x, %w1, %g : tensor<6x4xf32>, tensor<3x4x5xf32>, tensor<6xi32> -> tensor<6x5xf32>
  %a = lpc.relu %h : tensor<6x5xf32>
  %y = lpc.grouped_matmul %a, %w2, %g {transpose_b} : tensor<6x5xf32>, tensor<3x4x5xf32>, tensor<6xi32> -> tensor<6x4xf32>
  %l = lpc.mse_loss %y, %t : tensor<6x4xf32>
  return %l : tensor<f32>
}
