// Integer paths and data inputs are not differentiated: no error here.
func.func @integer_path() -> tensor<f32> {
  %tok = lpc.input "tokens" tokens : tensor<2x3xi32>
  %tgt = lpc.input "targets" labels : tensor<2x3xi32>
  %e = lpc.param "wte" normal {std = 0.02 : f64} : tensor<16x8xf32>
  %h = lpc.embedding %e, %tok : tensor<16x8xf32>, tensor<2x3xi32> -> tensor<2x3x8xf32>
  %m = lpc.amax %h : tensor<2x3x8xf32>
  %logits = lpc.matmul %h, %e {transpose_b} : tensor<2x3x8xf32>, tensor<16x8xf32> -> tensor<2x3x16xf32>
  %l = lpc.softmax_cross_entropy %logits, %tgt : tensor<2x3x16xf32>, tensor<2x3xi32>
  return %l : tensor<f32>
}
