func.func @param_constant_without_value() {
  // expected-error @+1 {{'lpc.param' op 'constant' initializer needs a 'value' attribute}}
  %0 = lpc.param "w" constant : tensor<4xf32>
  return
}
