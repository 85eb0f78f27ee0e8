// FP8 collectives for lpc-native-wire-collectives.mlir.
func.func @fp8(%g: tensor<3x7xf32>, %h: tensor<10xf32>, %p: tensor<10x3xf32>, %w: tensor<4x3xf32>)
    -> (tensor<3x7xf32>, tensor<10xf32>, tensor<5x3xf32>, tensor<8x3xf32>) {
  %0 = lpc.all_reduce %g mean {comm_precision = #lpc.precision<fp8_e4m3>} : tensor<3x7xf32> -> tensor<3x7xf32>
  %1 = lpc.all_reduce %h mean {comm_precision = #lpc.precision<fp8_e5m2>} : tensor<10xf32> -> tensor<10xf32>
  %2 = lpc.reduce_scatter %p mean ranks(2) {comm_precision = #lpc.precision<fp8_e4m3>} : tensor<10x3xf32> -> tensor<5x3xf32>
  %3 = lpc.all_gather %w ranks(2) {comm_precision = #lpc.precision<fp8_e4m3>} : tensor<4x3xf32> -> tensor<8x3xf32>
  return %0, %1, %2, %3 : tensor<3x7xf32>, tensor<10xf32>, tensor<5x3xf32>, tensor<8x3xf32>
}
