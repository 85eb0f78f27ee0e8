// Unused pure ops are erased; constants stay when used.
func.func @dead_code(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = lpc.exp %x : tensor<4xf32>
  %1 = lpc.constant dense<1.0> : tensor<4xf32>
  %2 = lpc.constant dense<2.0> : tensor<4xf32>
  return %2 : tensor<4xf32>
}
