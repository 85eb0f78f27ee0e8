// ODS trait: loss_scale keeps its input type.
func.func @loss_scale_type(%a: tensor<4xf32>, %s: tensor<f32>) {
  // expected-error @+1 {{'lpc.loss_scale' op failed to verify that all of {input, result} have same type}}
  %0 = "lpc.loss_scale"(%a, %s) : (tensor<4xf32>, tensor<f32>) -> tensor<4xbf16>
  return
}
