// lpc-outline-serial-loops: past min-loops top-level nests, each nest is a
// private, never-inlined function of the values it captures (constants
// cloned in); the positions of the aligned pointers of buffers allocated in
// the caller and seen once go to lpc-lower-parallel-calls (noalias).
// RUN: lpc-opt %s --lpc-outline-serial-loops="min-loops=2" | FileCheck %s
// RUN: lpc-opt %s --lpc-outline-serial-loops="min-loops=3" | FileCheck %s --check-prefix=FEW
// RUN: lpc-opt %s --lpc-outline-serial-loops="min-loops=2" --finalize-memref-to-llvm --convert-scf-to-cf --convert-cf-to-llvm --convert-arith-to-llvm --convert-func-to-llvm --reconcile-unrealized-casts --lpc-lower-parallel-calls | FileCheck %s --check-prefix=LLVM

// CHECK-LABEL: func.func @step(
// CHECK-SAME: %[[A:.*]]: memref<16xf32>, %[[N:.*]]: index)
// CHECK: %[[B:.*]] = memref.alloc() : memref<16xf32>
// CHECK-NEXT: call @step__loop0(%[[A]], %[[B]]) : (memref<16xf32>, memref<16xf32>) -> ()
// CHECK-NEXT: call @step__loop1(%[[N]], %[[B]], %[[A]])
// CHECK-NOT: scf.for
// CHECK: return
// CHECK: func.func private @step__loop0(%{{.*}}: memref<16xf32>, %{{.*}}: memref<16xf32>) attributes {lpc.parallel_noalias = array<i64: 6>, lpc.parallel_params = 10 : i64, lpc.serial_body, passthrough = ["noinline"]}
// CHECK: arith.constant 16 : index
// CHECK: scf.for
// CHECK: func.func private @step__loop1(
// CHECK-SAME: attributes {lpc.parallel_noalias = array<i64: 2>, lpc.parallel_params = 11 : i64, lpc.serial_body, passthrough = ["noinline"]}

// FEW-LABEL: func.func @step(
// FEW-NOT: call
// FEW: scf.for
// FEW: scf.for
// FEW-NOT: func.func private

// LLVM: llvm.func @step__loop0(%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr {llvm.noalias},
// LLVM-SAME: passthrough = ["noinline"]

func.func @step(%a: memref<16xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %b = memref.alloc() : memref<16xf32>
  scf.for %i = %c0 to %c16 step %c1 {
    %x = memref.load %a[%i] : memref<16xf32>
    %y = arith.mulf %x, %x : f32
    memref.store %y, %b[%i] : memref<16xf32>
  }
  scf.for %i = %c0 to %n step %c1 {
    %x = memref.load %b[%i] : memref<16xf32>
    memref.store %x, %a[%i] : memref<16xf32>
  }
  memref.dealloc %b : memref<16xf32>
  return
}
