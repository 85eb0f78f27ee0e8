func.func @bias_add_scalar(%a: tensor<f32>, %b: tensor<1xf32>) {
  // expected-error @+1 {{'lpc.bias_add' op input must have rank >= 1, got 'tensor<f32>'}}
  %0 = lpc.bias_add %a, %b : tensor<f32>, tensor<1xf32>
  return
}
