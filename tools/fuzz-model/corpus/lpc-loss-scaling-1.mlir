// SGD with momentum and clipping, after the FP16 precision passes (grads in
// fp16 cast to f32), learning rate as an input: the clip's operands are
// unscaled (the norm and the clipping see true gradients), in f32 after
// the casts; the new state goes before the lr input.

// The optimizer reads the clipped (already unscaled) gradients.



func.func @sgd_clip_train_step(%arg0: tensor<4x3xf32> {lpc.name = "w", lpc.state = "param"}, %arg1: tensor<3xf32> {lpc.name = "b", lpc.state = "param"}, %arg2: tensor<4x3xf32> {lpc.name = "w", lpc.state = "momentum_buffer"}, %arg3: tensor<3xf32> {lpc.name = "b", lpc.state = "momentum_buffer"}, %arg4: tensor<i64> {lpc.state = "step"}, %arg5: tensor<f32> {lpc.input = "lr"}, %arg6: tensor<2x4xf32> {lpc.input = "x"}, %arg7: tensor<2xi32> {lpc.input = "y"})
    -> (tensor<4x3xf32> {lpc.name = "w", lpc.state = "param"}, tensor<3xf32> {lpc.name = "b", lpc.state = "param"}, tensor<4x3xf32> {lpc.name = "w", lpc.state = "momentum_buffer"}, tensor<3xf32> {lpc.name = "b", lpc.state = "momentum_buffer"}, tensor<i64> {lpc.state = "step"}, tensor<f32> {lpc.metric = "loss"}, tensor<f32> {lpc.metric = "grad_norm"}) {
  %0 = lpc.constant dense<1> : tensor<i64>
  %1 = lpc.grad_seed : tensor<f32>
  %2 = lpc.cast %arg1 : tensor<3xf32> to tensor<3xf16>
  %3 = lpc.cast %arg0 : tensor<4x3xf32> to tensor<4x3xf16>
  %4 = lpc.cast %arg6 : tensor<2x4xf32> to tensor<2x4xf16>
  %5 = lpc.matmul %4, %3 {lpc.assigned = #lpc.precision<fp16>, role = #lpc.role<fprop>} : tensor<2x4xf16>, tensor<4x3xf16> -> tensor<2x3xf16>
  %6 = lpc.bias_add %5, %2 {lpc.assigned = #lpc.precision<fp16>} : tensor<2x3xf16>, tensor<3xf16>
  %7 = lpc.cast %6 : tensor<2x3xf16> to tensor<2x3xf32>
  %8 = lpc.softmax_cross_entropy %7, %arg7 {lpc.assigned = #lpc.precision<fp32>} : tensor<2x3xf32>, tensor<2xi32>
  %9 = lpc.softmax_cross_entropy_grad %1, %7, %arg7 {lpc.assigned = #lpc.precision<fp32>} : tensor<2x3xf32>, tensor<2xi32>
  %10 = lpc.cast %9 : tensor<2x3xf32> to tensor<2x3xf16>
  %11 = lpc.reduce_sum %9 {axes = array<i64: 0>, lpc.assigned = #lpc.precision<fp32>} : tensor<2x3xf32> -> tensor<3xf32>
  %12 = lpc.matmul %4, %10 {lpc.assigned = #lpc.precision<fp16>, role = #lpc.role<wgrad>, transpose_a} : tensor<2x4xf16>, tensor<2x3xf16> -> tensor<4x3xf16>
  %13 = lpc.cast %12 : tensor<4x3xf16> to tensor<4x3xf32>
  %clipped:2, %norm = lpc.clip_by_global_norm %13, %11 {max_norm = 1.000000e+00 : f64} : tensor<4x3xf32>, tensor<3xf32>
  %14 = lpc.add %arg4, %0 : tensor<i64>
  %new_param, %new_momentum_buffer = lpc.sgd %arg0, %clipped#0, %arg2 lr(%arg5) {momentum = 9.000000e-01 : f64, weight_decay = 1.000000e-02 : f64} : tensor<4x3xf32>
  %new_param_0, %new_momentum_buffer_1 = lpc.sgd %arg1, %clipped#1, %arg3 lr(%arg5) {momentum = 9.000000e-01 : f64, weight_decay = 1.000000e-02 : f64} : tensor<3xf32>
  return %new_param, %new_param_0, %new_momentum_buffer, %new_momentum_buffer_1, %14, %8, %norm : tensor<4x3xf32>, tensor<3xf32>, tensor<4x3xf32>, tensor<3xf32>, tensor<i64>, tensor<f32>, tensor<f32>
}
