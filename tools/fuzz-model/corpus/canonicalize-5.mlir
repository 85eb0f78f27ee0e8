func.func @scale_one(%x: tensor<2x3xf16>) -> tensor<2x3xf16> {
  %0 = lpc.scale %x {factor = 1.0 : f64} : tensor<2x3xf16>
  return %0 : tensor<2x3xf16>
}
