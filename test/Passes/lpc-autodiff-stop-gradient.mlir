// RUN: lpc-opt %s -lpc-autodiff="eval=true" 2>&1 | FileCheck %s

// lpc.stop_gradient (x.detach(), a torch.no_grad() block): the forward uses
// its input, the backward sends nothing through it, and neither function
// keeps the op. Here loss = mse(h * stop(h), t) with h = x w, so
// dloss/dh = g * h (one product; without the stop it would be two, g * h
// + h * g), and 'v' reaches the loss only through the stop.

// CHECK: warning: lpc-autodiff: parameter 'v' gets no gradient (it reaches the loss only through lpc.stop_gradient, or not at all); its gradient is zero
// CHECK-LABEL: func.func @net_eval(
// CHECK-NOT: lpc.stop_gradient
// CHECK: return
// CHECK-LABEL: func.func @net_train_step(
// CHECK-NOT: lpc.stop_gradient
// CHECK: %[[H:.*]] = lpc.matmul
// CHECK: %[[P:.*]] = lpc.mul %[[H]], %[[H]] : tensor<2x3xf32>
// CHECK: %[[G:.*]] = lpc.mse_loss_grad
// CHECK-NEXT: %[[GH:.*]] = lpc.mul %[[G]], %[[H]] : tensor<2x3xf32>
// CHECK-NOT: lpc.add %{{.*}} : tensor<2x3xf32>
// CHECK: lpc.matmul %{{.*}}, %[[GH]] {{.*}}-> tensor<4x3xf32>
// CHECK-NOT: lpc.stop_gradient
// CHECK: return
func.func @net() -> tensor<f32> {
  %x = lpc.input "x" features : tensor<2x4xf32>
  %t = lpc.input "t" targets : tensor<2x3xf32>
  %w = lpc.param "w" xavier_uniform : tensor<4x3xf32>
  %v = lpc.param "v" ones : tensor<2x3xf32>
  %h = lpc.matmul %x, %w : tensor<2x4xf32>, tensor<4x3xf32> -> tensor<2x3xf32>
  %s = lpc.stop_gradient %h : tensor<2x3xf32>
  %p = lpc.mul %h, %s : tensor<2x3xf32>
  %sv = lpc.stop_gradient %v : tensor<2x3xf32>
  %q = lpc.add %p, %sv : tensor<2x3xf32>
  %l = lpc.mse_loss %q, %t : tensor<2x3xf32>
  return %l : tensor<f32>
}
