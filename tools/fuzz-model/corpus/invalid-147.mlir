func.func @sgd_nesterov_dampening(%p: tensor<4xf32>, %lr: tensor<f32>) {
  // expected-error @+1 {{'lpc.sgd' op nesterov momentum needs momentum > 0 and zero dampening}}
  %0:2 = lpc.sgd %p, %p, %p lr(%lr) {momentum = 0.9 : f64, dampening = 0.1 : f64, nesterov} : tensor<4xf32>
  return
}
