//===----------------------------------------------------------------------===//
// lpc.constant
//===----------------------------------------------------------------------===//

func.func @constant_not_elements() {
  // expected-error @+1 {{expected a dense elements attribute with a tensor type, e.g. dense<1.0> : tensor<4xf32>}}
  %0 = lpc.constant 1.0 : f32
  return
}
