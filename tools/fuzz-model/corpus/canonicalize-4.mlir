// pow by 2 (or by 1 + tiny) is not the identity.
func.func @pow_not_one(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = lpc.pow %x {exponent = 2.0 : f64} : tensor<4xf32>
  %1 = lpc.pow %0 {exponent = 1.0000000000000002 : f64} : tensor<4xf32>
  return %1 : tensor<4xf32>
}
