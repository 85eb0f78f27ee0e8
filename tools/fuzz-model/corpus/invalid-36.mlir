// A rank-3 rhs is not broadcast against a rank-2 lhs.
func.func @matmul_rhs_rank_higher(%a: tensor<4x8xf32>, %b: tensor<2x8x16xf32>) {
  // expected-error @+2 {{rhs must be a matrix or have the same rank as lhs ('tensor<4x8xf32>'), got 'tensor<2x8x16xf32>'}}
  // expected-error @+1 {{'lpc.matmul' op failed to infer returned types}}
  %0 = lpc.matmul %a, %b : tensor<4x8xf32>, tensor<2x8x16xf32> -> tensor<2x4x16xf32>
  return
}
