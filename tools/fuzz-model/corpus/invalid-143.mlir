func.func @sgd_dampening(%p: tensor<4xf32>, %lr: tensor<f32>) {
  // expected-error @+1 {{'lpc.sgd' op dampening must be in [0, 1], got -1.000000e-01}}
  %0:2 = lpc.sgd %p, %p, %p lr(%lr) {dampening = -0.1 : f64} : tensor<4xf32>
  return
}
