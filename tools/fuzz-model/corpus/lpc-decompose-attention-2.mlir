// Under bf16, kept only where cuDNN runs it: head dims multiples of 8 up to
// 128 and no fp32 pin.
func.func @cudnn_limits(%a: tensor<4x8xf32>, %b: tensor<4x12xf32>, %c: tensor<4x256xf32>) -> (tensor<4x8xf32>, tensor<4x12xf32>, tensor<4x256xf32>, tensor<4x8xf32>) {
  %o1, %l1 = lpc.attention %a, %a, %a : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>, tensor<4xf32>
  %o2, %l2 = lpc.attention %b, %b, %b : tensor<4x12xf32>, tensor<4x12xf32>, tensor<4x12xf32> -> tensor<4x12xf32>, tensor<4xf32>
  %o3, %l3 = lpc.attention %c, %c, %c : tensor<4x256xf32>, tensor<4x256xf32>, tensor<4x256xf32> -> tensor<4x256xf32>, tensor<4xf32>
  %o4, %l4 = lpc.attention %a, %a, %a {lpc.precision = #lpc.precision<fp32>} : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>, tensor<4xf32>
  return %o1, %o2, %o3, %o4 : tensor<4x8xf32>, tensor<4x12xf32>, tensor<4x256xf32>, tensor<4x8xf32>
}
