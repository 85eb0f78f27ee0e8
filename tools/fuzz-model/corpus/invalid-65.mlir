func.func @layernorm_gamma_size(%a: tensor<4x8xf32>, %g: tensor<4xf32>) {
  // expected-error @+1 {{'lpc.layernorm' op gamma must be rank 1 with the input's last dimension (8), got 'tensor<4xf32>'}}
  %0 = lpc.layernorm %a, %g, %g : tensor<4x8xf32>, tensor<4xf32>
  return
}
