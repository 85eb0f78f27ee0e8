// lpc.embedding / lpc.embedding_grad padding_idx

func.func @embedding_padding_idx(%w: tensor<4x8xf32>, %ids: tensor<2xi32>) {
  // expected-error @+1 {{'lpc.embedding' op padding_idx 4 is not a row of the 4-row table}}
  %0 = lpc.embedding %w, %ids {padding_idx = 4 : i64} : tensor<4x8xf32>, tensor<2xi32> -> tensor<2x8xf32>
  return
}
