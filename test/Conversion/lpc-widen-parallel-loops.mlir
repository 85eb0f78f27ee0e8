// RUN: lpc-opt %s -split-input-file --lpc-widen-parallel-loops | FileCheck %s
// RUN: lpc-opt %s -split-input-file --lpc-widen-parallel-loops="bytes=4" | FileCheck %s --check-prefix=B4

// bf16 is the narrowest element along the innermost dimension: 8 per
// iteration (16 bytes), each op copied 8 times in a row, the stores last,
// grouped per store of the body. The row-indexed load and the f32 column
// load come along. With bytes=4: 2 per iteration.
// CHECK-LABEL: func.func @mixed
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[C4:.*]] = arith.constant 4 : index
// CHECK-DAG: %[[C8:.*]] = arith.constant 8 : index
// CHECK: scf.parallel (%[[I:.*]], %[[J:.*]]) = (%[[C0]], %[[C0]]) to (%[[C4]], %[[C8]]) step (%[[C1]], %[[C1]])
// CHECK: %[[B:.*]] = arith.muli %[[J]], %{{.*}} : index
// CHECK-COUNT-7: arith.addi %[[B]]
// CHECK: memref.load %{{.*}}[%[[I]], %[[B]]] : memref<4x64xbf16>
// CHECK-COUNT-7: memref.load %{{.*}} : memref<4x64xbf16>
// CHECK-COUNT-8: memref.load %{{.*}} : memref<64xf32>
// CHECK-COUNT-8: memref.load %{{.*}}[%[[I]]] : memref<4xf32>
// CHECK-COUNT-8: arith.extf
// CHECK-NOT: memref.load
// CHECK-COUNT-8: memref.store %{{.*}} : memref<4x64xf32>
// CHECK-COUNT-8: memref.store %{{.*}} : memref<4x64xbf16>
// CHECK-NEXT: scf.reduce
// B4-LABEL: func.func @mixed
// B4: scf.parallel {{.*}} to (%{{.*}}, %c32)
// B4-COUNT-2: memref.store %{{.*}} : memref<4x64xf32>
// B4-NOT: memref.store %{{.*}} : memref<4x64xf32>
func.func @mixed(%a: memref<4x64xbf16>, %b: memref<64xf32>, %r: memref<4xf32>,
                 %c: memref<4x64xf32>, %d: memref<4x64xbf16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c64 = arith.constant 64 : index
  scf.parallel (%i, %j) = (%c0, %c0) to (%c4, %c64) step (%c1, %c1) {
    %x = memref.load %a[%i, %j] : memref<4x64xbf16>
    %y = memref.load %b[%j] : memref<64xf32>
    %z = memref.load %r[%i] : memref<4xf32>
    %xf = arith.extf %x : bf16 to f32
    %s0 = arith.addf %xf, %y : f32
    %s = arith.mulf %s0, %z : f32
    memref.store %s, %c[%i, %j] : memref<4x64xf32>
    %t = arith.truncf %s : f32 to bf16
    memref.store %t, %d[%i, %j] : memref<4x64xbf16>
    scf.reduce
  }
  return
}

// -----

// f32 only: 4 per iteration; 12 elements take 4 (3 iterations); 6 take 2
// (8 does not divide 6, nor 4); 7 stay as they are.
// CHECK-LABEL: func.func @sizes
// CHECK: scf.parallel (%{{.*}}) = (%{{.*}}) to (%c3) step
// CHECK-COUNT-4: memref.store
// CHECK: scf.parallel (%{{.*}}) = (%{{.*}}) to (%c3{{.*}}) step
// CHECK-COUNT-2: memref.store
// CHECK-NOT: memref.store
// CHECK: scf.parallel (%{{.*}}) = (%{{.*}}) to (%c7) step
// CHECK-COUNT-1: memref.store
// CHECK-NOT: memref.store
func.func @sizes(%a: memref<12xf32>, %b: memref<6xf32>, %c: memref<7xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c6 = arith.constant 6 : index
  %c7 = arith.constant 7 : index
  %c12 = arith.constant 12 : index
  %f = arith.constant 1.0 : f32
  scf.parallel (%i) = (%c0) to (%c12) step (%c1) {
    memref.store %f, %a[%i] : memref<12xf32>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%c6) step (%c1) {
    memref.store %f, %b[%i] : memref<6xf32>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%c7) step (%c1) {
    memref.store %f, %c[%i] : memref<7xf32>
    scf.reduce
  }
  return
}

// -----

// Left alone: a load after a store (it would move above the store of its
// own iteration), a nested loop, a call, an innermost dimension not used
// as the last index, a step other than 1.
// CHECK-LABEL: func.func @kept
// CHECK-NOT: arith.muli
// CHECK: return
func.func private @ext(f32)
func.func @kept(%a: memref<64xf32>, %b: memref<64xf32>, %t: memref<64x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c64 = arith.constant 64 : index
  %f = arith.constant 1.0 : f32
  scf.parallel (%i) = (%c0) to (%c64) step (%c1) {
    memref.store %f, %a[%i] : memref<64xf32>
    %x = memref.load %b[%i] : memref<64xf32>
    memref.store %x, %b[%i] : memref<64xf32>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%c64) step (%c1) {
    scf.for %k = %c0 to %c2 step %c1 {
      memref.store %f, %a[%i] : memref<64xf32>
    }
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%c64) step (%c1) {
    %x = memref.load %a[%i] : memref<64xf32>
    func.call @ext(%x) : (f32) -> ()
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%c64) step (%c1) {
    %x = memref.load %t[%i, %c0] : memref<64x64xf32>
    memref.store %x, %t[%i, %c1] : memref<64x64xf32>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%c64) step (%c2) {
    memref.store %f, %a[%i] : memref<64xf32>
    scf.reduce
  }
  return
}

// -----

// A loop lpc-fuse-cast-transposes tiled (lpc_tiled: each iteration already
// takes its tile in wide accesses) is left as it is, although its partial
// store indexes the innermost dimension.
// CHECK-LABEL: func.func @tiled
// CHECK: scf.parallel {{.*}} to (%{{.*}}, %c64)
// CHECK-COUNT-1: memref.store
// CHECK-NOT: memref.store
func.func @tiled(%a: memref<4x64xi32>, %p: memref<4x64xi32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c64 = arith.constant 64 : index
  scf.parallel (%i, %j) = (%c0, %c0) to (%c4, %c64) step (%c1, %c1) {
    %x = memref.load %a[%i, %j] : memref<4x64xi32>
    memref.store %x, %p[%i, %j] : memref<4x64xi32>
    scf.reduce
  } {lpc_tiled}
  return
}
