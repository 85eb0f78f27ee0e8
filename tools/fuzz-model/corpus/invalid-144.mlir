func.func @sgd_weight_decay(%p: tensor<4xf32>, %lr: tensor<f32>) {
  // expected-error @+1 {{'lpc.sgd' op weight_decay must be >= 0}}
  %0:2 = lpc.sgd %p, %p, %p lr(%lr) {weight_decay = -1.0e-4 : f64} : tensor<4xf32>
  return
}
