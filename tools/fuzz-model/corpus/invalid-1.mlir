func.func @param_std_not_normal() {
  // expected-error @+1 {{'lpc.param' op attribute 'std' only applies to normal initializers, not 'zeros'}}
  %0 = lpc.param "w" zeros {std = 0.1 : f64} : tensor<4xf32>
  return
}
