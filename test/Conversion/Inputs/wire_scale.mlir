// lpc.wire_scale on edge amaxes (lpc-native-wire-collectives.mlir): the
// compiled integer code against the reference evaluator. %x only keeps the
// constants from folding away: %one = x * 0 + 1 is exactly 1.
func.func @scales(%x: tensor<f32>) -> (tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>) {
  %zero = lpc.constant dense<0.0> : tensor<f32>
  %unit = lpc.constant dense<1.0> : tensor<f32>
  %x0 = lpc.mul %x, %zero : tensor<f32>
  %one = lpc.add %x0, %unit : tensor<f32>
  %c0 = lpc.constant dense<0x00000000> : tensor<f32>
  %a0 = lpc.mul %c0, %one : tensor<f32>
  %e0 = lpc.wire_scale %a0 {format = #lpc.precision<fp8_e4m3>}
  %m0 = lpc.wire_scale %a0 {format = #lpc.precision<fp8_e5m2>}
  %c1 = lpc.constant dense<0x43E00000> : tensor<f32>
  %a1 = lpc.mul %c1, %one : tensor<f32>
  %e1 = lpc.wire_scale %a1 {format = #lpc.precision<fp8_e4m3>}
  %m1 = lpc.wire_scale %a1 {format = #lpc.precision<fp8_e5m2>}
  %c2 = lpc.constant dense<0x43E00001> : tensor<f32>
  %a2 = lpc.mul %c2, %one : tensor<f32>
  %e2 = lpc.wire_scale %a2 {format = #lpc.precision<fp8_e4m3>}
  %m2 = lpc.wire_scale %a2 {format = #lpc.precision<fp8_e5m2>}
  %c3 = lpc.constant dense<0x43DFFFFF> : tensor<f32>
  %a3 = lpc.mul %c3, %one : tensor<f32>
  %e3 = lpc.wire_scale %a3 {format = #lpc.precision<fp8_e4m3>}
  %m3 = lpc.wire_scale %a3 {format = #lpc.precision<fp8_e5m2>}
  %c4 = lpc.constant dense<0x3F800000> : tensor<f32>
  %a4 = lpc.mul %c4, %one : tensor<f32>
  %e4 = lpc.wire_scale %a4 {format = #lpc.precision<fp8_e4m3>}
  %m4 = lpc.wire_scale %a4 {format = #lpc.precision<fp8_e5m2>}
  %c5 = lpc.constant dense<0x3FE00000> : tensor<f32>
  %a5 = lpc.mul %c5, %one : tensor<f32>
  %e5 = lpc.wire_scale %a5 {format = #lpc.precision<fp8_e4m3>}
  %m5 = lpc.wire_scale %a5 {format = #lpc.precision<fp8_e5m2>}
  %c6 = lpc.constant dense<0x3FE00001> : tensor<f32>
  %a6 = lpc.mul %c6, %one : tensor<f32>
  %e6 = lpc.wire_scale %a6 {format = #lpc.precision<fp8_e4m3>}
  %m6 = lpc.wire_scale %a6 {format = #lpc.precision<fp8_e5m2>}
  %c7 = lpc.constant dense<0x3FDFFFFF> : tensor<f32>
  %a7 = lpc.mul %c7, %one : tensor<f32>
  %e7 = lpc.wire_scale %a7 {format = #lpc.precision<fp8_e4m3>}
  %m7 = lpc.wire_scale %a7 {format = #lpc.precision<fp8_e5m2>}
  %c8 = lpc.constant dense<0x43600000> : tensor<f32>
  %a8 = lpc.mul %c8, %one : tensor<f32>
  %e8 = lpc.wire_scale %a8 {format = #lpc.precision<fp8_e4m3>}
  %m8 = lpc.wire_scale %a8 {format = #lpc.precision<fp8_e5m2>}
  %c9 = lpc.constant dense<0x40600000> : tensor<f32>
  %a9 = lpc.mul %c9, %one : tensor<f32>
  %e9 = lpc.wire_scale %a9 {format = #lpc.precision<fp8_e4m3>}
  %m9 = lpc.wire_scale %a9 {format = #lpc.precision<fp8_e5m2>}
  %c10 = lpc.constant dense<0x00000001> : tensor<f32>
  %a10 = lpc.mul %c10, %one : tensor<f32>
  %e10 = lpc.wire_scale %a10 {format = #lpc.precision<fp8_e4m3>}
  %m10 = lpc.wire_scale %a10 {format = #lpc.precision<fp8_e5m2>}
  %c11 = lpc.constant dense<0x000116C2> : tensor<f32>
  %a11 = lpc.mul %c11, %one : tensor<f32>
  %e11 = lpc.wire_scale %a11 {format = #lpc.precision<fp8_e4m3>}
  %m11 = lpc.wire_scale %a11 {format = #lpc.precision<fp8_e5m2>}
  %c12 = lpc.constant dense<0x04E00000> : tensor<f32>
  %a12 = lpc.mul %c12, %one : tensor<f32>
  %e12 = lpc.wire_scale %a12 {format = #lpc.precision<fp8_e4m3>}
  %m12 = lpc.wire_scale %a12 {format = #lpc.precision<fp8_e5m2>}
  %c13 = lpc.constant dense<0x04E00001> : tensor<f32>
  %a13 = lpc.mul %c13, %one : tensor<f32>
  %e13 = lpc.wire_scale %a13 {format = #lpc.precision<fp8_e4m3>}
  %m13 = lpc.wire_scale %a13 {format = #lpc.precision<fp8_e5m2>}
  %c14 = lpc.constant dense<0x04D4AD2E> : tensor<f32>
  %a14 = lpc.mul %c14, %one : tensor<f32>
  %e14 = lpc.wire_scale %a14 {format = #lpc.precision<fp8_e4m3>}
  %m14 = lpc.wire_scale %a14 {format = #lpc.precision<fp8_e5m2>}
  %c15 = lpc.constant dense<0x7F7FFFFF> : tensor<f32>
  %a15 = lpc.mul %c15, %one : tensor<f32>
  %e15 = lpc.wire_scale %a15 {format = #lpc.precision<fp8_e4m3>}
  %m15 = lpc.wire_scale %a15 {format = #lpc.precision<fp8_e5m2>}
  %c16 = lpc.constant dense<0x3DCCCCCD> : tensor<f32>
  %a16 = lpc.mul %c16, %one : tensor<f32>
  %e16 = lpc.wire_scale %a16 {format = #lpc.precision<fp8_e4m3>}
  %m16 = lpc.wire_scale %a16 {format = #lpc.precision<fp8_e5m2>}
  %c17 = lpc.constant dense<0x3BE56042> : tensor<f32>
  %a17 = lpc.mul %c17, %one : tensor<f32>
  %e17 = lpc.wire_scale %a17 {format = #lpc.precision<fp8_e4m3>}
  %m17 = lpc.wire_scale %a17 {format = #lpc.precision<fp8_e5m2>}
  %c18 = lpc.constant dense<0x47600000> : tensor<f32>
  %a18 = lpc.mul %c18, %one : tensor<f32>
  %e18 = lpc.wire_scale %a18 {format = #lpc.precision<fp8_e4m3>}
  %m18 = lpc.wire_scale %a18 {format = #lpc.precision<fp8_e5m2>}
  %c19 = lpc.constant dense<0x47600001> : tensor<f32>
  %a19 = lpc.mul %c19, %one : tensor<f32>
  %e19 = lpc.wire_scale %a19 {format = #lpc.precision<fp8_e4m3>}
  %m19 = lpc.wire_scale %a19 {format = #lpc.precision<fp8_e5m2>}
  %c20 = lpc.constant dense<0x7F800000> : tensor<f32>
  %a20 = lpc.mul %c20, %one : tensor<f32>
  %e20 = lpc.wire_scale %a20 {format = #lpc.precision<fp8_e4m3>}
  %m20 = lpc.wire_scale %a20 {format = #lpc.precision<fp8_e5m2>}
  %c21 = lpc.constant dense<0x7FC00000> : tensor<f32>
  %a21 = lpc.mul %c21, %one : tensor<f32>
  %e21 = lpc.wire_scale %a21 {format = #lpc.precision<fp8_e4m3>}
  %m21 = lpc.wire_scale %a21 {format = #lpc.precision<fp8_e5m2>}
  %c22 = lpc.constant dense<0xC0400000> : tensor<f32>
  %a22 = lpc.mul %c22, %one : tensor<f32>
  %e22 = lpc.wire_scale %a22 {format = #lpc.precision<fp8_e4m3>}
  %m22 = lpc.wire_scale %a22 {format = #lpc.precision<fp8_e5m2>}
  %c23 = lpc.constant dense<0x449A522B> : tensor<f32>
  %a23 = lpc.mul %c23, %one : tensor<f32>
  %e23 = lpc.wire_scale %a23 {format = #lpc.precision<fp8_e4m3>}
  %m23 = lpc.wire_scale %a23 {format = #lpc.precision<fp8_e5m2>}
  return %e0, %m0, %e1, %m1, %e2, %m2, %e3, %m3, %e4, %m4, %e5, %m5, %e6, %m6, %e7, %m7, %e8, %m8, %e9, %m9, %e10, %m10, %e11, %m11, %e12, %m12, %e13, %m13, %e14, %m14, %e15, %m15, %e16, %m16, %e17, %m17, %e18, %m18, %e19, %m19, %e20, %m20, %e21, %m21, %e22, %m22, %e23, %m23 : tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>
}
