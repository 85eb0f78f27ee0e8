func.func @embedding_grad_table_rank(%g: tensor<4x8xf32>, %i: tensor<4xi32>) {
  // expected-error @+1 {{'lpc.embedding_grad' op result must be the [vocab, dim] table, got 'tensor<100xf32>'}}
  %0 = lpc.embedding_grad %g, %i : tensor<4x8xf32>, tensor<4xi32> -> tensor<100xf32>
  return
}
