func.func @concat_single(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = lpc.concat %x axis = 1 : tensor<4x8xf32> -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}
