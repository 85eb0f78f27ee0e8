func.func @matmul_element_types(%a: tensor<4x8xbf16>, %b: tensor<8x16xf32>) {
  // expected-error @+2 {{'lpc.matmul' op operand element types differ ('bf16' vs 'f32'); insert lpc.cast}}
  // expected-error @+1 {{'lpc.matmul' op failed to infer returned types}}
  %0 = lpc.matmul %a, %b : tensor<4x8xbf16>, tensor<8x16xf32> -> tensor<4x16xf32>
  return
}
