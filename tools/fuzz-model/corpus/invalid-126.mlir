func.func @embedding_grad_element_type(%g: tensor<4x8xbf16>, %i: tensor<4xi32>) {
  // expected-error @+1 {{'lpc.embedding_grad' op grad 'tensor<4x8xbf16>' must be indices.shape x [dim] of 'tensor<100x8xf32>'}}
  %0 = lpc.embedding_grad %g, %i : tensor<4x8xbf16>, tensor<4xi32> -> tensor<100x8xf32>
  return
}
