// ODS type constraint: the loss is a 0-d f32 tensor.
func.func @sce_loss_type(%l: tensor<16x10xf32>, %y: tensor<16xi32>) {
  // expected-error @+1 {{'lpc.softmax_cross_entropy' op result #0 must be 0D tensor of 32-bit float values, but got 'tensor<16xf32>'}}
  %0 = "lpc.softmax_cross_entropy"(%l, %y) : (tensor<16x10xf32>, tensor<16xi32>) -> tensor<16xf32>
  return
}
