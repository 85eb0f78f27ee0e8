func.func @where_shape(%c: tensor<4xi1>, %a: tensor<8xf32>) {
  // expected-error @+1 {{'lpc.where' op condition shape 'tensor<4xi1>' differs from value shape 'tensor<8xf32>'}}
  %0 = lpc.where %c, %a, %a : tensor<4xi1>, tensor<8xf32>
  return
}
