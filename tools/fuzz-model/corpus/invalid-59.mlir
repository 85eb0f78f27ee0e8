func.func @bias_add_size(%a: tensor<4x8xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{'lpc.bias_add' op bias must be rank 1 with the input's last dimension (8), got 'tensor<4xf32>'}}
  %0 = lpc.bias_add %a, %b : tensor<4x8xf32>, tensor<4xf32>
  return
}
