// A cast into f8E4M3FN (no inf) is never exact, even from an fp8 type
// whose finite values it holds: inf from f8E5M2 would become NaN. Nor is
// f8E4M3FN -> f8E5M2 exact (E5M2 has one mantissa bit fewer).
func.func @cast_fp8_not_exact(%x: tensor<4xf8E5M2>, %y: tensor<4xf8E4M3FN>) -> (tensor<4xf32>, tensor<4xf8E4M3FN>) {
  %0 = lpc.cast %x : tensor<4xf8E5M2> to tensor<4xf8E4M3FN>
  %1 = lpc.cast %0 : tensor<4xf8E4M3FN> to tensor<4xf32>
  %2 = lpc.cast %y : tensor<4xf8E4M3FN> to tensor<4xf8E5M2>
  %3 = lpc.cast %2 : tensor<4xf8E5M2> to tensor<4xf8E4M3FN>
  return %1, %3 : tensor<4xf32>, tensor<4xf8E4M3FN>
}
