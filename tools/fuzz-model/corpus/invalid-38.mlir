func.func @matmul_contraction(%a: tensor<4x8xf32>, %b: tensor<7x16xf32>) {
  // expected-error @+2 {{contraction dimensions differ: lhs 'tensor<4x8xf32>' has K = 8 but rhs 'tensor<7x16xf32>' has K = 7}}
  // expected-error @+1 {{'lpc.matmul' op failed to infer returned types}}
  %0 = lpc.matmul %a, %b : tensor<4x8xf32>, tensor<7x16xf32> -> tensor<4x16xf32>
  return
}
