// RUN: lpc-opt %s --split-input-file --lpc-distinct-results | FileCheck %s
// A buffer returned twice would crash buffer-results-to-out-params
// {hoist-static-allocs}; after the pass it takes both results.
// RUN: lpc-opt %s --split-input-file --lpc-distinct-results "--buffer-results-to-out-params=modify-public-functions hoist-static-allocs" | FileCheck %s --check-prefix=OUT
// lpc-jit --op-check on a step whose probes fold to one value (it crashed).
// RUN: lpc-jit %S/Inputs/folds_to_repeat.mlir --steps=2 --op-check | FileCheck %s --check-prefix=JIT

// CHECK-LABEL: func.func @twice
// CHECK: %[[M:.*]] = memref.alloc() : memref<4xf32>
// CHECK: %[[C:.*]] = memref.alloc() : memref<4xf32>
// CHECK: memref.copy %[[M]], %[[C]]
// CHECK: return %[[M]], %[[C]]
// OUT-LABEL: func.func @twice
// OUT-SAME: (%{{.*}}: memref<4xf32>, %[[R0:.*]]: memref<4xf32>, %[[R1:.*]]: memref<4xf32>)
// OUT: memref.copy %{{.*}}, %[[R0]]
// OUT: memref.copy %[[R0]], %[[R1]]
// OUT-NEXT: return
func.func @twice(%a: memref<4xf32>) -> (memref<4xf32>, memref<4xf32>) {
  %m = memref.alloc() : memref<4xf32>
  memref.copy %a, %m : memref<4xf32> to memref<4xf32>
  return %m, %m : memref<4xf32>, memref<4xf32>
}

// -----

// Returned once each: nothing changes; every repeat gets its own copy.
// CHECK-LABEL: func.func @once
// CHECK-NOT: memref.alloc
// CHECK: return %arg0, %arg1
func.func @once(%a: memref<4xf32>, %b: memref<4xf32>) -> (memref<4xf32>, memref<4xf32>) {
  return %a, %b : memref<4xf32>, memref<4xf32>
}

// CHECK-LABEL: func.func @arg_thrice
// CHECK: %[[C1:.*]] = memref.alloc() : memref<2x3xf32>
// CHECK: memref.copy %arg0, %[[C1]]
// CHECK: %[[C2:.*]] = memref.alloc() : memref<2x3xf32>
// CHECK: memref.copy %arg0, %[[C2]]
// CHECK: return %arg0, %[[C1]], %[[C2]]
func.func @arg_thrice(%a: memref<2x3xf32>) -> (memref<2x3xf32>, memref<2x3xf32>, memref<2x3xf32>) {
  return %a, %a, %a : memref<2x3xf32>, memref<2x3xf32>, memref<2x3xf32>
}

// JIT: every op matches the reference evaluator within half a spacing and the slack
