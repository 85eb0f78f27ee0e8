// Running it again, with any options, never scales twice.
//
// After the FP16 precision passes, on the example MLP (AdamW; SGD with
// momentum and clipping): grads arrive through lpc.cast and are unscaled in
// f32; the output verifies (lpc-opt verifies after each pass).

// AdamW train step of a linear layer with a scalar parameter %t (as built
// by lpc-autodiff), next to its forward function.

// The forward function has no seed and no optimizer: unchanged.

// The loss is not scaled, only the seed of the backward pass.
// Each gradient is unscaled right before its optimizer op.
// All unscaled gradients are checked.
// Every optimizer result keeps its old value when a gradient is not finite.
// A 0-d state needs no broadcast.
// The step counter advances only when the update is applied.
// Default GradScaler factors (elided defaults: 2.0, 0.5, 2000).


// Static: a constant scale, no state, no check, no skipping, no metric.



func.func @linear() -> tensor<f32> {
  %x = lpc.input "x" features : tensor<2x4xf32>
  %y = lpc.input "y" labels : tensor<2xi32>
  %w = lpc.param "w" xavier_uniform : tensor<4x3xf32>
  %b = lpc.param "b" zeros : tensor<3xf32>
  %t = lpc.param "t" constant {value = 1.0 : f64} : tensor<f32>
  %h = lpc.matmul %x, %w : tensor<2x4xf32>, tensor<4x3xf32> -> tensor<2x3xf32>
  %z = lpc.bias_add %h, %b : tensor<2x3xf32>, tensor<3xf32>
  %tb = lpc.broadcast %t dims = [] : tensor<f32> -> tensor<2x3xf32>
  %s = lpc.mul %z, %tb : tensor<2x3xf32>
  %l = lpc.softmax_cross_entropy %s, %y : tensor<2x3xf32>, tensor<2xi32>
  return %l : tensor<f32>
}
func.func @linear_train_step(%arg0: tensor<4x3xf32> {lpc.name = "w", lpc.state = "param"}, %arg1: tensor<3xf32> {lpc.name = "b", lpc.state = "param"}, %arg2: tensor<f32> {lpc.name = "t", lpc.state = "param"}, %arg3: tensor<4x3xf32> {lpc.name = "w", lpc.state = "exp_avg"}, %arg4: tensor<3xf32> {lpc.name = "b", lpc.state = "exp_avg"}, %arg5: tensor<f32> {lpc.name = "t", lpc.state = "exp_avg"}, %arg6: tensor<4x3xf32> {lpc.name = "w", lpc.state = "exp_avg_sq"}, %arg7: tensor<3xf32> {lpc.name = "b", lpc.state = "exp_avg_sq"}, %arg8: tensor<f32> {lpc.name = "t", lpc.state = "exp_avg_sq"}, %arg9: tensor<i64> {lpc.state = "step"}, %arg10: tensor<2x4xf32> {lpc.input = "x"}, %arg11: tensor<2xi32> {lpc.input = "y"})
    -> (tensor<4x3xf32> {lpc.name = "w", lpc.state = "param"}, tensor<3xf32> {lpc.name = "b", lpc.state = "param"}, tensor<f32> {lpc.name = "t", lpc.state = "param"}, tensor<4x3xf32> {lpc.name = "w", lpc.state = "exp_avg"}, tensor<3xf32> {lpc.name = "b", lpc.state = "exp_avg"}, tensor<f32> {lpc.name = "t", lpc.state = "exp_avg"}, tensor<4x3xf32> {lpc.name = "w", lpc.state = "exp_avg_sq"}, tensor<3xf32> {lpc.name = "b", lpc.state = "exp_avg_sq"}, tensor<f32> {lpc.name = "t", lpc.state = "exp_avg_sq"}, tensor<i64> {lpc.state = "step"}, tensor<f32> {lpc.metric = "loss"}) {
  %0 = lpc.matmul %arg10, %arg0 {role = #lpc.role<fprop>} : tensor<2x4xf32>, tensor<4x3xf32> -> tensor<2x3xf32>
  %1 = lpc.bias_add %0, %arg1 : tensor<2x3xf32>, tensor<3xf32>
  %2 = lpc.broadcast %arg2 dims = [] : tensor<f32> -> tensor<2x3xf32>
  %3 = lpc.mul %1, %2 : tensor<2x3xf32>
  %4 = lpc.softmax_cross_entropy %3, %arg11 : tensor<2x3xf32>, tensor<2xi32>
  %5 = lpc.grad_seed : tensor<f32>
  %6 = lpc.softmax_cross_entropy_grad %5, %3, %arg11 : tensor<2x3xf32>, tensor<2xi32>
  %7 = lpc.mul %6, %2 : tensor<2x3xf32>
  %8 = lpc.mul %6, %1 : tensor<2x3xf32>
  %9 = lpc.reduce_sum %8 {axes = array<i64: 0, 1>} : tensor<2x3xf32> -> tensor<f32>
  %10 = lpc.reduce_sum %7 {axes = array<i64: 0>} : tensor<2x3xf32> -> tensor<3xf32>
  %11 = lpc.matmul %arg10, %7 {role = #lpc.role<wgrad>, transpose_a} : tensor<2x4xf32>, tensor<2x3xf32> -> tensor<4x3xf32>
  %12 = lpc.constant dense<1> : tensor<i64>
  %13 = lpc.add %arg9, %12 : tensor<i64>
  %14 = lpc.constant dense<1.000000e-03> : tensor<f32>
  %new_param, %new_exp_avg, %new_exp_avg_sq = lpc.adamw %arg0, %11, %arg3, %arg6 step(%13 : tensor<i64>) lr(%14) : tensor<4x3xf32>
  %new_param_0, %new_exp_avg_1, %new_exp_avg_sq_2 = lpc.adamw %arg1, %10, %arg4, %arg7 step(%13 : tensor<i64>) lr(%14) : tensor<3xf32>
  %new_param_3, %new_exp_avg_4, %new_exp_avg_sq_5 = lpc.adamw %arg2, %9, %arg5, %arg8 step(%13 : tensor<i64>) lr(%14) : tensor<f32>
  return %new_param, %new_param_0, %new_param_3, %new_exp_avg, %new_exp_avg_1, %new_exp_avg_4, %new_exp_avg_sq, %new_exp_avg_sq_2, %new_exp_avg_sq_5, %13, %4 : tensor<4x3xf32>, tensor<3xf32>, tensor<f32>, tensor<4x3xf32>, tensor<3xf32>, tensor<f32>, tensor<4x3xf32>, tensor<3xf32>, tensor<f32>, tensor<i64>, tensor<f32>
}
