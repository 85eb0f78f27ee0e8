func.func @param_gain_inf() {
  // expected-error @+1 {{'lpc.param' op 'gain' must be finite, got INF}}
  %0 = lpc.param "w" xavier_normal {gain = 0x7FF0000000000000 : f64} : tensor<4x4xf32>
  return
}
