// ODS type constraint: the condition is i1.
func.func @where_cond_type(%c: tensor<8xi32>, %a: tensor<8xf32>) {
  // expected-error @+1 {{'lpc.where' op operand #0 must be ranked tensor of 1-bit signless integer values, but got 'tensor<8xi32>'}}
  %0 = lpc.where %c, %a, %a : tensor<8xi32>, tensor<8xf32>
  return
}
