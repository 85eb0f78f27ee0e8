// f32 -> bf16 -> f32 must stay as two casts: the first one rounds.
func.func @cast_f32_bf16_f32(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = lpc.cast %x : tensor<4xf32> to tensor<4xbf16>
  %1 = lpc.cast %0 : tensor<4xbf16> to tensor<4xf32>
  return %1 : tensor<4xf32>
}
