func.func @constant_type_mismatch() {
  // expected-error @+1 {{'lpc.constant' op value type 'tensor<4xf32>' differs from result type 'tensor<2x2xf32>'}}
  %0 = "lpc.constant"() <{value = dense<1.0> : tensor<4xf32>}> : () -> tensor<2x2xf32>
  return
}
