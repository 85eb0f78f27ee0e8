// The inner cast stays when it has another use; the outer one still reads x.
func.func @cast_multi_use(%x: tensor<4xbf16>) -> (tensor<4xf32>, tensor<4xf16>) {
  %0 = lpc.cast %x : tensor<4xbf16> to tensor<4xf32>
  %1 = lpc.cast %0 : tensor<4xf32> to tensor<4xf16>
  return %0, %1 : tensor<4xf32>, tensor<4xf16>
}
