// ODS trait: prediction and target have one type.
func.func @mse_types(%p: tensor<4xf32>, %t: tensor<4xbf16>) {
  // expected-error @+1 {{'lpc.mse_loss' op failed to verify that all of {prediction, target} have same type}}
  %0 = "lpc.mse_loss"(%p, %t) : (tensor<4xf32>, tensor<4xbf16>) -> tensor<f32>
  return
}
