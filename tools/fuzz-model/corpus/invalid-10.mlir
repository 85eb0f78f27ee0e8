func.func @param_mean_nan() {
  // expected-error @+1 {{'lpc.param' op 'mean' must be finite, got nan}}
  %0 = lpc.param "w" normal {mean = 0x7FF8000000000000 : f64} : tensor<4xf32>
  return
}
