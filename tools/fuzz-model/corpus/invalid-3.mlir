func.func @param_low_not_uniform() {
  // expected-error @+1 {{'lpc.param' op attribute 'low' only applies to uniform initializers, not 'normal'}}
  %0 = lpc.param "w" normal {low = 0.0 : f64} : tensor<4xf32>
  return
}
