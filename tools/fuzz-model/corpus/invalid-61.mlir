func.func @bias_add_element_type(%a: tensor<4x8xf32>, %b: tensor<8xbf16>) {
  // expected-error @+1 {{'lpc.bias_add' op bias element type 'bf16' differs from input element type 'f32'; insert lpc.cast}}
  %0 = lpc.bias_add %a, %b : tensor<4x8xf32>, tensor<8xbf16>
  return
}
