func.func @scaled_matmul_result_shape(%a: tensor<4x8xf8E4M3FN>, %b: tensor<8x16xf8E4M3FN>, %s: tensor<f32>) {
  // expected-error @+1 {{'lpc.scaled_matmul' op result shape tensor<4x8xbf16> does not match the product shape 'tensor<4x16xbf16>'}}
  %0 = lpc.scaled_matmul %a, %b scales(%s, %s) : tensor<4x8xf8E4M3FN>, tensor<8x16xf8E4M3FN> -> tensor<4x8xbf16>
  return
}
