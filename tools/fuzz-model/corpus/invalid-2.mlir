func.func @param_mean_not_normal() {
  // expected-error @+1 {{'lpc.param' op attribute 'mean' only applies to normal initializers, not 'uniform'}}
  %0 = lpc.param "w" uniform {mean = 0.1 : f64} : tensor<4xf32>
  return
}
