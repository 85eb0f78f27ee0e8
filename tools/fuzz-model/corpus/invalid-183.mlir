func.func @attention_batch(%q: tensor<2x4x8xf32>, %k: tensor<3x4x8xf32>) {
  // expected-error @+1 {{'lpc.attention' op query, key and value must have the same leading (batch) dims}}
  %o, %l = lpc.attention %q, %k, %k : tensor<2x4x8xf32>, tensor<3x4x8xf32>, tensor<3x4x8xf32> -> tensor<2x4x8xf32>, tensor<2x4xf32>
  return
}
