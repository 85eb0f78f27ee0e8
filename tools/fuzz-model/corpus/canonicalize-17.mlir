// reshape(reshape(x)) is one reshape from x.
func.func @reshape_reshape(%x: tensor<2x3x4xf32>) -> tensor<4x6xf32> {
  %0 = lpc.reshape %x : tensor<2x3x4xf32> -> tensor<24xf32>
  %1 = lpc.reshape %0 : tensor<24xf32> -> tensor<4x6xf32>
  return %1 : tensor<4x6xf32>
}
