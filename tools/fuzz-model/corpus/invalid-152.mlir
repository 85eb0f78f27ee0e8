func.func @adamw_weight_decay(%p: tensor<4xf32>, %lr: tensor<f32>, %t: tensor<i64>) {
  // expected-error @+1 {{'lpc.adamw' op weight_decay must be >= 0}}
  %0:3 = lpc.adamw %p, %p, %p, %p step(%t : tensor<i64>) lr(%lr) {weight_decay = -0.01 : f64} : tensor<4xf32>
  return
}
