func.func @embedding_negative_padding_idx(%w: tensor<4x8xf32>, %ids: tensor<2xi32>) {
  // expected-error @+1 {{'lpc.embedding' op attribute 'padding_idx' failed to satisfy constraint: 64-bit signless integer attribute whose value is non-negative}}
  %0 = lpc.embedding %w, %ids {padding_idx = -1 : i64} : tensor<4x8xf32>, tensor<2xi32> -> tensor<2x8xf32>
  return
}
