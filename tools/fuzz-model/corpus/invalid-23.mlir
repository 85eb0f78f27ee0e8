//===----------------------------------------------------------------------===//
// lpc.input
//===----------------------------------------------------------------------===//

func.func @input_empty_name() {
  // expected-error @+1 {{'lpc.input' op needs a non-empty name}}
  %0 = lpc.input "" features : tensor<4x2xf32>
  return
}
