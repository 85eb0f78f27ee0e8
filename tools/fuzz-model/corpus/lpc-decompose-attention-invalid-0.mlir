func.func @causal_more_queries(%q: tensor<6x8xf32>, %k: tensor<4x8xf32>) -> tensor<6x8xf32> {
  // expected-error @+1 {{lpc-decompose-attention: causal attention with more queries (6) than keys (4) leaves rows without a key; the unfused graph cannot express it}}
  %o, %l = lpc.attention %q, %k, %k {causal} : tensor<6x8xf32>, tensor<4x8xf32>, tensor<4x8xf32> -> tensor<6x8xf32>, tensor<6xf32>
  return %o : tensor<6x8xf32>
}
