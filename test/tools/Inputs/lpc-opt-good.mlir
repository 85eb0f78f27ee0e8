func.func @good(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = lpc.scale %x {factor = -1.0 : f64} : tensor<4xf32>
  %1 = lpc.neg %0 : tensor<4xf32>
  %2 = lpc.param "w" ones : tensor<4xf32>
  %3 = lpc.add %1, %2 : tensor<4xf32>
  return %3 : tensor<4xf32>
}
