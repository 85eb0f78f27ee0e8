// quantize(reshape(x), s) quantizes x itself, then reshapes the FP8 copy:
// with the forward's quantize of x (same scale) CSE keeps one FP8 copy for
// the fprop and the weight-gradient GEMMs. amax and fp8_stats are over all
// elements: they read x directly.
func.func @fp8_of_reshape(%x: tensor<2x8x4xf32>, %s: tensor<f32>) -> (tensor<16x4xf8E4M3FN>, tensor<f32>, tensor<f32>, tensor<f32>) {
  %r = lpc.reshape %x : tensor<2x8x4xf32> -> tensor<16x4xf32>
  %q = lpc.quantize %r, %s : tensor<16x4xf32> to tensor<16x4xf8E4M3FN>
  %a = lpc.amax %r : tensor<16x4xf32>
  %sat, %und = lpc.fp8_stats %r, %s {format = #lpc.precision<fp8_e4m3>} : tensor<16x4xf32>
  return %q, %a, %sat, %und : tensor<16x4xf8E4M3FN>, tensor<f32>, tensor<f32>, tensor<f32>
}
