func.func @sce_labels_rank(%l: tensor<2x8x50xf32>, %y: tensor<16xi32>) {
  // expected-error @+1 {{'lpc.softmax_cross_entropy' op labels must have the logits' shape without the class dimension: logits 'tensor<2x8x50xf32>', labels 'tensor<16xi32>'}}
  %0 = lpc.softmax_cross_entropy %l, %y : tensor<2x8x50xf32>, tensor<16xi32>
  return
}
