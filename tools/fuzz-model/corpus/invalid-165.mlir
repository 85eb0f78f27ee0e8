//===----------------------------------------------------------------------===//
// The precision pin (LpcDialect::verifyOperationAttribute)
//===----------------------------------------------------------------------===//

func.func @pin_unknown_lpc_attribute(%a: tensor<4xf32>) {
  // expected-error @+1 {{unknown lpc attribute 'lpc.precison' (known: lpc.precision, lpc.assigned, lpc.reason, lpc.fp8, lpc.profile_labels, lpc.parallel_*, lpc.independent_columns, lpc.bucket)}}
  %0 = lpc.relu %a {lpc.precison = #lpc.precision<fp32>} : tensor<4xf32>
  return
}
