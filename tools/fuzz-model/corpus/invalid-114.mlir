//===----------------------------------------------------------------------===//
// Losses
//===----------------------------------------------------------------------===//

func.func @sce_labels_shape(%l: tensor<16x10xf32>, %y: tensor<8xi32>) {
  // expected-error @+1 {{'lpc.softmax_cross_entropy' op labels must have the logits' shape without the class dimension: logits 'tensor<16x10xf32>', labels 'tensor<8xi32>'}}
  %0 = lpc.softmax_cross_entropy %l, %y : tensor<16x10xf32>, tensor<8xi32>
  return
}
