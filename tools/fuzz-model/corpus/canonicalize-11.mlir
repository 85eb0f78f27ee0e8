// scale by 0 is not folded to zeros: 0 * inf and 0 * NaN are NaN, and
// 0 * -x is -0.
func.func @scale_zero(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = lpc.scale %x {factor = 0.0 : f64} : tensor<4xf32>
  return %0 : tensor<4xf32>
}
