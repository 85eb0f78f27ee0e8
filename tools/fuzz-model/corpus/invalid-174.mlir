func.func @pin_unknown_precision(%a: tensor<4xf32>) {
  // expected-error @+2 {{expected ::mlir::lpc::Precision to be one of: fp32, fp16, bf16, fp8_e4m3, fp8_e5m2}}
  // expected-error @+1 {{failed to parse Lpc_PrecisionAttr parameter 'value' which is to be a `::mlir::lpc::Precision`}}
  %0 = lpc.relu %a {lpc.precision = #lpc.precision<fp7>} : tensor<4xf32>
  return
}
