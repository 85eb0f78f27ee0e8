func.func @sce_unknown_reduction(%l: tensor<16x10xf32>, %y: tensor<16xi32>) {
  // expected-error @+2 {{expected ::mlir::lpc::LossReduction to be one of: mean, sum}}
  // expected-error @+1 {{failed to parse Lpc_LossReductionAttr parameter 'value' which is to be a `::mlir::lpc::LossReduction`}}
  %0 = lpc.softmax_cross_entropy %l, %y {reduction = #lpc.reduction<none>} : tensor<16x10xf32>, tensor<16xi32>
  return
}
