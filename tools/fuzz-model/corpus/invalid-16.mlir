// The defaults are low = -1, high = 1: a low of 2 alone is an empty range.
func.func @param_uniform_low_above_default_high() {
  // expected-error @+1 {{'lpc.param' op 'uniform' initializer needs low < high, got [2.000000e+00, 1.000000e+00)}}
  %0 = lpc.param "w" uniform {low = 2.0 : f64} : tensor<4xf32>
  return
}
