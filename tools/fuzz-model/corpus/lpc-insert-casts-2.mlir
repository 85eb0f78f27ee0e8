// Optimizer ops (fixed precision) see FP32 masters and FP32 gradients.

func.func @masters(%w: tensor<8x8xf32>, %buf: tensor<8x8xf32>, %x: tensor<4x8xf32>, %lr: tensor<f32>, %dy: tensor<4x8xf32>) -> (tensor<8x8xf32>, tensor<8x8xf32>) {
  %gw = lpc.matmul %x, %dy {lpc.assigned = #lpc.precision<bf16>, transpose_a} : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<8x8xf32>
  %p, %b = lpc.sgd %w, %gw, %buf lr(%lr) : tensor<8x8xf32>
  return %p, %b : tensor<8x8xf32>, tensor<8x8xf32>
}
