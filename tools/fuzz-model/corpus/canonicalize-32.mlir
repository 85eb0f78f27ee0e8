// bf16 -> f32 is exact, so bf16 -> f32 -> f16 is one cast bf16 -> f16.
func.func @cast_bf16_f32_f16(%x: tensor<4xbf16>) -> tensor<4xf16> {
  %0 = lpc.cast %x : tensor<4xbf16> to tensor<4xf32>
  %1 = lpc.cast %0 : tensor<4xf32> to tensor<4xf16>
  return %1 : tensor<4xf16>
}
