// A chain of exact widenings becomes one cast.
func.func @cast_chain(%x: tensor<4xf8E5M2>) -> tensor<4xbf16> {
  %0 = lpc.cast %x : tensor<4xf8E5M2> to tensor<4xf16>
  %1 = lpc.cast %0 : tensor<4xf16> to tensor<4xf32>
  %2 = lpc.cast %1 : tensor<4xf32> to tensor<4xbf16>
  return %2 : tensor<4xbf16>
}
