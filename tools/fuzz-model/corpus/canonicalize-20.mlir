// The inner reshape stays when it has another use.
func.func @reshape_reshape_multi_use(%x: tensor<2x3xf32>) -> (tensor<6xf32>, tensor<3x2xf32>) {
  %0 = lpc.reshape %x : tensor<2x3xf32> -> tensor<6xf32>
  %1 = lpc.reshape %0 : tensor<6xf32> -> tensor<3x2xf32>
  return %0, %1 : tensor<6xf32>, tensor<3x2xf32>
}
