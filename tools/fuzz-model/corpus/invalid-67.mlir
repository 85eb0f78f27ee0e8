// ODS trait: gamma and beta have one type.
func.func @layernorm_beta_type(%a: tensor<4x8xf32>, %g: tensor<8xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{'lpc.layernorm' op failed to verify that all of {gamma, beta} have same type}}
  %0 = "lpc.layernorm"(%a, %g, %b) : (tensor<4x8xf32>, tensor<8xf32>, tensor<4xf32>) -> tensor<4x8xf32>
  return
}
