func.func @parallel_attr_on_op(%a: tensor<4xf32>) {
  // expected-error @+1 {{'lpc.parallel_body' must be a unit attribute on a function}}
  %0 = lpc.relu %a {lpc.parallel_body} : tensor<4xf32>
  return
}
