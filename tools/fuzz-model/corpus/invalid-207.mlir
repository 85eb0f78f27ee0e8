func.func @embedding_grad_padding_idx(%g: tensor<2x8xf32>, %ids: tensor<2xi32>) {
  // expected-error @+1 {{'lpc.embedding_grad' op padding_idx 9 is not a row of the 4-row table}}
  %0 = lpc.embedding_grad %g, %ids {padding_idx = 9 : i64} : tensor<2x8xf32>, tensor<2xi32> -> tensor<4x8xf32>
  return
}
