// Parses, but does not verify: K differs.
func.func @f(%a: tensor<4x8xf32>, %b: tensor<7x16xf32>) -> tensor<4x16xf32> {
  %0 = lpc.matmul %a, %b : tensor<4x8xf32>, tensor<7x16xf32> -> tensor<4x16xf32>
  return %0 : tensor<4x16xf32>
}
