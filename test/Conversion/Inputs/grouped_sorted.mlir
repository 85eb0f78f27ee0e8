// Two experts layers on rows sorted by expert: 5 rows of no expert (-1), runs
// of 64 and 80 rows (bucket sizes: computed in place), 1 row, 100 rows
// (padded to 112), expert 3 without rows, and 3 rows of expert 5.
func.func @sorted() -> tensor<f32> {
  %x = lpc.input "x" features : tensor<253x33xf32>
  %g = lpc.constant dense<[-1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 5, 5, 5]> : tensor<253xi32>
  %w1 = lpc.param "w1" normal {std = 2.0e-01 : f64} : tensor<6x33x47xf32>
  %w2 = lpc.param "w2" normal {std = 2.0e-01 : f64} : tensor<6x33x47xf32>
  %t = lpc.input "t" targets : tensor<253x33xf32>
  %h = lpc.grouped_matmul %x, %w1, %g : tensor<253x33xf32>, tensor<6x33x47xf32>, tensor<253xi32> -> tensor<253x47xf32>
  %a = lpc.gelu %h {approximation = #lpc.gelu_approximation<tanh>} : tensor<253x47xf32>
  %y = lpc.grouped_matmul %a, %w2, %g {transpose_b} : tensor<253x47xf32>, tensor<6x33x47xf32>, tensor<253xi32> -> tensor<253x33xf32>
  %l = lpc.mse_loss %y, %t : tensor<253x33xf32>
  return %l : tensor<f32>
}
