func.func @add_bool(%a: tensor<4xi1>) {
  // expected-error @+1 {{'lpc.add' op operand #0 must be ranked tensor of 32-bit float or 16-bit float or bfloat16 type or f8E4M3FN type or f8E5M2 type or 32-bit signless integer or 64-bit signless integer values, but got 'tensor<4xi1>'}}
  %0 = lpc.add %a, %a : tensor<4xi1>
  return
}
