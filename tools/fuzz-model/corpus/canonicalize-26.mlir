// Partial slices stay, and so does a strided one over the whole range.
func.func @slice_partial(%x: tensor<4x8xf32>) -> (tensor<4x7xf32>, tensor<3x8xf32>, tensor<4x4xf32>) {
  %0 = lpc.slice %x start = [0, 0] limit = [4, 7] step = [1, 1] : tensor<4x8xf32> -> tensor<4x7xf32>
  %1 = lpc.slice %x start = [1, 0] limit = [4, 8] step = [1, 1] : tensor<4x8xf32> -> tensor<3x8xf32>
  %2 = lpc.slice %x start = [0, 0] limit = [4, 8] step = [1, 2] : tensor<4x8xf32> -> tensor<4x4xf32>
  return %0, %1, %2 : tensor<4x7xf32>, tensor<3x8xf32>, tensor<4x4xf32>
}
