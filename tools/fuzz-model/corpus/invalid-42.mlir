func.func @matmul_result_type(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>) {
  // expected-error @+2 {{'lpc.matmul' op inferred type(s) 'tensor<4x16xf32>' are incompatible with return type(s) of operation 'tensor<4x16xbf16>'}}
  // expected-error @+1 {{'lpc.matmul' op failed to infer returned types}}
  %0 = lpc.matmul %a, %b : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xbf16>
  return
}
