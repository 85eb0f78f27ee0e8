func.func @attention_keys(%q: tensor<4x8xf32>, %k: tensor<5x8xf32>, %v: tensor<6x8xf32>) {
  // expected-error @+1 {{'lpc.attention' op key and value must have the same number of keys (dim 0)}}
  %o, %l = lpc.attention %q, %k, %v : tensor<4x8xf32>, tensor<5x8xf32>, tensor<6x8xf32> -> tensor<4x8xf32>, tensor<4xf32>
  return
}
