// ODS type constraint: labels with a float type.
func.func @sce_float_labels(%l: tensor<16x10xf32>, %y: tensor<16xf32>) {
  // expected-error @+1 {{'lpc.softmax_cross_entropy' op operand #1 must be ranked tensor of 32-bit signless integer or 64-bit signless integer values, but got 'tensor<16xf32>'}}
  %0 = lpc.softmax_cross_entropy %l, %y : tensor<16x10xf32>, tensor<16xf32>
  return
}
