//===----------------------------------------------------------------------===//
// Optimizer ops
//===----------------------------------------------------------------------===//

func.func @sgd_momentum(%p: tensor<4xf32>, %lr: tensor<f32>) {
  // expected-error @+1 {{'lpc.sgd' op momentum must be in [0, 1], got 1.500000e+00}}
  %0:2 = lpc.sgd %p, %p, %p lr(%lr) {momentum = 1.5 : f64} : tensor<4xf32>
  return
}
