// scale by -2 is not a negation.
func.func @scale_minus_two(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = lpc.scale %x {factor = -2.0 : f64} : tensor<4xf32>
  return %0 : tensor<4xf32>
}
