func.func @clip_max_norm(%g: tensor<4xf32>) {
  // expected-error @+1 {{'lpc.clip_by_global_norm' op max_norm must be positive, got 0.000000e+00}}
  %0:2 = lpc.clip_by_global_norm %g {max_norm = 0.0 : f64} : tensor<4xf32>
  return
}
