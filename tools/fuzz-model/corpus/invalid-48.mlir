func.func @scaled_matmul_bias_size(%a: tensor<4x8xf8E4M3FN>, %b: tensor<8x16xf8E4M3FN>, %s: tensor<f32>, %bias: tensor<8xbf16>) {
  // expected-error @+1 {{'lpc.scaled_matmul' op bias must be rank 1 with the result's last dimension (16), got 'tensor<8xbf16>'}}
  %0 = lpc.scaled_matmul %a, %b scales(%s, %s) bias(%bias : tensor<8xbf16>) : tensor<4x8xf8E4M3FN>, tensor<8x16xf8E4M3FN> -> tensor<4x16xbf16>
  return
}
