// RUN: lpc-opt %s -split-input-file --lpc-merge-serial-kernels | FileCheck %s
// RUN: lpc-opt %s -split-input-file --lpc-merge-serial-kernels="max-iterations=2 max-copy-elements=1" | FileCheck %s --check-prefix=OPT

// A run of single-thread kernels and 0-d copies (the FP8 scale/history
// bookkeeping): one single-thread kernel in place of the last piece, the
// pieces in program order (copies as a load and a store), the allocations
// between them where they were, the deallocation between them after it.

// CHECK-LABEL: func.func @run(
// CHECK-SAME: %[[S:[a-z0-9]+]]: memref<f32>, %[[H:[a-z0-9]+]]: memref<i64>
// CHECK: %[[A:.*]] = memref.alloc() : memref<f32>
// CHECK: %[[T:.*]] = memref.alloc() : memref<4xf32>
// CHECK: %[[B:.*]] = memref.alloc() : memref<f32>
// CHECK: %[[C:.*]] = memref.alloc() : memref<i64>
// CHECK-NOT: memref.copy
// CHECK: scf.parallel (%{{.*}}) = (%[[C0:.*]]) to (%[[C1:.*]]) step (%[[C1]]) {
// CHECK-NEXT: %[[X:.*]] = memref.load %[[S]][]
// CHECK-NEXT: memref.store %[[X]], %[[A]][]
// CHECK-NEXT: memref.store %{{.*}}, %[[T]][%{{.*}}]
// CHECK-NEXT: %[[Y:.*]] = memref.load %[[A]][]
// CHECK-NEXT: memref.store %[[Y]], %[[B]][]
// CHECK-NEXT: %[[Z:.*]] = memref.load %[[H]][]
// CHECK-NEXT: memref.store %[[Z]], %[[C]][]
// CHECK-NEXT: %[[V:.*]] = memref.load %[[B]][]
// CHECK-NEXT: %[[W:.*]] = arith.mulf %[[V]], %[[V]]
// CHECK-NEXT: memref.store %[[W]], %[[S]][]
// CHECK-NEXT: scf.reduce
// CHECK-NEXT: }
// CHECK-NEXT: memref.dealloc %[[T]]
// CHECK-NOT: scf.parallel
// CHECK: return
func.func @run(%s: memref<f32>, %h: memref<i64>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %one = arith.constant 1.0 : f32
  %a = memref.alloc() : memref<f32>
  %t = memref.alloc() : memref<4xf32>
  scf.parallel (%i) = (%c0) to (%c1) step (%c1) {
    %x = memref.load %s[] : memref<f32>
    memref.store %x, %a[] : memref<f32>
    memref.store %one, %t[%c3] : memref<4xf32>
    scf.reduce
  }
  memref.dealloc %t : memref<4xf32>
  %b = memref.alloc() : memref<f32>
  memref.copy %a, %b : memref<f32> to memref<f32>
  %c = memref.alloc() : memref<i64>
  memref.copy %h, %c : memref<i64> to memref<i64>
  scf.parallel (%i) = (%c0) to (%c1) step (%c1) {
    %v = memref.load %b[] : memref<f32>
    %w = arith.mulf %v, %v : f32
    memref.store %w, %s[] : memref<f32>
    scf.reduce
  }
  memref.dealloc %a : memref<f32>
  memref.dealloc %b : memref<f32>
  memref.dealloc %c : memref<i64>
  return
}

// -----

// A copy of a few elements becomes one load and store per element, in
// row-major order; a one-iteration loop's induction variable becomes its
// lower bound. With max-copy-elements=1 the copy is too large: it ends the
// run, and the lone loops before and after it stay as they are.

// CHECK-LABEL: func.func @small_copy(
// CHECK-SAME: %[[X:[a-z0-9]+]]: memref<2x2xf32>, %[[Y:[a-z0-9]+]]: memref<2x2xf32>, %[[Z:[a-z0-9]+]]: memref<8xf32>
// CHECK: %[[C5:.*]] = arith.constant 5 : index
// CHECK: scf.parallel
// CHECK-DAG: %[[I0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[I1:.*]] = arith.constant 1 : index
// CHECK: memref.store %{{.*}}, %[[Z]][%[[C5]]]
// CHECK-NEXT: %[[E0:.*]] = memref.load %[[X]][%[[I0]], %[[I0]]]
// CHECK-NEXT: memref.store %[[E0]], %[[Y]][%[[I0]], %[[I0]]]
// CHECK-NEXT: %[[E1:.*]] = memref.load %[[X]][%[[I0]], %[[I1]]]
// CHECK-NEXT: memref.store %[[E1]], %[[Y]][%[[I0]], %[[I1]]]
// CHECK-NEXT: %[[E2:.*]] = memref.load %[[X]][%[[I1]], %[[I0]]]
// CHECK-NEXT: memref.store %[[E2]], %[[Y]][%[[I1]], %[[I0]]]
// CHECK-NEXT: %[[E3:.*]] = memref.load %[[X]][%[[I1]], %[[I1]]]
// CHECK-NEXT: memref.store %[[E3]], %[[Y]][%[[I1]], %[[I1]]]
// CHECK-NEXT: memref.load %[[Y]]
// CHECK: scf.reduce
// CHECK-NOT: scf.parallel
// CHECK-NOT: memref.copy
// CHECK: return

// OPT-LABEL: func.func @small_copy(
// OPT: scf.parallel (%[[I:.*]]) = (%{{.*}}) to (%{{.*}}) step
// OPT: memref.store %{{.*}}, %{{.*}}[%[[I]]]
// OPT: memref.copy
// OPT: scf.parallel
// OPT: return
func.func @small_copy(%x: memref<2x2xf32>, %y: memref<2x2xf32>, %z: memref<8xf32>) {
  %c5 = arith.constant 5 : index
  %c6 = arith.constant 6 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  scf.parallel (%i) = (%c5) to (%c6) step (%c1) {
    memref.store %zero, %z[%i] : memref<8xf32>
    scf.reduce
  }
  memref.copy %x, %y : memref<2x2xf32> to memref<2x2xf32>
  scf.parallel (%i) = (%c5) to (%c6) step (%c1) {
    %v = memref.load %y[%c1, %c1] : memref<2x2xf32>
    memref.store %v, %z[%c1] : memref<8xf32>
    scf.reduce
  }
  return
}

// -----

// What does not merge: a kernel of more threads (8 iterations), a GEMM
// call, a copy larger than max-copy-elements (16) and a store on the host
// end the run. Two one-thread kernels on either side of the call (the
// first writes what the GEMM reads, the second reads what it writes) stay
// apart; so do the lone pieces around the other barriers.

// CHECK-LABEL: func.func @barriers(
// CHECK: scf.parallel ({{.*}}) = ({{.*}}) to (%[[C8:.*]]) step
// CHECK: scf.parallel
// CHECK: memref.store %{{.*}}, %[[SA:.*]][]
// CHECK: call @gemm(
// CHECK: scf.parallel
// CHECK: memref.load %[[SC:.*]][]
// CHECK: memref.copy %{{.*}} : memref<32xf32> to memref<32xf32>
// CHECK: scf.parallel
// CHECK: memref.store {{.*}} : memref<f32>
// CHECK: scf.parallel
// CHECK-NOT: scf.parallel
// CHECK: return

// Eight iterations run serially with max-iterations=8 would merge; with
// max-iterations=2 the loop of 8 still stands alone.
// OPT-LABEL: func.func @barriers(
// OPT: scf.parallel ({{.*}}) = ({{.*}}) to (%[[C8:.*]]) step
// OPT: scf.parallel
// OPT: call @gemm(
// OPT: scf.parallel
// OPT: memref.copy
// OPT: scf.parallel
// OPT: memref.store
// OPT: scf.parallel
// OPT-NOT: scf.parallel
// OPT: return
func.func private @gemm(memref<f32>, memref<f32>)
func.func @barriers(%a: memref<f32>, %c: memref<f32>, %big: memref<32xf32>, %big2: memref<32xf32>, %v: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %one = arith.constant 1.0 : f32
  scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
    memref.store %one, %v[%i] : memref<8xf32>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%c1) step (%c1) {
    memref.store %one, %a[] : memref<f32>
    scf.reduce
  }
  call @gemm(%a, %c) : (memref<f32>, memref<f32>) -> ()
  scf.parallel (%i) = (%c0) to (%c1) step (%c1) {
    %x = memref.load %c[] : memref<f32>
    memref.store %x, %big[%c0] : memref<32xf32>
    scf.reduce
  }
  memref.copy %big, %big2 : memref<32xf32> to memref<32xf32>
  scf.parallel (%i) = (%c0) to (%c1) step (%c1) {
    %x = memref.load %big2[%c1] : memref<32xf32>
    memref.store %x, %a[] : memref<f32>
    scf.reduce
  }
  memref.store %one, %c[] : memref<f32>
  scf.parallel (%i) = (%c0) to (%c1) step (%c1) {
    %x = memref.load %c[] : memref<f32>
    memref.store %x, %a[] : memref<f32>
    scf.reduce
  }
  return
}

// -----

// A loop of a few iterations (with max-iterations=2) runs them in an
// scf.for inside the merged kernel; by default (one iteration) it is a
// kernel of two threads and nothing merges.

// CHECK-LABEL: func.func @few(
// CHECK: scf.parallel ({{.*}}) = ({{.*}}) to (%[[C2:.*]]) step
// CHECK: scf.parallel
// CHECK-NOT: scf.for
// CHECK: return

// OPT-LABEL: func.func @few(
// OPT-SAME: %[[P:[a-z0-9]+]]: memref<2xf32>, %[[S:[a-z0-9]+]]: memref<f32>
// OPT: %[[C0:.*]] = arith.constant 0 : index
// OPT: %[[C2:.*]] = arith.constant 2 : index
// OPT: scf.parallel
// OPT-NEXT: scf.for %[[J:.*]] = %[[C0]] to %[[C2]] step
// OPT-NEXT: memref.load %[[P]][%[[J]]]
// OPT: }
// OPT-NEXT: memref.load %[[P]]
// OPT: memref.store %{{.*}}, %[[S]][]
// OPT: scf.reduce
// OPT-NOT: scf.parallel
// OPT: return
func.func @few(%p: memref<2xf32>, %s: memref<f32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  scf.parallel (%i) = (%c0) to (%c2) step (%c1) {
    %x = memref.load %p[%i] : memref<2xf32>
    %y = arith.mulf %x, %x : f32
    memref.store %y, %p[%i] : memref<2xf32>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%c1) step (%c1) {
    %x = memref.load %p[%c0] : memref<2xf32>
    %y = memref.load %p[%c1] : memref<2xf32>
    %z = arith.addf %x, %y : f32
    memref.store %z, %s[] : memref<f32>
    scf.reduce
  }
  return
}

// -----

// A piece moves down over a kernel of more threads that touches none of
// its buffers (a different allocation), to join the pieces after it: the
// accumulator's initialization runs with its final combine, after the
// partials. It does not move over a kernel that reads its buffer (%t), nor
// over one that reads a function argument when it writes another (the two
// may be one buffer).

// CHECK-LABEL: func.func @over(
// CHECK-SAME: %[[H:[a-z0-9]+]]: memref<64xf32>, %[[S:[a-z0-9]+]]: memref<f32>, %[[R:[a-z0-9]+]]: memref<f32>
// CHECK: %[[ACC:.*]] = memref.alloc() : memref<f32>
// CHECK: %[[PART:.*]] = memref.alloc() : memref<64xf32>
// CHECK: %[[T:.*]] = memref.alloc() : memref<f32>
// CHECK: %[[Q:.*]] = memref.alloc() : memref<64xf32>
// CHECK: scf.parallel (%[[I:.*]]) = (%{{.*}}) to (%[[C64:.*]]) step
// CHECK-NEXT: memref.load %[[H]][%[[I]]]
// CHECK: scf.parallel
// CHECK-NEXT: memref.store %{{.*}}, %[[ACC]][]
// CHECK-NEXT: memref.load %[[ACC]][]
// CHECK-NEXT: scf.for
// CHECK: memref.store %{{.*}}, %[[T]][]
// CHECK-NEXT: scf.reduce
// CHECK: scf.parallel (%{{.*}}) = (%{{.*}}) to (%[[C64]]) step
// CHECK-NEXT: memref.load %[[T]][]
// CHECK: scf.parallel
// CHECK-NEXT: memref.load %[[PART]]
// CHECK-NEXT: memref.store %{{.*}}, %[[S]][]
// CHECK-NEXT: scf.reduce
// CHECK: scf.parallel (%{{.*}}) = (%{{.*}}) to (%[[C64]]) step
// CHECK-NEXT: memref.load %[[R]][]
// CHECK-NEXT: memref.store %{{.*}}, %[[Q]]
// CHECK: scf.parallel
// CHECK-NEXT: memref.load %[[PART]]
// CHECK-NEXT: memref.store %{{.*}}, %[[ACC]][]
// CHECK-NEXT: scf.reduce
// CHECK-NEXT: }
// CHECK-NEXT: memref.dealloc
// CHECK-NEXT: memref.dealloc
// CHECK-NEXT: memref.dealloc
// CHECK-NEXT: memref.dealloc
// CHECK-NEXT: return
func.func @over(%h: memref<64xf32>, %s: memref<f32>, %r: memref<f32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f32
  %acc = memref.alloc() : memref<f32>
  %part = memref.alloc() : memref<64xf32>
  %t = memref.alloc() : memref<f32>
  %q = memref.alloc() : memref<64xf32>
  scf.parallel (%i) = (%c0) to (%c1) step (%c1) {
    memref.store %zero, %acc[] : memref<f32>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%c64) step (%c1) {
    %x = memref.load %h[%i] : memref<64xf32>
    %y = math.absf %x : f32
    memref.store %y, %part[%i] : memref<64xf32>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%c1) step (%c1) {
    %a0 = memref.load %acc[] : memref<f32>
    %m = scf.for %j = %c0 to %c64 step %c1 iter_args(%a = %a0) -> (f32) {
      %p = memref.load %part[%j] : memref<64xf32>
      %n = arith.maximumf %a, %p : f32
      scf.yield %n : f32
    }
    memref.store %m, %t[] : memref<f32>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%c64) step (%c1) {
    %x = memref.load %t[] : memref<f32>
    memref.store %x, %part[%i] : memref<64xf32>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%c1) step (%c1) {
    %x = memref.load %part[%c1] : memref<64xf32>
    memref.store %x, %s[] : memref<f32>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%c64) step (%c1) {
    %x = memref.load %r[] : memref<f32>
    memref.store %x, %q[%i] : memref<64xf32>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%c1) step (%c1) {
    %x = memref.load %part[%c0] : memref<64xf32>
    memref.store %x, %acc[] : memref<f32>
    scf.reduce
  }
  memref.dealloc %acc : memref<f32>
  memref.dealloc %part : memref<64xf32>
  memref.dealloc %t : memref<f32>
  memref.dealloc %q : memref<64xf32>
  return
}

// -----

// A kernel that reads a global (a buffer of unknown identity) may touch
// anything: the one-thread kernel before it stays before it.

// CHECK-LABEL: func.func @global(
// CHECK: scf.parallel ({{.*}}) = ({{.*}}) to (%[[C1:[a-z0-9_]+]]) step
// CHECK-NEXT: memref.store
// CHECK: scf.parallel ({{.*}}) = ({{.*}}) to (%[[C4:[a-z0-9_]+]]) step
// CHECK: memref.get_global
// CHECK: scf.parallel ({{.*}}) = ({{.*}}) to (%[[C1]]) step
// CHECK-NOT: scf.parallel
// CHECK: return
memref.global "private" @g : memref<4xf32> = dense<0.0>
func.func @global(%s: memref<f32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %one = arith.constant 1.0 : f32
  %acc = memref.alloc() : memref<f32>
  %part = memref.alloc() : memref<4xf32>
  scf.parallel (%i) = (%c0) to (%c1) step (%c1) {
    memref.store %one, %acc[] : memref<f32>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    %g = memref.get_global @g : memref<4xf32>
    %x = memref.load %g[%i] : memref<4xf32>
    memref.store %x, %part[%i] : memref<4xf32>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%c1) step (%c1) {
    %x = memref.load %acc[] : memref<f32>
    memref.store %x, %s[] : memref<f32>
    scf.reduce
  }
  memref.dealloc %acc : memref<f32>
  memref.dealloc %part : memref<4xf32>
  return
}
