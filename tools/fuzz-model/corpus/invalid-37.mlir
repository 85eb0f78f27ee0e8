func.func @matmul_batch(%a: tensor<2x3x4x8xf32>, %b: tensor<2x5x8x16xf32>) {
  // expected-error @+2 {{batch dimension 1 differs: 'tensor<2x3x4x8xf32>' vs 'tensor<2x5x8x16xf32>'}}
  // expected-error @+1 {{'lpc.matmul' op failed to infer returned types}}
  %0 = lpc.matmul %a, %b : tensor<2x3x4x8xf32>, tensor<2x5x8x16xf32> -> tensor<2x3x4x16xf32>
  return
}
