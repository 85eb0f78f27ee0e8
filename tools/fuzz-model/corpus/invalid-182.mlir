func.func @attention_fp8(%q: tensor<4x8xf8E4M3FN>) {
  // expected-error @+1 {{'lpc.attention' op FP8 attention is not supported}}
  %o, %l = lpc.attention %q, %q, %q : tensor<4x8xf8E4M3FN>, tensor<4x8xf8E4M3FN>, tensor<4x8xf8E4M3FN> -> tensor<4x8xf8E4M3FN>, tensor<4xf32>
  return
}
