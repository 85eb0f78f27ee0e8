func.func @reshape_element_type(%a: tensor<2x3xf32>) {
  // expected-error @+1 {{'lpc.reshape' op element type changes from 'f32' to 'f16'; use lpc.cast}}
  %0 = lpc.reshape %a : tensor<2x3xf32> -> tensor<6xf16>
  return
}
