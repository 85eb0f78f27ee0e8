// transpose(transpose(x)) composes: mid dim i = x dim inner[i], result dim
// i = mid dim perm[i] = x dim inner[perm[i]]; [1, 2, 0] then [1, 0, 2] is
// [2, 1, 0].
func.func @transpose_transpose(%x: tensor<2x3x4xf32>) -> tensor<4x3x2xf32> {
  %0 = lpc.transpose %x [1, 2, 0] : tensor<2x3x4xf32> -> tensor<3x4x2xf32>
  %1 = lpc.transpose %0 [1, 0, 2] : tensor<3x4x2xf32> -> tensor<4x3x2xf32>
  return %1 : tensor<4x3x2xf32>
}
