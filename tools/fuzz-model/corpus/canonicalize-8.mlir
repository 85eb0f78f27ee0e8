// Two scales by -1 cancel (through neg(neg x)).
func.func @scale_minus_one_twice(%x: tensor<4xf8E4M3FN>) -> tensor<4xf8E4M3FN> {
  %0 = lpc.scale %x {factor = -1.0 : f64} : tensor<4xf8E4M3FN>
  %1 = lpc.scale %0 {factor = -1.0 : f64} : tensor<4xf8E4M3FN>
  return %1 : tensor<4xf8E4M3FN>
}
