//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

func.func @broadcast_element_type(%a: tensor<8xf32>) {
  // expected-error @+1 {{'lpc.broadcast' op element type changes from 'f32' to 'bf16'}}
  %0 = lpc.broadcast %a dims = [1] : tensor<8xf32> -> tensor<4x8xbf16>
  return
}
