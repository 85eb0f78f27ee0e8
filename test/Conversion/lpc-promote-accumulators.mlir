// RUN: lpc-opt %s --lpc-promote-accumulators | FileCheck %s

// A row sum into a buffer the function allocated: loaded once, carried,
// stored once, even though it reads the function's argument.
// CHECK-LABEL: func.func @row_sum(
// CHECK: %[[OUT:.*]] = memref.alloc()
// CHECK: scf.parallel (%[[I:.*]]) =
// CHECK-NEXT: %[[INIT:.*]] = memref.load %[[OUT]][%[[I]]]
// CHECK-NEXT: %[[R:.*]] = scf.for %{{.*}} iter_args(%[[ACC:.*]] = %[[INIT]]) -> (f32) {
// CHECK-NEXT: %[[X:.*]] = memref.load %arg0
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[ACC]], %[[X]]
// CHECK-NEXT: scf.yield %[[S]]
// CHECK-NEXT: }
// CHECK-NEXT: memref.store %[[R]], %[[OUT]][%[[I]]]
func.func @row_sum(%x: memref<4x8xf32>) -> memref<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %out = memref.alloc() : memref<4xf32>
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    scf.for %k = %c0 to %c8 step %c1 {
      %a = memref.load %out[%i] : memref<4xf32>
      %v = memref.load %x[%i, %k] : memref<4x8xf32>
      %s = arith.addf %a, %v : f32
      memref.store %s, %out[%i] : memref<4xf32>
    }
    scf.reduce
  }
  return %out : memref<4xf32>
}

// Two accumulators in one loop (views of two allocations: different
// memory), and the outer loop then carries the inner one's.
// CHECK-LABEL: func.func @nested(
// CHECK: %[[R:.*]]:2 = scf.for %{{.*}} iter_args(%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) -> (f32, f32) {
// CHECK: scf.for %{{.*}} iter_args(
// CHECK-NOT: memref.store
// CHECK: scf.yield
// CHECK: scf.yield
// CHECK-DAG: memref.store %[[R]]#0
// CHECK-DAG: memref.store %[[R]]#1
func.func @nested(%x: memref<4x8xf32>, %s: memref<f32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %buf = memref.alloc() : memref<2xf32>
  %sum = memref.subview %buf[0] [1] [1] : memref<2xf32> to memref<1xf32, strided<[1]>>
  %buf2 = memref.alloc() : memref<2xf32>
  %max = memref.subview %buf2[1] [1] [1] : memref<2xf32> to memref<1xf32, strided<[1], offset: 1>>
  scf.for %i = %c0 to %c4 step %c1 {
    scf.for %k = %c0 to %c8 step %c1 {
      %a = memref.load %sum[%c0] : memref<1xf32, strided<[1]>>
      %b = memref.load %max[%c0] : memref<1xf32, strided<[1], offset: 1>>
      %v = memref.load %x[%i, %k] : memref<4x8xf32>
      %p = arith.addf %a, %v : f32
      %q = arith.maximumf %b, %v : f32
      memref.store %p, %sum[%c0] : memref<1xf32, strided<[1]>>
      memref.store %q, %max[%c0] : memref<1xf32, strided<[1], offset: 1>>
    }
  }
  return
}

// Left alone: the accumulator is the function's argument and the loop
// reads another argument (they may be the same memory); the store's
// indices vary with the loop; another view of the same allocation is read;
// a call in the loop.
// CHECK-LABEL: func.func @kept(
// CHECK-NOT: iter_args
// CHECK: return
func.func private @opaque()
func.func @kept(%x: memref<8xf32>, %out: memref<f32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  scf.for %k = %c0 to %c8 step %c1 {
    %a = memref.load %out[] : memref<f32>
    %v = memref.load %x[%k] : memref<8xf32>
    %s = arith.addf %a, %v : f32
    memref.store %s, %out[] : memref<f32>
  }
  %buf = memref.alloc() : memref<8xf32>
  scf.for %k = %c0 to %c8 step %c1 {
    %a = memref.load %buf[%k] : memref<8xf32>
    %s = arith.addf %a, %a : f32
    memref.store %s, %buf[%k] : memref<8xf32>
  }
  %acc = memref.alloc() : memref<2xf32>
  %view = memref.subview %acc[1] [1] [1] : memref<2xf32> to memref<1xf32, strided<[1], offset: 1>>
  scf.for %k = %c0 to %c8 step %c1 {
    %a = memref.load %acc[%c0] : memref<2xf32>
    %w = memref.load %view[%c0] : memref<1xf32, strided<[1], offset: 1>>
    %s = arith.addf %a, %w : f32
    memref.store %s, %acc[%c0] : memref<2xf32>
  }
  scf.for %k = %c0 to %c8 step %c1 {
    %a = memref.load %acc[%c0] : memref<2xf32>
    func.call @opaque() : () -> ()
    %s = arith.addf %a, %a : f32
    memref.store %s, %acc[%c0] : memref<2xf32>
  }
  return
}
