// ODS type constraint: integer operands.
func.func @matmul_int(%a: tensor<4x8xi32>, %b: tensor<8x16xi32>) {
  // expected-error @+1 {{'lpc.matmul' op operand #0 must be ranked tensor of 32-bit float or 16-bit float or bfloat16 type or f8E4M3FN type or f8E5M2 type values, but got 'tensor<4x8xi32>'}}
  %0 = lpc.matmul %a, %b : tensor<4x8xi32>, tensor<8x16xi32> -> tensor<4x16xi32>
  return
}
