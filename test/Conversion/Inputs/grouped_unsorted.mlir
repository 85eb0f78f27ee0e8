// Two experts layers on 301 rows in random order: experts 0-5, and rows of
// no expert (-1, 6).
func.func @unsorted() -> tensor<f32> {
  %x = lpc.input "x" features : tensor<301x33xf32>
  %g = lpc.constant dense<[4, 1, 5, 2, -1, 0, 6, 0, 4, 2, -1, 6, 2, -1, 0, 5, 5, 0, 2, 0, 6, 5, -1, 2, 0, 2, 2, 2, 2, -1, 2, 2, 5, -1, 2, -1, 6, 1, 3, 5, 1, 6, 0, 2, 3, 6, 2, 1, 0, 2, 2, 2, 2, 4, 0, 6, 0, 2, -1, 2, 2, 6, 2, 6, 5, 4, 6, 2, 6, 4, 3, 2, 1, 2, 0, 2, 3, 6, 6, 4, 6, 3, 2, 0, 0, 6, 5, 1, 4, 1, 6, 5, -1, 2, 0, 6, 2, 4, 4, 4, 2, 6, 2, 6, 0, 0, 3, 6, 2, 0, -1, 3, 2, 2, 2, 6, 3, 5, 2, 4, -1, 6, 4, 1, 2, 0, 6, -1, 2, 3, 1, 2, 5, 5, 6, 0, 1, 6, 5, 6, 3, 1, 5, 6, 3, 5, 4, 2, 5, 2, 1, 0, 1, 1, 2, 2, 2, -1, 6, 2, 1, 3, 3, -1, 1, 5, 6, 4, 2, 2, 4, 1, 6, 2, 2, 2, -1, 6, 2, 6, 5, 5, 5, 5, 0, 6, 2, 5, -1, 2, 0, 2, 6, 1, 0, 4, 2, -1, 0, -1, 2, 1, 6, 0, 4, 2, -1, 0, 2, 2, 5, 1, 2, 3, 4, 2, 4, 6, 0, 0, 6, 6, 6, 6, 3, 0, 1, 0, 4, 3, 6, 1, 6, -1, 2, 6, 4, 1, 6, -1, 6, 3, 2, 0, 3, 6, 4, 1, 4, 2, 6, 6, 6, 4, 2, 2, 2, 2, 2, 5, 2, 2, 6, 6, 4, -1, -1, 3, 6, 3, 2, 2, 4, 6, 4, 4, 0, 2, 0, 2, 6, 2, 4, 2, 6, 2, 2, -1, 6, 2, 4, 2, 0, 2, 0, 5, 2, 6, 1, 5, 2]> : tensor<301xi32>
  %w1 = lpc.param "w1" normal {std = 2.0e-01 : f64} : tensor<6x33x47xf32>
  %w2 = lpc.param "w2" normal {std = 2.0e-01 : f64} : tensor<6x33x47xf32>
  %t = lpc.input "t" targets : tensor<301x33xf32>
  %h = lpc.grouped_matmul %x, %w1, %g : tensor<301x33xf32>, tensor<6x33x47xf32>, tensor<301xi32> -> tensor<301x47xf32>
  %a = lpc.gelu %h {approximation = #lpc.gelu_approximation<tanh>} : tensor<301x47xf32>
  %y = lpc.grouped_matmul %a, %w2, %g {transpose_b} : tensor<301x47xf32>, tensor<6x33x47xf32>, tensor<301xi32> -> tensor<301x33xf32>
  %l = lpc.mse_loss %y, %t : tensor<301x33xf32>
  return %l : tensor<f32>
}
