// More queries than keys without the causal mask: every row sees every key.
// (Causal, it is an error: lpc-decompose-attention-invalid.mlir.)
// Under bf16 cuDNN runs it: it stays.
func.func @more_queries(%q: tensor<6x8xf32>, %k: tensor<4x8xf32>) -> tensor<6x8xf32> {
  %o, %l = lpc.attention %q, %k, %k : tensor<6x8xf32>, tensor<4x8xf32>, tensor<4x8xf32> -> tensor<6x8xf32>, tensor<6xf32>
  return %o : tensor<6x8xf32>
}
