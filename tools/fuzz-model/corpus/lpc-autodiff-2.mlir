// Tied weights read through transpose_b: the head GEMM's weight gradient is
// a wgrad with the operands swapped; the embedding gets a scatter-add.

func.func @tied() -> tensor<f32> {
  %tok = lpc.input "tokens" tokens : tensor<2x3xi32>
  %tgt = lpc.input "targets" labels : tensor<2x3xi32>
  %e = lpc.param "wte" normal {std = 0.02 : f64} : tensor<16x8xf32>
  %h = lpc.embedding %e, %tok : tensor<16x8xf32>, tensor<2x3xi32> -> tensor<2x3x8xf32>
  %logits = lpc.matmul %h, %e {transpose_b} : tensor<2x3x8xf32>, tensor<16x8xf32> -> tensor<2x3x16xf32>
  %l = lpc.softmax_cross_entropy %logits, %tgt : tensor<2x3x16xf32>, tensor<2x3xi32>
  return %l : tensor<f32>
}
