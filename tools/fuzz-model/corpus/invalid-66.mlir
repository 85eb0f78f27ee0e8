func.func @layernorm_gamma_element_type(%a: tensor<4x8xf32>, %g: tensor<8xbf16>) {
  // expected-error @+1 {{'lpc.layernorm' op gamma element type 'bf16' differs from input element type 'f32'; insert lpc.cast}}
  %0 = lpc.layernorm %a, %g, %g : tensor<4x8xf32>, tensor<8xbf16>
  return
}
