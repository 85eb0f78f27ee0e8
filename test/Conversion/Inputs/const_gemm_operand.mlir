// A constant (not a splat) as a GEMM operand: the CUDA artifact refuses it
// clearly (test/Conversion/gpu-constant-tables.mlir).
func.func @cg() -> tensor<f32> {
  %x = lpc.input "x" features : tensor<2x3xf32>
  %t = lpc.input "t" targets : tensor<2x3xf32>
  %w = lpc.param "w" normal : tensor<3x3xf32>
  %table = lpc.constant dense<[[1.5, -2.0, 1.0], [3.0, -0.5, 2.0], [1.0, 2.0, 3.0]]> : tensor<3x3xf32>
  %w2 = lpc.add %w, %w : tensor<3x3xf32>
  %h = lpc.matmul %x, %table : tensor<2x3xf32>, tensor<3x3xf32> -> tensor<2x3xf32>
  %h2 = lpc.matmul %h, %w2 : tensor<2x3xf32>, tensor<3x3xf32> -> tensor<2x3xf32>
  %l = lpc.mse_loss %h2, %t : tensor<2x3xf32>
  return %l : tensor<f32>
}
