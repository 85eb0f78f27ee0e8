// A single negation stays.
func.func @neg_alone(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = lpc.neg %x : tensor<4xf32>
  return %0 : tensor<4xf32>
}
