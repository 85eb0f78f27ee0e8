// A user cast of a value that became bf16: cast back, then the user's cast;
// canonicalize folds the exact bf16 -> f32 -> bf16 round trip.

func.func @user_cast(%x: tensor<4x4xf32>, %w: tensor<4x4xf32>) -> tensor<4x4xbf16> {
  %h = lpc.matmul %x, %w {lpc.assigned = #lpc.precision<bf16>} : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
  %g = lpc.gelu %h {lpc.assigned = #lpc.precision<bf16>} : tensor<4x4xf32>
  %c = lpc.cast %g : tensor<4x4xf32> to tensor<4x4xbf16>
  return %c : tensor<4x4xbf16>
}
