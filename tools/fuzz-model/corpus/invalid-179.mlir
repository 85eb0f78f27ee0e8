func.func @independent_columns_on_a_relu(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'lpc.independent_columns' must be a unit attribute on an scf.for}}
  %0 = lpc.relu %a {lpc.independent_columns} : tensor<4xf32>
  return %0 : tensor<4xf32>
}
