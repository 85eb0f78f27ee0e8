// Attention in bf16: query, key, value, the result and the gradients take
// bf16; the mask and the row statistics (lse) stay f32, in the forward and
// the backward op.

func.func @attention(%q: tensor<4x8xf32>, %m: tensor<4x4xf32>) -> (tensor<4x8xf32>, tensor<4xf32>) {
  %o, %l = lpc.attention %q, %q, %q mask %m {lpc.assigned = #lpc.precision<bf16>} : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x4xf32> -> tensor<4x8xf32>, tensor<4xf32>
  %dq, %dk, %dv = lpc.attention_grad %o, %q, %q, %q, %o, %l mask %m {lpc.assigned = #lpc.precision<bf16>} : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4xf32>, tensor<4x4xf32>
  return %dq, %l : tensor<4x8xf32>, tensor<4xf32>
}
