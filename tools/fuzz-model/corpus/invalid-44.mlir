func.func @matmul_unknown_role(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>) {
  // expected-error @+2 {{expected ::mlir::lpc::GemmRole to be one of: fprop, dgrad, wgrad}}
  // expected-error @+1 {{failed to parse Lpc_GemmRoleAttr parameter 'value' which is to be a `::mlir::lpc::GemmRole`}}
  %0 = lpc.matmul %a, %b {role = #lpc.role<bprop>} : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
  return
}
