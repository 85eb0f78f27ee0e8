// Folds keep the precision pin of the surviving op.
func.func @fold_keeps_pin(%x: tensor<2x3x4xf32>) -> tensor<4x3x2xf32> {
  %0 = lpc.transpose %x [1, 2, 0] : tensor<2x3x4xf32> -> tensor<3x4x2xf32>
  %1 = lpc.transpose %0 [1, 0, 2] {lpc.precision = #lpc.precision<bf16>} : tensor<3x4x2xf32> -> tensor<4x3x2xf32>
  return %1 : tensor<4x3x2xf32>
}
