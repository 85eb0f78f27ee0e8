// RUN: lpc-opt %s -lpc-autodiff="eval=true optimizer=sgd" | FileCheck %s

// Buffers (state that is not trained: BatchNorm's running statistics and
// batch counter). The train step takes each lpc.buffer as a state argument
// with its initial value, uses the train side of lpc.train_or_eval, and
// returns each lpc.buffer_update's value (not differentiated); a buffer
// without an update is read only. The eval function reads the buffers,
// takes the eval side and updates nothing.

// CHECK-LABEL: func.func @net_eval(
// CHECK-SAME: {lpc.name = "w", lpc.state = "param"}
// CHECK-SAME: %{{[^:]*}}: tensor<3xf32> {lpc.init = 0.000000e+00 : f64, lpc.name = "mean", lpc.state = "buffer"}
// CHECK-SAME: %{{[^:]*}}: tensor<i32> {lpc.init = 5.000000e+00 : f64, lpc.name = "count", lpc.state = "buffer"}
// CHECK-SAME: %{{[^:]*}}: tensor<3xf32> {lpc.init = 1.000000e+00 : f64, lpc.name = "fixed", lpc.state = "buffer"}
// CHECK-NOT: lpc.reduce_mean
// CHECK-NOT: lpc.train_or_eval
// CHECK-NOT: lpc.buffer
// CHECK: return

// CHECK-LABEL: func.func @net_train_step(
// CHECK-SAME: %[[W:[^:]*]]: tensor<4x3xf32> {lpc.name = "w", lpc.state = "param"}
// CHECK-SAME: %[[MB:[^:]*]]: tensor<4x3xf32> {lpc.name = "w", lpc.state = "momentum_buffer"}
// CHECK-SAME: %[[MEAN:[^:]*]]: tensor<3xf32> {lpc.init = 0.000000e+00 : f64, lpc.name = "mean", lpc.state = "buffer"}
// CHECK-SAME: %[[COUNT:[^:]*]]: tensor<i32> {lpc.init = 5.000000e+00 : f64, lpc.name = "count", lpc.state = "buffer"}
// CHECK-SAME: %[[FIXED:[^:]*]]: tensor<3xf32> {lpc.init = 1.000000e+00 : f64, lpc.name = "fixed", lpc.state = "buffer"}
// CHECK-SAME: %{{[^:]*}}: tensor<i64> {lpc.state = "step"}
// CHECK-SAME: -> (tensor<4x3xf32> {lpc.name = "w", lpc.state = "param"}, tensor<4x3xf32> {lpc.name = "w", lpc.state = "momentum_buffer"}, tensor<3xf32> {lpc.name = "mean", lpc.state = "buffer"}, tensor<i32> {lpc.name = "count", lpc.state = "buffer"}, tensor<i64> {lpc.state = "step"}, tensor<f32> {lpc.metric = "loss"})
// The train side only: the eval side's use of the fixed buffer is gone.
// CHECK-NOT: %[[FIXED]]
// CHECK-NOT: lpc.train_or_eval
// CHECK: %[[BM:.*]] = lpc.reduce_mean
// CHECK: %[[NEWMEAN:.*]] = lpc.add %{{.*}}, %[[BM]] : tensor<3xf32>
// CHECK: %[[NEWCOUNT:.*]] = lpc.add %[[COUNT]], %{{.*}} : tensor<i32>
// CHECK: lpc.sgd
// CHECK: return %{{.*}}, %{{.*}}, %[[NEWMEAN]], %[[NEWCOUNT]], %{{.*}}, %{{.*}} :
func.func @net() -> tensor<f32> {
  %x = lpc.input "x" features : tensor<2x4xf32>
  %y = lpc.input "y" labels : tensor<2xi32>
  %w = lpc.param "w" xavier_uniform : tensor<4x3xf32>
  %mean = lpc.buffer "mean" : tensor<3xf32>
  %count = lpc.buffer "count" {value = 5.0 : f64} : tensor<i32>
  %fixed = lpc.buffer "fixed" {value = 1.0 : f64} : tensor<3xf32>
  %h = lpc.matmul %x, %w : tensor<2x4xf32>, tensor<4x3xf32> -> tensor<2x3xf32>
  %bm = lpc.reduce_mean %h {axes = array<i64: 0>} : tensor<2x3xf32> -> tensor<3xf32>
  %bmb = lpc.broadcast %bm dims = [1] : tensor<3xf32> -> tensor<2x3xf32>
  %centered = lpc.sub %h, %bmb : tensor<2x3xf32>
  %fb = lpc.broadcast %fixed dims = [1] : tensor<3xf32> -> tensor<2x3xf32>
  %byfixed = lpc.sub %h, %fb : tensor<2x3xf32>
  %z = lpc.train_or_eval %centered, %byfixed : tensor<2x3xf32>
  %l = lpc.softmax_cross_entropy %z, %y : tensor<2x3xf32>, tensor<2xi32>
  %kept = lpc.scale %mean {factor = 0.5 : f64} : tensor<3xf32>
  %newmean = lpc.add %kept, %bm : tensor<3xf32>
  %one = lpc.constant dense<1> : tensor<i32>
  %newcount = lpc.add %count, %one : tensor<i32>
  lpc.buffer_update "mean", %newmean : tensor<3xf32>
  lpc.buffer_update "count", %newcount : tensor<i32>
  return %l : tensor<f32>
}
