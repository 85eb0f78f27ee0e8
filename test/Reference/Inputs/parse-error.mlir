func.func @bad() -> tensor<2xf32> {
  %0 = lpc.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %1 = lpc.relu %0 : tensor<3xf32>
  return %1 : tensor<2xf32>
}
