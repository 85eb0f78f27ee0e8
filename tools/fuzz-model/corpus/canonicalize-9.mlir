// scale by 2 then by 3 must NOT merge into scale by 6: x * 2 * 3 and x * 6
// round differently (and x * 2 may overflow where x * 6 does not, or the
// other way round in low precision).
func.func @scale_scale_no_merge(%x: tensor<4xbf16>) -> tensor<4xbf16> {
  %0 = lpc.scale %x {factor = 2.0 : f64} : tensor<4xbf16>
  %1 = lpc.scale %0 {factor = 3.0 : f64} : tensor<4xbf16>
  return %1 : tensor<4xbf16>
}
