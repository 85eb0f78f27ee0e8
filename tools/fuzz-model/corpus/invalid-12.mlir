func.func @param_uniform_infinite_range() {
  // expected-error @+1 {{'lpc.param' op 'low' must be finite, got -INF}}
  %0 = lpc.param "w" uniform {low = 0xFFF0000000000000 : f64, high = 0x7FF0000000000000 : f64} : tensor<4xf32>
  return
}
