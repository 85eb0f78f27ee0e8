func.func @transpose_rank(%a: tensor<2x3x4xf32>) {
  // expected-error @+2 {{'lpc.transpose' op permutation has 2 entries but the input 'tensor<2x3x4xf32>' has rank 3}}
  // expected-error @+1 {{'lpc.transpose' op failed to infer returned types}}
  %0 = lpc.transpose %a [1, 0] : tensor<2x3x4xf32> -> tensor<3x2x4xf32>
  return
}
