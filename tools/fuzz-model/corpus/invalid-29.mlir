func.func @input_dynamic() {
  // expected-error @+1 {{'lpc.input' op inputs need a static shape with a leading batch dimension, got 'tensor<?x8xf32>'}}
  %0 = lpc.input "x" features : tensor<?x8xf32>
  return
}
