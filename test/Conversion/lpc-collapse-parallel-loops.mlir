// RUN: lpc-opt %s --lpc-collapse-parallel-loops --canonicalize | FileCheck %s

// A [1, 6, 4] elementwise loop becomes one loop over 24 elements, the last
// dimension fastest (i2 = t mod 4): neighbouring threads, neighbouring
// addresses. The reduction loop inside stays sequential.
// CHECK-LABEL: func.func @elementwise(
// CHECK: scf.parallel (%[[T:.*]]) = (%c0) to (%c24) step (%c1) {
// CHECK-DAG: %[[I2:.*]] = arith.remsi %[[T]], %c4
// CHECK-DAG: %[[Q:.*]] = arith.divsi %[[T]], %c4
// CHECK-DAG: %[[I1:.*]] = arith.remsi %[[Q]], %c6
// CHECK: memref.load %arg0[%{{.*}}, %[[I1]], %[[I2]]]
// CHECK: scf.for
// CHECK-NOT: scf.parallel
func.func @elementwise(%x: memref<1x6x4xf32>, %y: memref<1x6x4xf32>, %z: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c6 = arith.constant 6 : index
  %c8 = arith.constant 8 : index
  scf.parallel (%i, %j, %k) = (%c0, %c0, %c0) to (%c1, %c6, %c4) step (%c1, %c1, %c1) {
    %v = memref.load %x[%i, %j, %k] : memref<1x6x4xf32>
    %w = arith.negf %v : f32
    scf.for %r = %c0 to %c8 step %c1 {
      %u = memref.load %z[%r] : memref<8xf32>
      %s = arith.addf %w, %u : f32
      memref.store %s, %y[%i, %j, %k] : memref<1x6x4xf32>
    }
    scf.reduce
  }
  return
}

// A one-dimensional loop is left as it is.
// CHECK-LABEL: func.func @flat(
// CHECK: scf.parallel (%{{.*}}) = (%c0) to (%c8) step (%c1)
func.func @flat(%z: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %cst = arith.constant 0.0 : f32
  scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
    memref.store %cst, %z[%i] : memref<8xf32>
    scf.reduce
  }
  return
}
