func.func @param_gain_negative() {
  // expected-error @+1 {{'lpc.param' op 'gain' must be positive, got -1.000000e+00}}
  %0 = lpc.param "w" kaiming_normal {gain = -1.0 : f64} : tensor<4x4xf32>
  return
}
