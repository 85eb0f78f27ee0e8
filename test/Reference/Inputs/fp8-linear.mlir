// One linear layer whose GEMMs qualify for FP8 (K, N multiples of 16), for
// the multi-step FP8 scaling check.
func.func @fp8lin() -> tensor<f32> {
  %x = lpc.input "x" features : tensor<32x32xf32>
  %t = lpc.input "t" targets : tensor<32x16xf32>
  %w = lpc.param "w" zeros : tensor<32x16xf32>
  %y = lpc.matmul %x, %w : tensor<32x32xf32>, tensor<32x16xf32> -> tensor<32x16xf32>
  %l = lpc.mse_loss %y, %t : tensor<32x16xf32>
  return %l : tensor<f32>
}
