// FP8 policy on a train step: linear-layer GEMMs become FP8 with HYBRID
// formats per role, the others stay bf16 with the reason recorded.

// fc1 fprop: activations and weights in E4M3.
// The attention-like GEMM of two activations stays bf16.
// The 10-class head: N = 10 is not a multiple of 16.
// dgrad: the gradient in E5M2, the weight in E4M3; wgrad: activation E4M3,
// gradient E5M2. Never E5M2 x E5M2.
// Non-GEMM ops run in bf16 / fp32, never fp8.



// With the default threshold (M*N*K >= 128^3) these GEMMs are too small.
func.func @net() -> tensor<f32> {
  %x = lpc.input "x" features : tensor<32x32xf32>
  %y = lpc.input "y" labels : tensor<32xi32>
  %w1 = lpc.param "fc1.weight" xavier_uniform : tensor<32x32xf32>
  %w2 = lpc.param "fc2.weight" xavier_uniform : tensor<32x32xf32>
  %w3 = lpc.param "head.weight" xavier_uniform : tensor<32x10xf32>
  %h = lpc.matmul %x, %w1 : tensor<32x32xf32>, tensor<32x32xf32> -> tensor<32x32xf32>
  %a = lpc.gelu %h : tensor<32x32xf32>
  %s = lpc.matmul %a, %a {transpose_b} : tensor<32x32xf32>, tensor<32x32xf32> -> tensor<32x32xf32>
  %h2 = lpc.matmul %s, %w2 : tensor<32x32xf32>, tensor<32x32xf32> -> tensor<32x32xf32>
  %o = lpc.matmul %h2, %w3 : tensor<32x32xf32>, tensor<32x10xf32> -> tensor<32x10xf32>
  %l = lpc.softmax_cross_entropy %o, %y : tensor<32x10xf32>, tensor<32xi32>
  return %l : tensor<f32>
}
