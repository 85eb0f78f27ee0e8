func.func @bias_add_rank(%a: tensor<4x8xf32>, %b: tensor<1x8xf32>) {
  // expected-error @+1 {{'lpc.bias_add' op bias must be rank 1 with the input's last dimension (8), got 'tensor<1x8xf32>'}}
  %0 = lpc.bias_add %a, %b : tensor<4x8xf32>, tensor<1x8xf32>
  return
}
