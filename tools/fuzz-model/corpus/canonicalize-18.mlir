// A chain of reshapes collapses into one.
func.func @reshape_chain(%x: tensor<2x3x4xf32>) -> tensor<8x3xf32> {
  %0 = lpc.reshape %x : tensor<2x3x4xf32> -> tensor<24xf32>
  %1 = lpc.reshape %0 : tensor<24xf32> -> tensor<4x6xf32>
  %2 = lpc.reshape %1 : tensor<4x6xf32> -> tensor<8x3xf32>
  return %2 : tensor<8x3xf32>
}
