func.func @all_finite_empty() {
  // expected-error @+1 {{'lpc.all_finite' op needs at least one input}}
  %0 = "lpc.all_finite"() : () -> tensor<i1>
  return
}
