func.func @reshape_same_type(%x: tensor<2x3xi32>) -> tensor<2x3xi32> {
  %0 = lpc.reshape %x : tensor<2x3xi32> -> tensor<2x3xi32>
  return %0 : tensor<2x3xi32>
}
