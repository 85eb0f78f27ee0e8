// scale(x, -1) -> neg(x) keeps the user's precision pin.
func.func @scale_minus_one_keeps_pin(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = lpc.scale %x {factor = -1.0 : f64, lpc.precision = #lpc.precision<fp32>} : tensor<4xf32>
  return %0 : tensor<4xf32>
}
