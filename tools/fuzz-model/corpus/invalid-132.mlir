//===----------------------------------------------------------------------===//
// Precision ops
//===----------------------------------------------------------------------===//

func.func @cast_shape(%a: tensor<4xf32>) {
  // expected-error @+1 {{'lpc.cast' op changes the shape from 'tensor<4xf32>' to 'tensor<8xbf16>'; a cast only changes the element type}}
  %0 = lpc.cast %a : tensor<4xf32> to tensor<8xbf16>
  return
}
