func.func @reduce_scatter_comm_precision(%g: tensor<4x8xf32>) {
  // expected-error @+1 {{'lpc.reduce_scatter' op comm_precision fp8_e4m3 needs kind mean (max communicates in fp32 only)}}
  %0 = lpc.reduce_scatter %g max ranks(2) {comm_precision = #lpc.precision<fp8_e4m3>} : tensor<4x8xf32> -> tensor<2x8xf32>
  return
}
