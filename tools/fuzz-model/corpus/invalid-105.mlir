func.func @embedding_table_rank(%t: tensor<100xf32>, %i: tensor<4xi32>) {
  // expected-error @+2 {{'lpc.embedding' op table must be [vocab, dim], got 'tensor<100xf32>'}}
  // expected-error @+1 {{'lpc.embedding' op failed to infer returned types}}
  %0 = lpc.embedding %t, %i : tensor<100xf32>, tensor<4xi32> -> tensor<4xf32>
  return
}
