func.func @param_gain_not_fan() {
  // expected-error @+1 {{'lpc.param' op attribute 'gain' only applies to xavier/kaiming initializers, not 'normal'}}
  %0 = lpc.param "w" normal {gain = 2.0 : f64} : tensor<4x4xf32>
  return
}
