// Three negations leave one.
func.func @neg_neg_neg(%x: tensor<4xbf16>) -> tensor<4xbf16> {
  %0 = lpc.neg %x : tensor<4xbf16>
  %1 = lpc.neg %0 : tensor<4xbf16>
  %2 = lpc.neg %1 : tensor<4xbf16>
  return %2 : tensor<4xbf16>
}
