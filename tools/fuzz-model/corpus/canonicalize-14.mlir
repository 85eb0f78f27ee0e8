func.func @broadcast_same_type(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = lpc.broadcast %x dims = [0, 1] : tensor<4x8xf32> -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}
