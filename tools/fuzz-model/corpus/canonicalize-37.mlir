// A saturating narrowing cast followed by a widening one stays: the first
// cast rounds and clamps.
func.func @cast_saturate_roundtrip(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = lpc.cast %x {saturate} : tensor<4xf32> to tensor<4xf8E4M3FN>
  %1 = lpc.cast %0 : tensor<4xf8E4M3FN> to tensor<4xf32>
  return %1 : tensor<4xf32>
}
