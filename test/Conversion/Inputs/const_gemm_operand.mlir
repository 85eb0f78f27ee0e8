// A constant (not a splat) as a GEMM operand (test/Conversion/gpu-constant-tables.mlir):
// on the GPU, lpc-gemm-to-calls{device-operands} copies it into device
// memory with a kernel before the GEMM reads it.
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

// The same GEMMs on their own, for lpc-jit --gpu-loop-passes (the copy
// runs on the CPU there): a constant A and a constant transposed B.
func.func @const_gemms(%x: tensor<5x3xf32>, %y: tensor<4x3xf32>) -> (tensor<5x4xf32>, tensor<4x5xf32>) {
  %b = lpc.constant dense<[[1.5, -2.0, 1.0, 0.25], [3.0, -0.5, 2.0, -1.0], [1.0, 2.0, 3.0, 0.5]]> : tensor<3x4xf32>
  %a = lpc.constant dense<[[0.5, 1.0, -1.5], [2.0, -3.0, 0.75], [-1.0, 0.0, 4.0], [1.25, 2.5, -0.5]]> : tensor<4x3xf32>
  %p = lpc.matmul %x, %b : tensor<5x3xf32>, tensor<3x4xf32> -> tensor<5x4xf32>
  %xt = lpc.transpose %x [1, 0] : tensor<5x3xf32> -> tensor<3x5xf32>
  %q = lpc.matmul %a, %xt : tensor<4x3xf32>, tensor<3x5xf32> -> tensor<4x5xf32>
  return %p, %q : tensor<5x4xf32>, tensor<4x5xf32>
}
