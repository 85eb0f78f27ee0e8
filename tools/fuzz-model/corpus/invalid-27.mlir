func.func @input_targets_int() {
  // expected-error @+1 {{'lpc.input' op 'targets' inputs must have a float element type, got 'tensor<4xi64>'}}
  %0 = lpc.input "x" targets : tensor<4xi64>
  return
}
