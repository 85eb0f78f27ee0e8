// scale(-1) then neg: the new neg folds with the existing one.
func.func @scale_minus_one_then_neg(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = lpc.scale %x {factor = -1.0 : f64} : tensor<4xf32>
  %1 = lpc.neg %0 : tensor<4xf32>
  return %1 : tensor<4xf32>
}
