//===----------------------------------------------------------------------===//
// Normalization and softmax
//===----------------------------------------------------------------------===//

func.func @layernorm_scalar(%a: tensor<f32>, %g: tensor<1xf32>) {
  // expected-error @+1 {{'lpc.layernorm' op input must have rank >= 1, got 'tensor<f32>'}}
  %0 = lpc.layernorm %a, %g, %g : tensor<f32>, tensor<1xf32>
  return
}
