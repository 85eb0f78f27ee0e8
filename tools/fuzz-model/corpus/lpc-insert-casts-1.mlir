// Keep-fp32 consumers of a bf16 value get one cast up; a bf16 consumer of
// the same value uses it directly (no bf16 -> f32 -> bf16 chain). Losses
// keep their f32 result, and the loss gradient keeps its f32 seed.

func.func @loss(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>, %y: tensor<4xi32>) -> (tensor<f32>, tensor<4x16xf32>, tensor<4x16xf32>) {
  %h = lpc.matmul %x, %w {lpc.assigned = #lpc.precision<bf16>} : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
  %l = lpc.softmax_cross_entropy %h, %y {lpc.assigned = #lpc.precision<fp32>} : tensor<4x16xf32>, tensor<4xi32>
  %seed = lpc.grad_seed : tensor<f32>
  %g = lpc.softmax_cross_entropy_grad %seed, %h, %y {lpc.assigned = #lpc.precision<fp32>} : tensor<4x16xf32>, tensor<4xi32>
  %r = lpc.relu %h {lpc.assigned = #lpc.precision<bf16>} : tensor<4x16xf32>
  return %l, %g, %r : tensor<f32>, tensor<4x16xf32>, tensor<4x16xf32>
}
