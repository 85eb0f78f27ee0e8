// RUN: lpc-opt %s -split-input-file --lpc-merge-independent-kernels="distinct-args" | FileCheck %s
// RUN: lpc-opt %s -split-input-file --lpc-merge-independent-kernels | FileCheck %s --check-prefix=ALIAS
// RUN: lpc-opt %s -split-input-file --lpc-merge-independent-kernels="distinct-args max-param-bytes=100" | FileCheck %s --check-prefix=PARAMS

// Two FP8-style tails (a final reduction stage, then a scale from it) of
// two tensors, each right after its partials, with a GEMM call between
// them that reads neither: both sink to the end, where the first stages
// (independent) become one loop of 4 + 8 iterations and the second stages
// another of 1 + 1, after the first. The call stays first; the
// deallocation of the partials moves after the loops that read them.

// CHECK-LABEL: func.func @tails
// CHECK: call @lpc_rt_gemm
// CHECK: scf.parallel (%[[I:.*]]) = (%{{.*}}) to (%c12) step
// CHECK: %[[LOW:.*]] = arith.cmpi ult, %[[I]], %c8
// CHECK: scf.if %[[LOW]] {
// CHECK: memref.load %{{.*}}[%[[I]]] : memref<8xf32>
// CHECK: } else {
// CHECK: %[[J:.*]] = arith.subi %[[I]], %c8
// CHECK: memref.load %[[PA:.*]][%[[J]]] : memref<4xf32>
// CHECK: scf.parallel (%{{.*}}) = (%{{.*}}) to (%c2) step
// CHECK: scf.if
// CHECK: memref.store {{.*}}, %arg3[]
// CHECK: } else {
// CHECK: memref.store {{.*}}, %arg2[]
// CHECK: memref.dealloc %[[PA]]
// CHECK: return

// Without distinct-args, the call may write the arguments the second
// stages write: the first tail cannot pass it, and nothing merges.
// ALIAS-LABEL: func.func @tails
// ALIAS: to (%c4) step
// ALIAS: to (%c1) step
// ALIAS: call @lpc_rt_gemm
// ALIAS-NOT: to (%c12)
// ALIAS-LABEL: func.func @chain

// A merged loop's parameters stay within max-param-bytes: with 100 bytes,
// nothing merges.
// PARAMS-LABEL: func.func @tails
// PARAMS-NOT: to (%c12)
// PARAMS-NOT: to (%c2)
// PARAMS-LABEL: func.func @chain
func.func private @lpc_rt_gemm(memref<16x16xf32>, memref<16x16xf32>)
func.func @tails(%x: memref<16x16xf32>, %y: memref<16x16xf32>,
                 %s0: memref<f32>, %s1: memref<f32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %pa = memref.alloc() : memref<4xf32>
  %pb = memref.alloc() : memref<8xf32>
  %ta = memref.alloc() : memref<4xf32>
  %tb = memref.alloc() : memref<8xf32>
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    %v = memref.load %pa[%i] : memref<4xf32>
    memref.store %v, %ta[%i] : memref<4xf32>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%c1) step (%c1) {
    %v = memref.load %ta[%c0] : memref<4xf32>
    memref.store %v, %s0[] : memref<f32>
    scf.reduce
  }
  call @lpc_rt_gemm(%x, %y) : (memref<16x16xf32>, memref<16x16xf32>) -> ()
  memref.dealloc %pa : memref<4xf32>
  scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
    %v = memref.load %pb[%i] : memref<8xf32>
    memref.store %v, %tb[%i] : memref<8xf32>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%c1) step (%c1) {
    %v = memref.load %tb[%c0] : memref<8xf32>
    memref.store %v, %s1[] : memref<f32>
    scf.reduce
  }
  return
}

// -----

// A kernel whose result a later kernel reads stops before it (and a
// kernel that writes what an earlier one reads runs after it): the chain
// keeps its order. Reading one buffer from two kernels is no conflict:
// both readers of %w merge.

// CHECK-LABEL: func.func @chain
// CHECK: scf.parallel (%{{.*}}) = (%{{.*}}) to (%c3) step
// CHECK: memref.load %arg0
// CHECK: memref.load %arg0
// CHECK: scf.parallel (%{{.*}}) = (%{{.*}}) to (%c1{{(_[0-9]+)?}}) step
// CHECK: memref.load %[[A:.*]][%
// CHECK-NOT: scf.parallel
// CHECK: return
func.func @chain(%w: memref<2xf32>, %out: memref<f32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %a = memref.alloc() : memref<2xf32>
  %b = memref.alloc() : memref<f32>
  scf.parallel (%i) = (%c0) to (%c2) step (%c1) {
    %v = memref.load %w[%i] : memref<2xf32>
    memref.store %v, %a[%i] : memref<2xf32>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%c1) step (%c1) {
    %v = memref.load %w[%c0] : memref<2xf32>
    memref.store %v, %b[] : memref<f32>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%c1) step (%c1) {
    %v = memref.load %a[%c1] : memref<2xf32>
    %u = memref.load %b[] : memref<f32>
    %s = arith.addf %u, %v : f32
    memref.store %s, %out[] : memref<f32>
    scf.reduce
  }
  memref.dealloc %a : memref<2xf32>
  memref.dealloc %b : memref<f32>
  return
}

// -----

// Small copies become one-thread loops first (and sink and merge like the
// kernels: independent ones may change places); a loop that writes memory lpc cannot trace to an allocation or
// an argument (a global here) may touch anything: it stays after them and
// merges with nothing.

// CHECK-LABEL: func.func @copies
// CHECK-NOT: memref.copy
// CHECK: %[[G:.*]] = memref.get_global @g
// CHECK: scf.parallel (%{{.*}}) = (%{{.*}}) to (%c2{{(_[0-9]+)?}}) step
// CHECK: scf.if
// CHECK: memref.load %arg1[]
// CHECK: memref.store {{.*}}, %arg3[]
// CHECK: } else {
// CHECK: memref.load %arg0[]
// CHECK: memref.store {{.*}}, %arg2[]
// CHECK: scf.parallel
// CHECK: memref.store {{.*}}, %[[G]]
memref.global "private" @g : memref<f32> = dense<0.0>
func.func @copies(%a: memref<f32>, %b: memref<f32>, %c: memref<f32>,
                  %d: memref<f32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  memref.copy %a, %c : memref<f32> to memref<f32>
  memref.copy %b, %d : memref<f32> to memref<f32>
  %g = memref.get_global @g : memref<f32>
  scf.parallel (%i) = (%c0) to (%c1) step (%c1) {
    %v = memref.load %a[] : memref<f32>
    memref.store %v, %g[] : memref<f32>
    scf.reduce
  }
  return
}
