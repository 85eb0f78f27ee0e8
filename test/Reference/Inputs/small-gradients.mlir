// A classifier whose loss is scaled down by 1e-7 (as a loss averaged over
// many tokens, or a small auxiliary loss, would be): its gradients are
// below fp16's smallest subnormal (6e-8) unless the loss is scaled up.
func.func @small() -> tensor<f32> {
  %x = lpc.input "x" features : tensor<64x64xf32>
  %y = lpc.input "y" labels : tensor<64xi32>
  %w1 = lpc.param "fc1.weight" xavier_uniform : tensor<64x64xf32>
  %w2 = lpc.param "fc2.weight" xavier_uniform : tensor<64x16xf32>
  %h = lpc.matmul %x, %w1 : tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
  %a = lpc.gelu %h : tensor<64x64xf32>
  %o = lpc.matmul %a, %w2 : tensor<64x64xf32>, tensor<64x16xf32> -> tensor<64x16xf32>
  %ce = lpc.softmax_cross_entropy %o, %y : tensor<64x16xf32>, tensor<64xi32>
  %l = lpc.scale %ce {factor = 1.0e-7 : f64} : tensor<f32>
  return %l : tensor<f32>
}
