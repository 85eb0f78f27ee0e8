func.func @attention_head_dim(%q: tensor<4x8xf32>, %k: tensor<4x6xf32>) {
  // expected-error @+1 {{'lpc.attention' op query and key must have the same last dim (D)}}
  %o, %l = lpc.attention %q, %k, %k : tensor<4x8xf32>, tensor<4x6xf32>, tensor<4x6xf32> -> tensor<4x6xf32>, tensor<4xf32>
  return
}
