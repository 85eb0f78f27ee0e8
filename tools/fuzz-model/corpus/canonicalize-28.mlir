func.func @concat_two(%x: tensor<4x8xf32>) -> tensor<8x8xf32> {
  %0 = lpc.concat %x, %x axis = 0 : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}
