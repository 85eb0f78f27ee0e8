// Causal, default scale (1/sqrt(8)), lse unused: GEMM, scale, causal mask,
// softmax, GEMM; the attention goes.
func.func @causal(%q: tensor<2x4x16x8xf32>, %k: tensor<2x4x16x8xf32>, %v: tensor<2x4x16x8xf32>) -> tensor<2x4x16x8xf32> {
  %o, %l = lpc.attention %q, %k, %v {causal} : tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32> -> tensor<2x4x16x8xf32>, tensor<2x4x16xf32>
  return %o : tensor<2x4x16x8xf32>
}
