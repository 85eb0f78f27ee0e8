func.func @attention_types(%q: tensor<4x8xf32>, %k: tensor<4x8xbf16>) {
  // expected-error @+1 {{'lpc.attention' op query, key and value must have the same element type}}
  %o, %l = lpc.attention %q, %k, %k : tensor<4x8xf32>, tensor<4x8xbf16>, tensor<4x8xbf16> -> tensor<4x8xf32>, tensor<4xf32>
  return
}
