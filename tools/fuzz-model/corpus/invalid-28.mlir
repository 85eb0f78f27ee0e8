func.func @input_scalar() {
  // expected-error @+1 {{'lpc.input' op inputs need a static shape with a leading batch dimension, got 'tensor<f32>'}}
  %0 = lpc.input "x" features : tensor<f32>
  return
}
