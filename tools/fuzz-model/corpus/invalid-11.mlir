func.func @param_value_inf() {
  // expected-error @+1 {{'lpc.param' op 'value' must be finite, got INF}}
  %0 = lpc.param "w" constant {value = 0x7FF0000000000000 : f64} : tensor<4xf32>
  return
}
