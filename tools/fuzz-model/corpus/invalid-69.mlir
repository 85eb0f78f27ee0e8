func.func @rmsnorm_scalar(%a: tensor<f32>, %g: tensor<1xf32>) {
  // expected-error @+1 {{'lpc.rmsnorm' op input must have rank >= 1, got 'tensor<f32>'}}
  %0 = lpc.rmsnorm %a, %g : tensor<f32>, tensor<1xf32>
  return
}
