func.func @adamw_beta2(%p: tensor<4xf32>, %lr: tensor<f32>, %t: tensor<i64>) {
  // expected-error @+1 {{'lpc.adamw' op beta2 must be in [0, 1), got -5.000000e-01}}
  %0:3 = lpc.adamw %p, %p, %p, %p step(%t : tensor<i64>) lr(%lr) {beta2 = -0.5 : f64} : tensor<4xf32>
  return
}
