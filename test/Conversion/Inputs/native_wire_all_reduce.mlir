// A bf16 all_reduce (the GPU's native-wire form), which the CPU refuses
// (lpc-native-wire-collectives.mlir).
func.func @narrow(%g: tensor<8xf32>) -> tensor<8xf32> {
  %c = lpc.cast %g : tensor<8xf32> to tensor<8xbf16>
  %r = lpc.all_reduce %c mean {comm_precision = #lpc.precision<bf16>} : tensor<8xbf16> -> tensor<8xbf16>
  %y = lpc.cast %r : tensor<8xbf16> to tensor<8xf32>
  return %y : tensor<8xf32>
}
