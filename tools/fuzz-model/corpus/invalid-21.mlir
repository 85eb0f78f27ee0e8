func.func @param_not_f32() {
  // expected-error @+1 {{'lpc.param' op result #0 must be ranked tensor of 32-bit float values, but got 'tensor<4xbf16>'}}
  %0 = lpc.param "w" zeros : tensor<4xbf16>
  return
}
