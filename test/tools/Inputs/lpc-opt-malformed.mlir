// Malformed: the second op lacks the ':' before its type.
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = lpc.relu %x : tensor<4xf32>
  %1 = lpc.neg %0 tensor<4xf32>
  return %1 : tensor<4xf32>
}
