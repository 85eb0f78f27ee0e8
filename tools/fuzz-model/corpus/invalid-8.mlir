func.func @param_std_zero() {
  // expected-error @+1 {{'lpc.param' op 'std' must be positive, got 0.000000e+00}}
  %0 = lpc.param "w" normal {std = 0.0 : f64} : tensor<4xf32>
  return
}
