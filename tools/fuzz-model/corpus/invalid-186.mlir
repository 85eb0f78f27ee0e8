func.func @attention_result(%q: tensor<4x8xf32>, %v: tensor<4x3xf32>) {
  // expected-error @+1 {{'lpc.attention' op result must be 'tensor<4x3xf32>' ([batch..., Sq, Dv] of query's type), got 'tensor<4x8xf32>'}}
  %o, %l = lpc.attention %q, %q, %v : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x3xf32> -> tensor<4x8xf32>, tensor<4xf32>
  return
}
