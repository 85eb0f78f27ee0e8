// cast to the same type is the identity.
func.func @cast_same_type(%x: tensor<4xbf16>) -> tensor<4xbf16> {
  %0 = lpc.cast %x : tensor<4xbf16> to tensor<4xbf16>
  return %0 : tensor<4xbf16>
}
