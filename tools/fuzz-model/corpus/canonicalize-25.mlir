func.func @slice_full(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = lpc.slice %x start = [0, 0] limit = [4, 8] step = [1, 1] : tensor<4x8xf32> -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}
