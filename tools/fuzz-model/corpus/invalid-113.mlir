// ODS attribute constraint: dropout needs a seed.
func.func @dropout_no_seed(%a: tensor<8xf32>) {
  // expected-error @+1 {{'lpc.dropout' op requires attribute 'seed'}}
  %0 = lpc.dropout %a {rate = 0.5 : f64} : tensor<8xf32>
  return
}
