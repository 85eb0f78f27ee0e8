func.func @param_uniform_empty_range() {
  // expected-error @+1 {{'lpc.param' op 'uniform' initializer needs low < high, got [5.000000e-01, 5.000000e-01)}}
  %0 = lpc.param "w" uniform {low = 0.5 : f64, high = 0.5 : f64} : tensor<4xf32>
  return
}
