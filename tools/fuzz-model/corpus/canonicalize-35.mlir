// f8E4M3FN -> bf16 and f8E5M2 -> f16 are exact.
func.func @cast_fp8_exact(%x: tensor<4xf8E4M3FN>, %y: tensor<4xf8E5M2>) -> (tensor<4xf8E4M3FN>, tensor<4xf32>, tensor<4xf8E5M2>) {
  %0 = lpc.cast %x : tensor<4xf8E4M3FN> to tensor<4xbf16>
  %1 = lpc.cast %0 : tensor<4xbf16> to tensor<4xf8E4M3FN>
  %2 = lpc.cast %x : tensor<4xf8E4M3FN> to tensor<4xbf16>
  %3 = lpc.cast %2 : tensor<4xbf16> to tensor<4xf32>
  %4 = lpc.cast %y : tensor<4xf8E5M2> to tensor<4xf16>
  %5 = lpc.cast %4 : tensor<4xf16> to tensor<4xf8E5M2>
  return %1, %3, %5 : tensor<4xf8E4M3FN>, tensor<4xf32>, tensor<4xf8E5M2>
}
