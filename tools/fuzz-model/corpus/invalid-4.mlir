func.func @param_high_not_uniform() {
  // expected-error @+1 {{'lpc.param' op attribute 'high' only applies to uniform initializers, not 'xavier_uniform'}}
  %0 = lpc.param "w" xavier_uniform {high = 1.0 : f64} : tensor<4x4xf32>
  return
}
