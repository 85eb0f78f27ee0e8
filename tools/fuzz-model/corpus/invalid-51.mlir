// ODS type constraint: operands must be FP8.
func.func @scaled_matmul_not_fp8(%a: tensor<4x8xbf16>, %b: tensor<8x16xf8E4M3FN>, %s: tensor<f32>) {
  // expected-error @+1 {{'lpc.scaled_matmul' op operand #0 must be ranked tensor of f8E4M3FN type or f8E5M2 type values, but got 'tensor<4x8xbf16>'}}
  %0 = lpc.scaled_matmul %a, %b scales(%s, %s) : tensor<4x8xbf16>, tensor<8x16xf8E4M3FN> -> tensor<4x16xf32>
  return
}
