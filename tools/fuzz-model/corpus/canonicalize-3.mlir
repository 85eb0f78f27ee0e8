func.func @pow_one(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = lpc.pow %x {exponent = 1.0 : f64} : tensor<4xf32>
  return %0 : tensor<4xf32>
}
