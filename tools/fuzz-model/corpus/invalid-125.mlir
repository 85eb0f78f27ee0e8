func.func @embedding_grad_shape(%g: tensor<4x8xf32>, %i: tensor<2x2xi32>) {
  // expected-error @+1 {{'lpc.embedding_grad' op grad 'tensor<4x8xf32>' must be indices.shape x [dim] of 'tensor<100x8xf32>'}}
  %0 = lpc.embedding_grad %g, %i : tensor<4x8xf32>, tensor<2x2xi32> -> tensor<100x8xf32>
  return
}
