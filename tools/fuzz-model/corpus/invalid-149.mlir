func.func @adamw_beta1(%p: tensor<4xf32>, %lr: tensor<f32>, %t: tensor<i64>) {
  // expected-error @+1 {{'lpc.adamw' op beta1 must be in [0, 1), got 1.000000e+00}}
  %0:3 = lpc.adamw %p, %p, %p, %p step(%t : tensor<i64>) lr(%lr) {beta1 = 1.0 : f64} : tensor<4xf32>
  return
}
