func.func @input_features_int() {
  // expected-error @+1 {{'lpc.input' op 'features' inputs must have a float element type, got 'tensor<4x2xi32>'}}
  %0 = lpc.input "x" features : tensor<4x2xi32>
  return
}
