func.func @attention_scale(%q: tensor<4x8xf32>) {
  // expected-error @+1 {{'lpc.attention' op scale must be finite}}
  %o, %l = lpc.attention %q, %q, %q {scale = 0x7FF0000000000000 : f64} : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>, tensor<4xf32>
  return
}
