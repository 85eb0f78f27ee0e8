// A widening cast stays after the reshape: shared with the forward, the wide
// copy would live through the step in place of the narrow x.
func.func @widening_cast_of_reshape(%x: tensor<2x3x4xbf16>) -> tensor<6x4xf32> {
  %0 = lpc.reshape %x : tensor<2x3x4xbf16> -> tensor<6x4xbf16>
  %1 = lpc.cast %0 : tensor<6x4xbf16> to tensor<6x4xf32>
  return %1 : tensor<6x4xf32>
}
