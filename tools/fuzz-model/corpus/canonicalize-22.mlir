// A non-identity permutation stays even when the shape does not change.
func.func @transpose_square(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %0 = lpc.transpose %x [1, 0] : tensor<4x4xf32> -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}
