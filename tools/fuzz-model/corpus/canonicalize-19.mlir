// reshape there and back is x.
func.func @reshape_roundtrip(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = lpc.reshape %x : tensor<2x3xf32> -> tensor<6xf32>
  %1 = lpc.reshape %0 : tensor<6xf32> -> tensor<2x3xf32>
  return %1 : tensor<2x3xf32>
}
