func.func @rmsnorm_gamma_element_type(%a: tensor<4x8xbf16>, %g: tensor<8xf32>) {
  // expected-error @+1 {{'lpc.rmsnorm' op gamma element type 'f32' differs from input element type 'bf16'; insert lpc.cast}}
  %0 = lpc.rmsnorm %a, %g : tensor<4x8xbf16>, tensor<8xf32>
  return
}
