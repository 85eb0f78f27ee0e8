//===----------------------------------------------------------------------===//
// Backward ops
//===----------------------------------------------------------------------===//

func.func @softmax_grad_axis(%g: tensor<4x8xf32>) {
  // expected-error @+1 {{'lpc.softmax_grad' op axis 2 is out of range for 'tensor<4x8xf32>' (valid: -2 to 1)}}
  %0 = lpc.softmax_grad %g, %g {axis = 2 : i64} : tensor<4x8xf32>
  return
}
