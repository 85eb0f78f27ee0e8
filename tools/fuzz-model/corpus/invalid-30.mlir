func.func @input_duplicate_name() {
  // expected-note @+1 {{first declared here}}
  %0 = lpc.input "x" features : tensor<4x2xf32>
  // expected-error @+1 {{'lpc.input' op duplicate input name 'x'}}
  %1 = lpc.input "x" targets : tensor<4x2xf32>
  return
}
