func.func @adamw_eps(%p: tensor<4xf32>, %lr: tensor<f32>, %t: tensor<i64>) {
  // expected-error @+1 {{'lpc.adamw' op eps must be positive}}
  %0:3 = lpc.adamw %p, %p, %p, %p step(%t : tensor<i64>) lr(%lr) {eps = 0.0 : f64} : tensor<4xf32>
  return
}
