// scale by -1 is exactly a negation.
func.func @scale_minus_one(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = lpc.scale %x {factor = -1.0 : f64} : tensor<4xf32>
  return %0 : tensor<4xf32>
}
