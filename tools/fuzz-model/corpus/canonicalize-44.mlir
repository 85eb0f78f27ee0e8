// cast(reshape(x)) -> reshape(cast(x)) for a narrowing cast, so that CSE
// keeps one cast where x is also cast directly (the backward's weight-gradient
// GEMMs reshape saved activations that the forward already cast). The
// reshape's assigned precision follows its new element type; saturate stays
// on the cast. (The two casts of x are left to CSE.)
func.func @cast_of_reshape(%x: tensor<2x3x4xf32>) -> (tensor<2x3x4xbf16>, tensor<6x4xbf16>, tensor<24xf8E4M3FN>) {
  %0 = lpc.cast %x : tensor<2x3x4xf32> to tensor<2x3x4xbf16>
  %1 = lpc.reshape %x {lpc.assigned = #lpc.precision<fp32>, lpc.reason = "follow: an input is fp32"} : tensor<2x3x4xf32> -> tensor<6x4xf32>
  %2 = lpc.cast %1 : tensor<6x4xf32> to tensor<6x4xbf16>
  %3 = lpc.reshape %x : tensor<2x3x4xf32> -> tensor<24xf32>
  %4 = lpc.cast %3 {saturate} : tensor<24xf32> to tensor<24xf8E4M3FN>
  return %0, %2, %4 : tensor<2x3x4xbf16>, tensor<6x4xbf16>, tensor<24xf8E4M3FN>
}
