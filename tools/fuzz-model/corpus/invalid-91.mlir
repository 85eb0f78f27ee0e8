func.func @transpose_out_of_range(%a: tensor<2x3xf32>) {
  // expected-error @+2 {{'lpc.transpose' op [0, 2] is not a permutation of 0..1}}
  // expected-error @+1 {{'lpc.transpose' op failed to infer returned types}}
  %0 = lpc.transpose %a [0, 2] : tensor<2x3xf32> -> tensor<2x3xf32>
  return
}
