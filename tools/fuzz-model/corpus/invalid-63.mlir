// ODS attribute constraint: pow needs its exponent.
func.func @pow_without_exponent(%a: tensor<4xf32>) {
  // expected-error @+1 {{'lpc.pow' op requires attribute 'exponent'}}
  %0 = lpc.pow %a : tensor<4xf32>
  return
}
