// Composition order matters: [1, 2, 0] then [2, 0, 1] is the identity, and
// [1, 2, 0] twice is [2, 0, 1].
func.func @transpose_inverse(%x: tensor<2x3x4xf32>) -> (tensor<2x3x4xf32>, tensor<4x2x3xf32>) {
  %0 = lpc.transpose %x [1, 2, 0] : tensor<2x3x4xf32> -> tensor<3x4x2xf32>
  %1 = lpc.transpose %0 [2, 0, 1] : tensor<3x4x2xf32> -> tensor<2x3x4xf32>
  %2 = lpc.transpose %x [1, 2, 0] : tensor<2x3x4xf32> -> tensor<3x4x2xf32>
  %3 = lpc.transpose %2 [1, 2, 0] : tensor<3x4x2xf32> -> tensor<4x2x3xf32>
  return %1, %3 : tensor<2x3x4xf32>, tensor<4x2x3xf32>
}
