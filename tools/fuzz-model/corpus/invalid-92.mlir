func.func @transpose_result(%a: tensor<2x3xf32>) {
  // expected-error @+2 {{'lpc.transpose' op inferred type(s) 'tensor<3x2xf32>' are incompatible with return type(s) of operation 'tensor<2x3xf32>'}}
  // expected-error @+1 {{'lpc.transpose' op failed to infer returned types}}
  %0 = lpc.transpose %a [1, 0] : tensor<2x3xf32> -> tensor<2x3xf32>
  return
}
