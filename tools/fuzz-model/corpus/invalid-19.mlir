func.func @param_dynamic_shape() {
  // expected-error @+1 {{'lpc.param' op parameter shape must be static, got 'tensor<?x4xf32>'}}
  %0 = lpc.param "w" normal : tensor<?x4xf32>
  return
}
