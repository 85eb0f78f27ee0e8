func.func @input_unknown_kind() {
  // expected-error @+2 {{custom op 'lpc.input' expected ::mlir::lpc::InputKind to be one of: features, targets, labels, tokens}}
  // expected-error @+1 {{custom op 'lpc.input' failed to parse Lpc_InputKindAttr parameter 'value' which is to be a `::mlir::lpc::InputKind`}}
  %0 = lpc.input "x" images : tensor<4x2xf32>
  return
}
