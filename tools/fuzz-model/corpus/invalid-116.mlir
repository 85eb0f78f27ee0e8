func.func @sce_scalar_logits(%l: tensor<f32>, %y: tensor<i32>) {
  // expected-error @+1 {{'lpc.softmax_cross_entropy' op labels must have the logits' shape without the class dimension: logits 'tensor<f32>', labels 'tensor<i32>'}}
  %0 = lpc.softmax_cross_entropy %l, %y : tensor<f32>, tensor<i32>
  return
}
