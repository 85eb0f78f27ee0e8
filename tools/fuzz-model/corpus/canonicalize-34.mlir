// f8E5M2 -> f32 is exact (inf and NaN included), so the chain becomes one
// cast, which keeps the outer cast's saturate.
func.func @cast_e5m2_f32_e4m3(%x: tensor<4xf8E5M2>) -> (tensor<4xf8E4M3FN>, tensor<4xf8E4M3FN>) {
  %0 = lpc.cast %x : tensor<4xf8E5M2> to tensor<4xf32>
  %1 = lpc.cast %0 : tensor<4xf32> to tensor<4xf8E4M3FN>
  %2 = lpc.cast %x : tensor<4xf8E5M2> to tensor<4xf32>
  %3 = lpc.cast %2 {saturate} : tensor<4xf32> to tensor<4xf8E4M3FN>
  return %1, %3 : tensor<4xf8E4M3FN>, tensor<4xf8E4M3FN>
}
