func.func @param_unknown_init() {
  // expected-error @+2 {{custom op 'lpc.param' expected ::mlir::lpc::InitKind to be one of: zeros, ones, constant, normal, uniform, xavier_uniform, xavier_normal, kaiming_uniform, kaiming_normal}}
  // expected-error @+1 {{custom op 'lpc.param' failed to parse Lpc_InitKindAttr parameter 'value' which is to be a `::mlir::lpc::InitKind`}}
  %0 = lpc.param "w" he_normal : tensor<4xf32>
  return
}
