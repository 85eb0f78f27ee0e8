// With transpose_b, K is the last dimension of rhs.
func.func @matmul_contraction_transposed(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>) {
  // expected-error @+2 {{contraction dimensions differ: lhs 'tensor<4x8xf32>' has K = 8 but rhs 'tensor<8x16xf32>' (transposed) has K = 16}}
  // expected-error @+1 {{'lpc.matmul' op failed to infer returned types}}
  %0 = lpc.matmul %a, %b {transpose_b} : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x8xf32>
  return
}
