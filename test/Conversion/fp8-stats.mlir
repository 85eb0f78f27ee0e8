// lpc.fp8_stats: the fractions of a tensor that saturate or underflow when
// quantized with a scale, in the reference evaluator (exact counts) and in
// the CPU back end (bit-identical to it, on crafted and random inputs).
// RUN: lpc-eval %s --function=crafted --print=full | FileCheck %s --check-prefix=REF
// RUN: lpc-jit %s --function=crafted --exact | FileCheck %s
// RUN: lpc-jit %s --function=random --exact --input-std=100 | FileCheck %s
// RUN: lpc-jit %s --function=random --exact --input-std=1e-3 --seed=7 | FileCheck %s
// CHECK-NOT: MISMATCH
// CHECK: all results match the reference evaluator

// 8 elements, scale 1. E4M3 (max 448, half the smallest subnormal 2^-10):
// 500 and -1000 saturate (2/8); 1e-30 and 2^-10 (a tie, rounds to 0)
// underflow, 2^-10 * 1.0001 does not, 0 and NaN count as neither (2/8).
// E5M2 (max 57344, half-subnormal 2^-17): nothing saturates, only 1e-30
// underflows (1/8). With scale 1024 under E4M3: 500 and 1.0 and -1000
// saturate (3/8), only 1e-30 underflows (1/8).
// REF:      result #0: tensor<f32>
// REF-NEXT:   0.25
// REF-NEXT: result #1: tensor<f32>
// REF-NEXT:   0.25
// REF-NEXT: result #2: tensor<f32>
// REF-NEXT:   0
// REF-NEXT: result #3: tensor<f32>
// REF-NEXT:   0.125
// REF-NEXT: result #4: tensor<f32>
// REF-NEXT:   0.375
// REF-NEXT: result #5: tensor<f32>
// REF-NEXT:   0.125
func.func @crafted() -> (tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>) {
  %x = lpc.constant dense<[0.0, 1.0e-30, 500.0, -1000.0, 1.0, 0.0009765625, 0.00097662210464477539, 0x7FC00000]> : tensor<8xf32>
  %one = lpc.constant dense<1.0> : tensor<f32>
  %big = lpc.constant dense<1024.0> : tensor<f32>
  %s0, %u0 = lpc.fp8_stats %x, %one {format = #lpc.precision<fp8_e4m3>} : tensor<8xf32>
  %s1, %u1 = lpc.fp8_stats %x, %one {format = #lpc.precision<fp8_e5m2>} : tensor<8xf32>
  %s2, %u2 = lpc.fp8_stats %x, %big {format = #lpc.precision<fp8_e4m3>} : tensor<8xf32>
  return %s0, %u0, %s1, %u1, %s2, %u2 : tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>
}

func.func @random(%x: tensor<64x96xf32>, %y: tensor<64x96xbf16>) -> (tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>) {
  %scale = lpc.constant dense<3.5> : tensor<f32>
  %s0, %u0 = lpc.fp8_stats %x, %scale {format = #lpc.precision<fp8_e4m3>} : tensor<64x96xf32>
  %s1, %u1 = lpc.fp8_stats %y, %scale {format = #lpc.precision<fp8_e5m2>} : tensor<64x96xbf16>
  return %s0, %u0, %s1, %u1 : tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>
}
