func.func @param_duplicate_name() {
  // expected-note @+1 {{first declared here}}
  %0 = lpc.param "fc.weight" normal : tensor<4x4xf32>
  %1 = lpc.param "fc.bias" zeros : tensor<4xf32>
  // expected-error @+1 {{'lpc.param' op duplicate parameter name 'fc.weight'}}
  %2 = lpc.param "fc.weight" zeros : tensor<4xf32>
  return
}
