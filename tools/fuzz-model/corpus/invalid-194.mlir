func.func @all_reduce_bf16(%g: tensor<4x8xbf16>) {
  // expected-error @+1 {{'lpc.all_reduce' op operand #0 must be ranked tensor of 32-bit float values}}
  %0 = lpc.all_reduce %g sum : tensor<4x8xbf16> -> tensor<4x8xbf16>
  return
}
