func.func @param_value_not_constant() {
  // expected-error @+1 {{'lpc.param' op attribute 'value' only applies to constant initializers, not 'ones'}}
  %0 = lpc.param "w" ones {value = 1.0 : f64} : tensor<4xf32>
  return
}
