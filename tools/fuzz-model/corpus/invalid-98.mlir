func.func @concat_empty() {
  // expected-error @+2 {{'lpc.concat' op needs at least one input}}
  // expected-error @+1 {{'lpc.concat' op failed to infer returned types}}
  %0 = "lpc.concat"() <{axis = 0 : i64}> : () -> tensor<4xf32>
  return
}
