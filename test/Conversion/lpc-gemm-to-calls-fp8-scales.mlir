// RUN: lpc-opt %s -split-input-file -lpc-gemm-to-calls="fp8=true" | FileCheck %s

// How an FP8 GEMM takes over its consumer's dequantization (c * (x * y),
// x and y loaded from rank-0 buffers), on bufferized IR as lpc-to-linalg
// and one-shot-bufferize leave it. (The GEMM bodies are placeholders: the
// pass reads only the lpc_gemm marker and the operand types.)

#a = affine_map<(m, n, k) -> (m, k)>
#b = affine_map<(m, n, k) -> (n, k)>
#c = affine_map<(m, n, k) -> (m, n)>
#id = affine_map<(i, j) -> (i, j)>

// The consumer only rounds the dequantized product to bf16: the call
// writes bf16 itself, and as the consumer is then a plain copy, straight
// into its output. The rhs scale was loaded before a write to its buffer
// (bufferization reuses 0-d buffers): the value loaded is kept in a buffer
// of its own for the call, freed after it.
// CHECK-LABEL: func.func @bf16_and_reused_scale
// CHECK: %[[Y:.*]] = memref.load %[[SB:.*]][] : memref<f32>
// CHECK-NEXT: %[[OWN:.*]] = memref.alloc() {{.*}} : memref<f32>
// CHECK-NEXT: memref.store %[[Y]], %[[OWN]][] : memref<f32>
// CHECK-NEXT: linalg.fill ins(%{{.*}} : f32) outs(%[[SB]] : memref<f32>)
// CHECK: %[[OUT:.*]] = memref.expand_shape %arg3
// CHECK: %[[OUT3:.*]] = memref.cast %[[OUT]]
// CHECK-NEXT: call @lpc_rt_gemm_f8e4m3_f8e4m3_scaled_bf16(%{{.*}}, %{{.*}}, %[[OUT3]], %arg2, %[[OWN]], %c0_i64, %c1_i64, %c0_i64{{.*}}) {lpc_writes = array<i64: 2>} : (memref<?x?x?xf8E4M3FN>, memref<?x?x?xf8E4M3FN>, memref<?x?x?xbf16>, memref<f32>, memref<f32>, i64, i64, i64) -> ()
// CHECK-NEXT: memref.dealloc %[[OWN]] : memref<f32>
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @bf16_and_reused_scale(%x: memref<16x16xf8E4M3FN>, %w: memref<32x16xf8E4M3FN>,
                                 %sa: memref<f32>, %out: memref<16x32xbf16>) {
  %sb = memref.alloc() : memref<f32>
  %one = arith.constant 1.0 : f32
  %two = arith.constant 2.0 : f32
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%two : f32) outs(%sb : memref<f32>)
  %y = memref.load %sb[] : memref<f32>
  linalg.fill ins(%one : f32) outs(%sb : memref<f32>)
  %acc = memref.alloc() : memref<16x32xf32>
  linalg.fill ins(%zero : f32) outs(%acc : memref<16x32xf32>)
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<16x16xf8E4M3FN>, memref<32x16xf8E4M3FN>) outs(%acc : memref<16x32xf32>)
      attrs = {lpc_gemm = array<i1: false, true>} {
  ^bb0(%p: f8E4M3FN, %q: f8E4M3FN, %o: f32):
    %pf = arith.extf %p : f8E4M3FN to f32
    %qf = arith.extf %q : f8E4M3FN to f32
    %m = arith.mulf %pf, %qf : f32
    %r = arith.addf %o, %m : f32
    linalg.yield %r : f32
  }
  %x0 = memref.load %sa[] : memref<f32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%acc : memref<16x32xf32>) outs(%out : memref<16x32xbf16>) {
  ^bb0(%in: f32, %o: bf16):
    %s = arith.mulf %x0, %y : f32
    %d = arith.mulf %in, %s : f32
    %t = arith.truncf %d : f32 to bf16
    linalg.yield %t : bf16
  }
  memref.dealloc %acc : memref<16x32xf32>
  memref.dealloc %sb : memref<f32>
  return
}

// -----

#a = affine_map<(m, n, k) -> (m, k)>
#b = affine_map<(m, n, k) -> (n, k)>
#c = affine_map<(m, n, k) -> (m, n)>
#id = affine_map<(i, j) -> (i, j)>

// Something reads the accumulator after the consumer: it must keep seeing
// the plain product, so the GEMM does not scale. Once the accumulator is
// overwritten whole, later reads do not matter.
// CHECK-LABEL: func.func @read_later
// CHECK: call @lpc_rt_gemm_f8e4m3_f8e4m3(
// CHECK-LABEL: func.func @overwritten
// CHECK: call @lpc_rt_gemm_f8e4m3_f8e4m3_scaled(
// An accumulator the caller sees (a result buffer) keeps the plain product.
// CHECK-LABEL: func.func @result
// CHECK: call @lpc_rt_gemm_f8e4m3_f8e4m3(
func.func @read_later(%x: memref<16x16xf8E4M3FN>, %w: memref<32x16xf8E4M3FN>,
                      %sa: memref<f32>, %out: memref<16x32xf32>, %out2: memref<16x32xf32>) {
  %acc = memref.alloc() : memref<16x32xf32>
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<16x16xf8E4M3FN>, memref<32x16xf8E4M3FN>) outs(%acc : memref<16x32xf32>)
      attrs = {lpc_gemm = array<i1: false, true>} {
  ^bb0(%p: f8E4M3FN, %q: f8E4M3FN, %o: f32):
    %pf = arith.extf %p : f8E4M3FN to f32
    %qf = arith.extf %q : f8E4M3FN to f32
    %m = arith.mulf %pf, %qf : f32
    %r = arith.addf %o, %m : f32
    linalg.yield %r : f32
  }
  %x0 = memref.load %sa[] : memref<f32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%acc : memref<16x32xf32>) outs(%out : memref<16x32xf32>) {
  ^bb0(%in: f32, %o: f32):
    %s = arith.mulf %x0, %x0 : f32
    %d = arith.mulf %in, %s : f32
    linalg.yield %d : f32
  }
  memref.copy %acc, %out2 : memref<16x32xf32> to memref<16x32xf32>
  memref.dealloc %acc : memref<16x32xf32>
  return
}
func.func @overwritten(%x: memref<16x16xf8E4M3FN>, %w: memref<32x16xf8E4M3FN>,
                       %sa: memref<f32>, %out: memref<16x32xf32>, %out2: memref<16x32xf32>) {
  %acc = memref.alloc() : memref<16x32xf32>
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<16x16xf8E4M3FN>, memref<32x16xf8E4M3FN>) outs(%acc : memref<16x32xf32>)
      attrs = {lpc_gemm = array<i1: false, true>} {
  ^bb0(%p: f8E4M3FN, %q: f8E4M3FN, %o: f32):
    %pf = arith.extf %p : f8E4M3FN to f32
    %qf = arith.extf %q : f8E4M3FN to f32
    %m = arith.mulf %pf, %qf : f32
    %r = arith.addf %o, %m : f32
    linalg.yield %r : f32
  }
  %x0 = memref.load %sa[] : memref<f32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%acc : memref<16x32xf32>) outs(%out : memref<16x32xf32>) {
  ^bb0(%in: f32, %o: f32):
    %s = arith.mulf %x0, %x0 : f32
    %d = arith.mulf %in, %s : f32
    linalg.yield %d : f32
  }
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%out : memref<16x32xf32>) outs(%acc : memref<16x32xf32>) {
  ^bb0(%in: f32, %o: f32):
    linalg.yield %in : f32
  }
  memref.copy %acc, %out2 : memref<16x32xf32> to memref<16x32xf32>
  memref.dealloc %acc : memref<16x32xf32>
  return
}
func.func @result(%x: memref<16x16xf8E4M3FN>, %w: memref<32x16xf8E4M3FN>,
                  %sa: memref<f32>, %acc: memref<16x32xf32>, %out: memref<16x32xf32>) {
  linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<16x16xf8E4M3FN>, memref<32x16xf8E4M3FN>) outs(%acc : memref<16x32xf32>)
      attrs = {lpc_gemm = array<i1: false, true>} {
  ^bb0(%p: f8E4M3FN, %q: f8E4M3FN, %o: f32):
    %pf = arith.extf %p : f8E4M3FN to f32
    %qf = arith.extf %q : f8E4M3FN to f32
    %m = arith.mulf %pf, %qf : f32
    %r = arith.addf %o, %m : f32
    linalg.yield %r : f32
  }
  %x0 = memref.load %sa[] : memref<f32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%acc : memref<16x32xf32>) outs(%out : memref<16x32xf32>) {
  ^bb0(%in: f32, %o: f32):
    %s = arith.mulf %x0, %x0 : f32
    %d = arith.mulf %in, %s : f32
    linalg.yield %d : f32
  }
  return
}
