func.func @reshape_dynamic(%a: tensor<?x3xf32>) {
  // expected-error @+1 {{'lpc.reshape' op needs static shapes}}
  %0 = lpc.reshape %a : tensor<?x3xf32> -> tensor<6xf32>
  return
}
