func.func @partial() -> tensor<f32> {
  %x = lpc.input "x" features : tensor<2x4xf32>
  %t = lpc.input "t" targets : tensor<2x4xf32>
  %w = lpc.param "w" kaiming_uniform : tensor<4x12xf32>
  %qkv = lpc.matmul %x, %w : tensor<2x4xf32>, tensor<4x12xf32> -> tensor<2x12xf32>
  %q = lpc.slice %qkv start = [0, 0] limit = [2, 4] step = [1, 1] : tensor<2x12xf32> -> tensor<2x4xf32>
  %v = lpc.slice %qkv start = [0, 8] limit = [2, 12] step = [1, 1] : tensor<2x12xf32> -> tensor<2x4xf32>
  %b = lpc.add %q, %v : tensor<2x4xf32>
  %l = lpc.mse_loss %b, %t : tensor<2x4xf32>
  return %l : tensor<f32>
}
