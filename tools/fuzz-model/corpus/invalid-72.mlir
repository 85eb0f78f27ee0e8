func.func @rmsnorm_epsilon(%a: tensor<4x8xf32>, %g: tensor<8xf32>) {
  // expected-error @+1 {{'lpc.rmsnorm' op epsilon must be positive, got -1.000000e-06}}
  %0 = lpc.rmsnorm %a, %g {epsilon = -1.0e-6 : f64} : tensor<4x8xf32>, tensor<8xf32>
  return
}
