func.func @attention_lse(%q: tensor<4x8xf32>) {
  // expected-error @+1 {{'lpc.attention' op lse must be 'tensor<4xf32>' ([batch..., Sq]), got 'tensor<8xf32>'}}
  %o, %l = lpc.attention %q, %q, %q : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>, tensor<8xf32>
  return
}
