func.func @unknown_op(%a: tensor<4xf32>) {
  // expected-error @+1 {{custom op 'lpc.frobnicate' is unknown}}
  %0 = lpc.frobnicate %a : tensor<4xf32>
  return
}
