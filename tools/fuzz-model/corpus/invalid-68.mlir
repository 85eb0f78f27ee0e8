func.func @layernorm_epsilon(%a: tensor<4x8xf32>, %g: tensor<8xf32>) {
  // expected-error @+1 {{'lpc.layernorm' op epsilon must be positive, got 0.000000e+00}}
  %0 = lpc.layernorm %a, %g, %g {epsilon = 0.0 : f64} : tensor<4x8xf32>, tensor<8xf32>
  return
}
