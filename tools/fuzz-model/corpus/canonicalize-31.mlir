// f32 -> f16 -> bf16 stays: both casts round (and f16 overflows earlier).
func.func @cast_f32_f16_bf16(%x: tensor<4xf32>) -> tensor<4xbf16> {
  %0 = lpc.cast %x : tensor<4xf32> to tensor<4xf16>
  %1 = lpc.cast %0 : tensor<4xf16> to tensor<4xbf16>
  return %1 : tensor<4xbf16>
}
