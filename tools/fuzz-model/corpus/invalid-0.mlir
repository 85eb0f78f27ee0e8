// One split per diagnostic of the lpc verifiers (dialects/LpcOps.cpp), the
// dialect attribute verifier (dialects/LpcDialect.cpp) and a few of the
// ODS-generated type constraints.

//===----------------------------------------------------------------------===//
// lpc.param
//===----------------------------------------------------------------------===//

func.func @param_empty_name() {
  // expected-error @+1 {{'lpc.param' op needs a non-empty name}}
  %0 = lpc.param "" zeros : tensor<4xf32>
  return
}
