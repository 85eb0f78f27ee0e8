// RUN: lpc-opt %s -split-input-file -verify-diagnostics --lpc-gpu-serial-kernels | FileCheck %s

// Serial code (a full reduction, 0-d scalar code) moves into one-iteration
// parallel loops (single-thread kernels later); a scalar it computes and a
// later kernel uses goes through a 0-d buffer, loaded inside the kernel.
// Allocations, constants and the parallel loop stay where they are.

// CHECK-LABEL: func.func @amax_then_scale(
// CHECK: %[[AMAX:.*]] = memref.alloc() : memref<f32>
// CHECK: %[[SLOT:.*]] = memref.alloc() : memref<f32>
// CHECK: scf.parallel (%{{.*}}) = (%{{.*}}) to (%{{.*}}) step (%{{.*}}) {
// CHECK:   memref.store %{{.*}}, %[[AMAX]][]
// CHECK:   scf.for
// CHECK:     arith.maximumf
// CHECK:   %[[S:.*]] = arith.divf
// CHECK:   memref.store %[[S]], %[[SLOT]][]
// CHECK:   scf.reduce
// CHECK: scf.parallel (%[[I:.*]]) =
// CHECK:   %[[L:.*]] = memref.load %[[SLOT]][]
// CHECK:   arith.mulf %{{.*}}, %[[L]]
// CHECK: memref.dealloc %[[SLOT]]
// CHECK-NEXT: return
func.func @amax_then_scale(%x: memref<64xf32>, %y: memref<64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %zero = arith.constant 0.0 : f32
  %max = arith.constant 448.0 : f32
  %amax = memref.alloc() : memref<f32>
  memref.store %zero, %amax[] : memref<f32>
  scf.for %i = %c0 to %c64 step %c1 {
    %v = memref.load %x[%i] : memref<64xf32>
    %a = math.absf %v : f32
    %m = memref.load %amax[] : memref<f32>
    %n = arith.maximumf %m, %a : f32
    memref.store %n, %amax[] : memref<f32>
  }
  %am = memref.load %amax[] : memref<f32>
  %scale = arith.divf %max, %am : f32
  scf.parallel (%i) = (%c0) to (%c64) step (%c1) {
    %v = memref.load %x[%i] : memref<64xf32>
    %w = arith.mulf %v, %scale : f32
    memref.store %w, %y[%i] : memref<64xf32>
    scf.reduce
  }
  memref.dealloc %amax : memref<f32>
  return
}

// -----

// Host code cannot use a value the device computes.
func.func @device_size(%n: memref<index>) {
  // expected-error @+1 {{lpc-gpu-serial-kernels: a value computed on the device is used by host code}}
  %s = memref.load %n[] : memref<index>
  %buf = memref.alloc(%s) : memref<?xf32>
  memref.dealloc %buf : memref<?xf32>
  return
}

// -----

// Reading a 0-d argument the function never writes (and computing on it)
// for a parallel loop is copied into that loop: no kernel of its own.
// CHECK-LABEL: func.func @scale_arg(
// CHECK-NOT: memref.alloc
// CHECK: scf.parallel
// CHECK-NEXT: %[[S:.*]] = memref.load %arg1[]
// CHECK-NEXT: %[[R:.*]] = arith.divf %{{.*}}, %[[S]]
// CHECK: arith.mulf %{{.*}}, %[[R]]
// CHECK-NOT: scf.parallel
// CHECK: return
func.func @scale_arg(%x: memref<64xf32>, %s: memref<f32>, %y: memref<64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %one = arith.constant 1.0 : f32
  %sv = memref.load %s[] : memref<f32>
  %r = arith.divf %one, %sv : f32
  scf.parallel (%i) = (%c0) to (%c64) step (%c1) {
    %v = memref.load %x[%i] : memref<64xf32>
    %w = arith.mulf %v, %r : f32
    memref.store %w, %y[%i] : memref<64xf32>
    scf.reduce
  }
  return
}
