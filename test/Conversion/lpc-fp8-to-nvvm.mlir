// RUN: lpc-opt %s -split-input-file --lpc-fp8-to-nvvm | FileCheck %s

// A non-saturating E4M3FN cast: the instruction saturates, so |x| > 464
// (past the tie with 448, which rounds to the even 448), inf and NaN become
// lpc's NaN, 0x7F with x's sign. 1139277825 = bits(464.0) + 1.
// CHECK-LABEL: func.func @truncf_e4m3
// CHECK-SAME: (%[[X:.*]]: f32)
// CHECK: %[[P:.*]] = nvvm.convert.f32x2.to.f8x2 %[[X]], %[[X]] {rnd = #nvvm.fp_rnd_mode<rn>, sat = #nvvm.sat_mode<satfinite>} : i16(f8E4M3FN)
// CHECK: %[[C:.*]] = arith.trunci %[[P]] : i16 to i8
// CHECK: %[[BITS:.*]] = arith.bitcast %[[X]] : f32 to i32
// CHECK: %[[ABS:.*]] = arith.andi %[[BITS]], %c2147483647_i32 : i32
// CHECK: %[[TOP:.*]] = arith.shrui %[[BITS]], %c24_i32 : i32
// CHECK: %[[TOP8:.*]] = arith.trunci %[[TOP]] : i32 to i8
// CHECK: %[[SIGN:.*]] = arith.andi %[[TOP8]], %c-128_i8 : i8
// CHECK: %[[OVER:.*]] = arith.cmpi uge, %[[ABS]], %c1139277825_i32 : i32
// CHECK: %[[NAN:.*]] = arith.ori %[[SIGN]], %c127_i8 : i8
// CHECK: %[[R:.*]] = arith.select %[[OVER]], %[[NAN]], %[[C]] : i8
// CHECK-NOT: arith.select
// CHECK: %[[Y:.*]] = arith.bitcast %[[R]] : i8 to f8E4M3FN
// CHECK: return %[[Y]]
func.func @truncf_e4m3(%x: f32) -> f8E4M3FN {
  %y = arith.truncf %x : f32 to f8E4M3FN
  return %y : f8E4M3FN
}

// -----

// E5M2: |x| >= 61440 (the tie rounds up, 57344 is odd) and inf give inf
// (0x7C | sign), NaN gives 0x7E | sign. 1198522368 = bits(61440.0),
// 2139095041 = bits(inf) + 1.
// CHECK-LABEL: func.func @truncf_e5m2
// CHECK: %[[C:.*]] = arith.trunci %{{.*}} : i16 to i8
// CHECK: %[[SIGN:.*]] = arith.andi %{{.*}}, %c-128_i8 : i8
// CHECK: %[[OVER:.*]] = arith.cmpi uge, %[[ABS:.*]], %c1198522368_i32 : i32
// CHECK: %[[INF:.*]] = arith.ori %[[SIGN]], %c124_i8 : i8
// CHECK: %[[R1:.*]] = arith.select %[[OVER]], %[[INF]], %[[C]] : i8
// CHECK: %[[ISNAN:.*]] = arith.cmpi uge, %[[ABS]], %c2139095041_i32 : i32
// CHECK: %[[NAN:.*]] = arith.ori %[[SIGN]], %c126_i8 : i8
// CHECK: %[[R2:.*]] = arith.select %[[ISNAN]], %[[NAN]], %[[R1]] : i8
// CHECK: arith.bitcast %[[R2]] : i8 to f8E5M2
func.func @truncf_e5m2(%x: f32) -> f8E5M2 {
  %y = arith.truncf %x : f32 to f8E5M2
  return %y : f8E5M2
}

// -----

// A truncf of a clamp to +-max is lpc's saturating cast: the instruction's
// own saturation replaces the clamp (in either operand order); only NaN is
// fixed, with the sign of the unclamped x.
// CHECK-LABEL: func.func @saturating
// CHECK-SAME: (%[[X:.*]]: f32)
// CHECK-NOT: arith.maximumf
// CHECK-NOT: arith.minimumf
// CHECK: %[[P:.*]] = nvvm.convert.f32x2.to.f8x2 %[[X]], %[[X]] {{.*}} : i16(f8E4M3FN)
// CHECK: arith.bitcast %[[X]] : f32 to i32
// CHECK: %[[ISNAN:.*]] = arith.cmpi uge, %{{.*}}, %c2139095041_i32 : i32
// CHECK: arith.select %[[ISNAN]]
// CHECK-NOT: arith.select
// CHECK: %[[P2:.*]] = nvvm.convert.f32x2.to.f8x2 %[[X]], %[[X]] {{.*}} : i16(f8E5M2)
// CHECK: %[[ISNAN2:.*]] = arith.cmpi uge, %{{.*}}, %c2139095041_i32_{{[0-9]+}} : i32
// CHECK: arith.select %[[ISNAN2]]
// CHECK-NOT: arith.select
// CHECK: return
func.func @saturating(%x: f32) -> (f8E4M3FN, f8E5M2) {
  %max = arith.constant 448.0 : f32
  %min = arith.constant -448.0 : f32
  %0 = arith.maximumf %x, %min : f32
  %1 = arith.minimumf %0, %max : f32
  %y = arith.truncf %1 : f32 to f8E4M3FN
  %max5 = arith.constant 57344.0 : f32
  %min5 = arith.constant -57344.0 : f32
  %2 = arith.maximumf %min5, %x : f32
  %3 = arith.minimumf %max5, %2 : f32
  %z = arith.truncf %3 : f32 to f8E5M2
  return %y, %z : f8E4M3FN, f8E5M2
}

// -----

// A clamp to anything but the format's largest value is no saturating
// cast: it stays, and the non-saturating fix-up follows the instruction.
// CHECK-LABEL: func.func @other_clamp
// CHECK: %[[LO:.*]] = arith.maximumf
// CHECK: %[[HI:.*]] = arith.minimumf %[[LO]]
// CHECK: nvvm.convert.f32x2.to.f8x2 %[[HI]], %[[HI]]
// CHECK: arith.cmpi uge, %{{.*}}, %c1139277825_i32 : i32
func.func @other_clamp(%x: f32) -> f8E4M3FN {
  %max = arith.constant 240.0 : f32
  %min = arith.constant -448.0 : f32
  %0 = arith.maximumf %x, %min : f32
  %1 = arith.minimumf %0, %max : f32
  %y = arith.truncf %1 : f32 to f8E4M3FN
  return %y : f8E4M3FN
}

// -----

// Narrower sources are extended to f32 first (exactly).
// CHECK-LABEL: func.func @from_bf16
// CHECK-SAME: (%[[X:.*]]: bf16)
// CHECK: %[[W:.*]] = arith.extf %[[X]] : bf16 to f32
// CHECK: nvvm.convert.f32x2.to.f8x2 %[[W]], %[[W]]
func.func @from_bf16(%x: bf16) -> f8E5M2 {
  %y = arith.truncf %x : bf16 to f8E5M2
  return %y : f8E5M2
}

// -----

// canonicalize folds truncf(sitofp(i)) into sitofp to fp8: the same through
// f32 (exact below 2^24, overflow above either way).
// CHECK-LABEL: func.func @from_int
// CHECK-SAME: (%[[I:.*]]: i32, %[[J:.*]]: i64)
// CHECK: %[[F:.*]] = arith.sitofp %[[I]] : i32 to f32
// CHECK: nvvm.convert.f32x2.to.f8x2 %[[F]], %[[F]] {{.*}} : i16(f8E4M3FN)
// CHECK: arith.cmpi uge, %{{.*}}, %c1139277825_i32 : i32
// CHECK: %[[G:.*]] = arith.uitofp %[[J]] : i64 to f32
// CHECK: nvvm.convert.f32x2.to.f8x2 %[[G]], %[[G]] {{.*}} : i16(f8E5M2)
// CHECK: arith.cmpi uge, %{{.*}}, %c1198522368_i32 : i32
func.func @from_int(%i: i32, %j: i64) -> (f8E4M3FN, f8E5M2) {
  %a = arith.sitofp %i : i32 to f8E4M3FN
  %b = arith.uitofp %j : i64 to f8E5M2
  return %a, %b : f8E4M3FN, f8E5M2
}

// -----

// Decoding: the byte in both lanes, cvt.rn.f16x2.e4m3x2 (exact), f16 -> f32
// (exact); NaN becomes the default quiet NaN with the byte's sign.
// CHECK-LABEL: func.func @extf_e4m3
// CHECK-SAME: (%[[V:.*]]: f8E4M3FN)
// CHECK: %[[B:.*]] = arith.bitcast %[[V]] : f8E4M3FN to i8
// CHECK: %[[P0:.*]] = llvm.mlir.poison : vector<2xi8>
// CHECK: %[[P1:.*]] = llvm.insertelement %[[B]], %[[P0]][%{{.*}} : i32] : vector<2xi8>
// CHECK: %[[P2:.*]] = llvm.insertelement %[[B]], %[[P1]][%{{.*}} : i32] : vector<2xi8>
// CHECK: %[[H2:.*]] = nvvm.convert.f8x2.to.f16x2 %[[P2]] : vector<2xi8>(f8E4M3FN) -> vector<2xf16>
// CHECK: %[[H:.*]] = llvm.extractelement %[[H2]][%{{.*}} : i32] : vector<2xf16>
// CHECK: %[[F:.*]] = arith.extf %[[H]] : f16 to f32
// CHECK: %[[NEG:.*]] = arith.cmpi slt, %[[B]], %c0_i8 : i8
// CHECK: %[[NEGNAN:.*]] = arith.constant 0xFFC00000 : f32
// CHECK: %[[POSNAN:.*]] = arith.constant 0x7FC00000 : f32
// CHECK: %[[NAN:.*]] = arith.select %[[NEG]], %[[NEGNAN]], %[[POSNAN]] : f32
// CHECK: %[[ISNAN:.*]] = arith.cmpf uno, %[[F]], %[[F]] : f32
// CHECK: %[[R:.*]] = arith.select %[[ISNAN]], %[[NAN]], %[[F]] : f32
// CHECK: return %[[R]]
func.func @extf_e4m3(%v: f8E4M3FN) -> f32 {
  %y = arith.extf %v : f8E4M3FN to f32
  return %y : f32
}

// -----

// To f16 the instruction's result is final but for NaN.
// CHECK-LABEL: func.func @extf_e5m2_f16
// CHECK: %[[H2:.*]] = nvvm.convert.f8x2.to.f16x2 %{{.*}} : vector<2xi8>(f8E5M2) -> vector<2xf16>
// CHECK: %[[H:.*]] = llvm.extractelement %[[H2]]
// CHECK-NOT: arith.extf
// CHECK: arith.constant 0xFE00 : f16
// CHECK: arith.constant 0x7E00 : f16
// CHECK: arith.cmpf uno, %[[H]], %[[H]] : f16
func.func @extf_e5m2_f16(%v: f8E5M2) -> f16 {
  %y = arith.extf %v : f8E5M2 to f16
  return %y : f16
}

// -----

// Other fp8 formats and other conversions are not this pass's.
// CHECK-LABEL: func.func @others
// CHECK: arith.truncf %{{.*}} : f32 to f8E4M3FNUZ
// CHECK: arith.truncf %{{.*}} : f32 to bf16
// CHECK-NOT: nvvm.
func.func @others(%x: f32) -> (f8E4M3FNUZ, bf16) {
  %y = arith.truncf %x : f32 to f8E4M3FNUZ
  %z = arith.truncf %x : f32 to bf16
  return %y, %z : f8E4M3FNUZ, bf16
}

// -----

// In a gpu.module for sm_89 (with PTX 8.1) or later.
// CHECK-LABEL: gpu.module @sm89
// CHECK: nvvm.convert.f32x2.to.f8x2
// CHECK-LABEL: gpu.module @sm90
// CHECK: nvvm.convert.f8x2.to.f16x2
module attributes {gpu.container_module} {
  gpu.module @sm89 [#nvvm.target<chip = "sm_89", features = "+ptx81">] {
    gpu.func @k(%x: f32, %out: memref<1xf8E4M3FN>) kernel {
      %c0 = arith.constant 0 : index
      %y = arith.truncf %x : f32 to f8E4M3FN
      memref.store %y, %out[%c0] : memref<1xf8E4M3FN>
      gpu.return
    }
  }
  gpu.module @sm90 [#nvvm.target<chip = "sm_90a">] {
    gpu.func @k(%v: f8E5M2, %out: memref<1xf32>) kernel {
      %c0 = arith.constant 0 : index
      %y = arith.extf %v : f8E5M2 to f32
      memref.store %y, %out[%c0] : memref<1xf32>
      gpu.return
    }
  }
}
