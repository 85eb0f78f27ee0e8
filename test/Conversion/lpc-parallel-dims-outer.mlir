// RUN: lpc-opt %s --lpc-parallel-dims-outer | FileCheck %s
// RUN: lpc-opt %s --lpc-parallel-dims-outer --convert-linalg-to-parallel-loops | FileCheck %s --check-prefix=LOOPS

// A bias gradient (sum over batch and tokens of [B, T, N]): the parallel
// dimension moves first; each output element keeps its reduction order.
// CHECK-DAG: #[[IN:.*]] = affine_map<(d0, d1, d2) -> (d1, d2, d0)>
// CHECK-DAG: #[[OUT:.*]] = affine_map<(d0, d1, d2) -> (d0)>
// CHECK-LABEL: func.func @bias_grad
// CHECK: linalg.generic {indexing_maps = [#[[IN]], #[[OUT]]], iterator_types = ["parallel", "reduction", "reduction"]}
// LOOPS-LABEL: func.func @bias_grad
// LOOPS: scf.parallel (%[[N:.*]]) =
// LOOPS: scf.for %[[B:.*]] =
// LOOPS: scf.for %[[T:.*]] =
// LOOPS: memref.load %{{.*}}[%[[B]], %[[T]], %[[N]]]
func.func @bias_grad(%g: memref<2x3x5xf32>, %out: memref<5xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d2)>],
                  iterator_types = ["reduction", "reduction", "parallel"]}
      ins(%g : memref<2x3x5xf32>) outs(%out : memref<5xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %acc, %x : f32
    linalg.yield %s : f32
  }
  return
}

// Already parallel-first, and all-reduction: left as they are.
// CHECK-LABEL: func.func @unchanged
// CHECK: iterator_types = ["parallel", "reduction"]
// CHECK: iterator_types = ["reduction", "reduction"]
func.func @unchanged(%g: memref<4x5xf32>, %rows: memref<4xf32>, %all: memref<f32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%g : memref<4x5xf32>) outs(%rows : memref<4xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %acc, %x : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>],
                  iterator_types = ["reduction", "reduction"]}
      ins(%g : memref<4x5xf32>) outs(%all : memref<f32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %acc, %x : f32
    linalg.yield %s : f32
  }
  return
}
