func.func @no_rule() -> tensor<f32> {
  %w = lpc.param "w" ones : tensor<4xf32>
  // expected-error @+1 {{lpc-autodiff: no gradient rule for 'lpc.amax', which lies between a parameter and the loss}}
  %a = lpc.amax %w : tensor<4xf32>
  return %a : tensor<f32>
}
