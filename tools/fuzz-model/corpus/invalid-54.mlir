//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

// ODS type constraint: wrong element type (only lpc.add takes integers).
func.func @mul_int(%a: tensor<4xi32>) {
  // expected-error @+1 {{'lpc.mul' op operand #0 must be ranked tensor of 32-bit float or 16-bit float or bfloat16 type or f8E4M3FN type or f8E5M2 type values, but got 'tensor<4xi32>'}}
  %0 = lpc.mul %a, %a : tensor<4xi32>
  return
}
