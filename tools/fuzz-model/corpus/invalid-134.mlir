// ODS type constraint: casts are between float types.
func.func @cast_int(%a: tensor<4xi32>) {
  // expected-error @+1 {{'lpc.cast' op operand #0 must be ranked tensor of 32-bit float or 16-bit float or bfloat16 type or f8E4M3FN type or f8E5M2 type values, but got 'tensor<4xi32>'}}
  %0 = lpc.cast %a : tensor<4xi32> to tensor<4xf32>
  return
}
