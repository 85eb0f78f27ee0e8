// ODS type constraint: indices are integers.
func.func @embedding_float_indices(%t: tensor<100x8xf32>, %i: tensor<4xf32>) {
  // expected-error @+1 {{'lpc.embedding' op operand #1 must be ranked tensor of 32-bit signless integer or 64-bit signless integer values, but got 'tensor<4xf32>'}}
  %0 = lpc.embedding %t, %i : tensor<100x8xf32>, tensor<4xf32> -> tensor<4x8xf32>
  return
}
