// Operands are cast to the assigned type once per (value, type); results
// take the assigned type; an unassigned consumer (func.return) gets the
// original type back.

// The second GEMM reuses both casts.
func.func @gemms(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>) -> tensor<4x8xf32> {
  %a = lpc.matmul %x, %w {lpc.assigned = #lpc.precision<bf16>} : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32>
  %b = lpc.matmul %a, %w {lpc.assigned = #lpc.precision<bf16>} : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32>
  return %b : tensor<4x8xf32>
}
