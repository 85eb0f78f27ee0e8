// A train step without data inputs (the state goes last), and a
// gradient-only function (lpc-autodiff optimizer=none): it has no state, so
// its seed is scaled by a constant (init-scale, or static-scale) and its
// returned gradients are unscaled.




func.func @ridge_train_step(%arg0: tensor<8xf32> {lpc.name = "w", lpc.state = "param"}, %arg1: tensor<8xf32> {lpc.name = "w", lpc.state = "momentum_buffer"}, %arg2: tensor<i64> {lpc.state = "step"})
    -> (tensor<8xf32> {lpc.name = "w", lpc.state = "param"}, tensor<8xf32> {lpc.name = "w", lpc.state = "momentum_buffer"}, tensor<i64> {lpc.state = "step"}, tensor<f32> {lpc.metric = "loss"}) {
  %0 = lpc.pow %arg0 {exponent = 2.000000e+00 : f64} : tensor<8xf32>
  %1 = lpc.reduce_mean %0 {axes = array<i64: 0>} : tensor<8xf32> -> tensor<f32>
  %2 = lpc.grad_seed : tensor<f32>
  %3 = lpc.reshape %2 : tensor<f32> -> tensor<1xf32>
  %4 = lpc.broadcast %3 dims = [0] : tensor<1xf32> -> tensor<8xf32>
  %5 = lpc.scale %4 {factor = 1.250000e-01 : f64} : tensor<8xf32>
  %6 = lpc.scale %arg0 {factor = 2.000000e+00 : f64} : tensor<8xf32>
  %7 = lpc.mul %5, %6 : tensor<8xf32>
  %8 = lpc.constant dense<1> : tensor<i64>
  %9 = lpc.add %arg2, %8 : tensor<i64>
  %10 = lpc.constant dense<1.000000e-03> : tensor<f32>
  %new_param, %new_momentum_buffer = lpc.sgd %arg0, %7, %arg1 lr(%10) {weight_decay = 1.000000e-02 : f64} : tensor<8xf32>
  return %new_param, %new_momentum_buffer, %9, %1 : tensor<8xf32>, tensor<8xf32>, tensor<i64>, tensor<f32>
}
func.func @ridge_grad(%arg0: tensor<8xf32> {lpc.name = "w", lpc.state = "param"}) -> (tensor<f32> {lpc.metric = "loss"}, tensor<8xf32> {lpc.name = "w", lpc.state = "grad"}) {
  %0 = lpc.pow %arg0 {exponent = 2.000000e+00 : f64} : tensor<8xf32>
  %1 = lpc.reduce_mean %0 {axes = array<i64: 0>} : tensor<8xf32> -> tensor<f32>
  %2 = lpc.grad_seed : tensor<f32>
  %3 = lpc.reshape %2 : tensor<f32> -> tensor<1xf32>
  %4 = lpc.broadcast %3 dims = [0] : tensor<1xf32> -> tensor<8xf32>
  %5 = lpc.scale %4 {factor = 1.250000e-01 : f64} : tensor<8xf32>
  %6 = lpc.scale %arg0 {factor = 2.000000e+00 : f64} : tensor<8xf32>
  %7 = lpc.mul %5, %6 : tensor<8xf32>
  return %1, %7 : tensor<f32>, tensor<8xf32>
}
