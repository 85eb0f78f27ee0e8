// A broadcast that changes the shape stays, even with size-1 dims.
func.func @broadcast_real(%x: tensor<1x8xf32>, %y: tensor<8xf32>) -> (tensor<4x8xf32>, tensor<1x8xf32>) {
  %0 = lpc.broadcast %x dims = [0, 1] : tensor<1x8xf32> -> tensor<4x8xf32>
  %1 = lpc.broadcast %y dims = [1] : tensor<8xf32> -> tensor<1x8xf32>
  return %0, %1 : tensor<4x8xf32>, tensor<1x8xf32>
}
