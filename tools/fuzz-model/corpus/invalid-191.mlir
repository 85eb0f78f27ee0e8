// lpc.all_reduce

func.func @all_reduce_comm_precision(%g: tensor<4x8xf32>) {
  // expected-error @+1 {{'lpc.all_reduce' op comm_precision bf16 needs kind mean (sum communicates in fp32 only)}}
  %0 = lpc.all_reduce %g sum {comm_precision = #lpc.precision<bf16>} : tensor<4x8xf32> -> tensor<4x8xf32>
  return
}
