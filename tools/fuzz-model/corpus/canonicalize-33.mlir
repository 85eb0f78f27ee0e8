// Widening there and back is x.
func.func @cast_widen_narrow(%x: tensor<4xf16>) -> tensor<4xf16> {
  %0 = lpc.cast %x : tensor<4xf16> to tensor<4xf32>
  %1 = lpc.cast %0 : tensor<4xf32> to tensor<4xf16>
  return %1 : tensor<4xf16>
}
