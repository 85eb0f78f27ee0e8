// RUN: lpc-opt %s -split-input-file -lpc-gemm-to-calls | FileCheck %s

// A bf16 GEMM whose f32 accumulator is only copied, rounded, into another
// buffer that nothing touches in between writes that buffer itself: no
// accumulator, no copy.

#mA = affine_map<(d0, d1, d2) -> (d0, d2)>
#mB = affine_map<(d0, d1, d2) -> (d2, d1)>
#mC = affine_map<(d0, d1, d2) -> (d0, d1)>
#id = affine_map<(d0, d1) -> (d0, d1)>

// CHECK-LABEL: func.func @into_copy_target(
// CHECK-SAME: %[[A:.*]]: memref<4x8xbf16>, %[[B:.*]]: memref<8x16xbf16>, %[[OUT:.*]]: memref<4x16xbf16>)
// CHECK-NOT: memref.alloc
// CHECK: %[[O3:.*]] = memref.expand_shape %[[OUT]]
// CHECK: %[[OC:.*]] = memref.cast %[[O3]]
// CHECK: call @lpc_rt_gemm_bf16_bf16(%{{.*}}, %{{.*}}, %[[OC]],
// CHECK-NOT: linalg.generic
// CHECK-NOT: memref.dealloc
// CHECK: return
func.func @into_copy_target(%a: memref<4x8xbf16>, %b: memref<8x16xbf16>, %out: memref<4x16xbf16>) {
  %zero = arith.constant 0.0 : f32
  %c = memref.alloc() {alignment = 64 : i64} : memref<4x16xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<4x16xf32>)
  linalg.generic {indexing_maps = [#mA, #mB, #mC], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a, %b : memref<4x8xbf16>, memref<8x16xbf16>) outs(%c : memref<4x16xf32>) attrs = {lpc_gemm = array<i1: false, false>} {
  ^bb0(%x: bf16, %y: bf16, %acc: f32):
    %xe = arith.extf %x : bf16 to f32
    %ye = arith.extf %y : bf16 to f32
    %p = arith.mulf %xe, %ye : f32
    %s = arith.addf %acc, %p fastmath<reassoc> : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%c : memref<4x16xf32>) outs(%out : memref<4x16xbf16>) {
  ^bb0(%x: f32, %o: bf16):
    %r = arith.truncf %x : f32 to bf16
    linalg.yield %r : bf16
  }
  memref.dealloc %c : memref<4x16xf32>
  return
}

// -----

#mA = affine_map<(d0, d1, d2) -> (d0, d2)>
#mB = affine_map<(d0, d1, d2) -> (d2, d1)>
#mC = affine_map<(d0, d1, d2) -> (d0, d1)>
#id = affine_map<(d0, d1) -> (d0, d1)>

// The target is read between the GEMM and the copy: C gets a bf16 buffer
// of its own, the copy stays (now bf16 to bf16).
// CHECK-LABEL: func.func @target_read_before(
// CHECK: %[[CB:.*]] = memref.alloc() {alignment = 64 : i64} : memref<4x16xbf16>
// CHECK: call @lpc_rt_gemm_bf16_bf16(
// CHECK: memref.load %arg2
// CHECK: linalg.generic {{.*}} ins(%[[CB]] : memref<4x16xbf16>) outs(%arg2 : memref<4x16xbf16>)
// CHECK: memref.dealloc %[[CB]]

// A reader that uses the f32 value itself (not only rounded): f32 C stays.
// CHECK-LABEL: func.func @f32_reader(
// CHECK: call @lpc_rt_gemm_bf16(
// CHECK: arith.mulf
func.func @target_read_before(%a: memref<4x8xbf16>, %b: memref<8x16xbf16>, %out: memref<4x16xbf16>) -> bf16 {
  %i0 = arith.constant 0 : index
  %c = memref.alloc() {alignment = 64 : i64} : memref<4x16xf32>
  linalg.generic {indexing_maps = [#mA, #mB, #mC], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a, %b : memref<4x8xbf16>, memref<8x16xbf16>) outs(%c : memref<4x16xf32>) attrs = {lpc_gemm = array<i1: false, false>} {
  ^bb0(%x: bf16, %y: bf16, %acc: f32):
    %xe = arith.extf %x : bf16 to f32
    %ye = arith.extf %y : bf16 to f32
    %p = arith.mulf %xe, %ye : f32
    %s = arith.addf %acc, %p fastmath<reassoc> : f32
    linalg.yield %s : f32
  }
  %old = memref.load %out[%i0, %i0] : memref<4x16xbf16>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%c : memref<4x16xf32>) outs(%out : memref<4x16xbf16>) {
  ^bb0(%x: f32, %o: bf16):
    %r = arith.truncf %x : f32 to bf16
    linalg.yield %r : bf16
  }
  memref.dealloc %c : memref<4x16xf32>
  return %old : bf16
}

func.func @f32_reader(%a: memref<4x8xbf16>, %b: memref<8x16xbf16>, %out: memref<4x16xf32>) {
  %c = memref.alloc() {alignment = 64 : i64} : memref<4x16xf32>
  linalg.generic {indexing_maps = [#mA, #mB, #mC], iterator_types = ["parallel", "parallel", "reduction"]} ins(%a, %b : memref<4x8xbf16>, memref<8x16xbf16>) outs(%c : memref<4x16xf32>) attrs = {lpc_gemm = array<i1: false, false>} {
  ^bb0(%x: bf16, %y: bf16, %acc: f32):
    %xe = arith.extf %x : bf16 to f32
    %ye = arith.extf %y : bf16 to f32
    %p = arith.mulf %xe, %ye : f32
    %s = arith.addf %acc, %p fastmath<reassoc> : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%c : memref<4x16xf32>) outs(%out : memref<4x16xf32>) {
  ^bb0(%x: f32, %o: f32):
    %r = arith.mulf %x, %x : f32
    linalg.yield %r : f32
  }
  memref.dealloc %c : memref<4x16xf32>
  return
}
