func.func @transpose_repeated(%a: tensor<2x3xf32>) {
  // expected-error @+2 {{'lpc.transpose' op [1, 1] is not a permutation of 0..1}}
  // expected-error @+1 {{'lpc.transpose' op failed to infer returned types}}
  %0 = lpc.transpose %a [1, 1] : tensor<2x3xf32> -> tensor<3x3xf32>
  return
}
