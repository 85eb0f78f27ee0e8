// RUN: lpc-opt %s -split-input-file --lpc-split-reductions="max-parts=16" | FileCheck %s

// A full reduction (here a loss-like sum and an amax-like max over a
// [64, 8] buffer, two outputs) is split as d0 = k * 16 + p: 16 partials in
// parallel (thread p reads rows p, p + 16, ...), then each output combines
// its partials, starting from the output's own initial value.

// CHECK-LABEL: func.func @sum_and_max(
// CHECK-DAG: %[[X:.*]] = memref.expand_shape %arg0 {{\[\[}}0, 1], [2]] output_shape [4, 16, 8] : memref<64x8xf32> into memref<4x16x8xf32>
// CHECK-DAG: %[[PS:.*]] = memref.alloc() : memref<16xf32>
// CHECK-DAG: linalg.fill ins(%{{.*}} : f32) outs(%[[PS]] : memref<16xf32>)
// CHECK-DAG: %[[PM:.*]] = memref.alloc() : memref<16xf32>
// CHECK-DAG: %[[NINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK-DAG: linalg.fill ins(%[[NINF]] : f32) outs(%[[PM]] : memref<16xf32>)
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}, #{{.*}}], iterator_types = ["parallel", "reduction", "reduction"]} ins(%[[X]] : memref<4x16x8xf32>) outs(%[[PS]], %[[PM]] : memref<16xf32>, memref<16xf32>)
// CHECK: arith.addf {{.*}} fastmath<reassoc>
// CHECK: arith.maximumf
// CHECK: linalg.generic {{.*}} iterator_types = ["reduction"]} ins(%[[PS]] : memref<16xf32>) outs(%arg1 : memref<f32>)
// CHECK: arith.addf {{.*}} fastmath<reassoc>
// CHECK: linalg.generic {{.*}} iterator_types = ["reduction"]} ins(%[[PM]] : memref<16xf32>) outs(%arg2 : memref<f32>)
// CHECK: arith.maximumf
// CHECK: memref.dealloc %[[PS]]
// CHECK: memref.dealloc %[[PM]]
func.func @sum_and_max(%x: memref<64x8xf32>, %s: memref<f32>, %m: memref<f32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> ()>],
                  iterator_types = ["reduction", "reduction"]}
      ins(%x : memref<64x8xf32>) outs(%s, %m : memref<f32>, memref<f32>) {
  ^bb0(%v: f32, %acc: f32, %mx: f32):
    %a = arith.addf %acc, %v fastmath<reassoc> : f32
    %b = math.absf %v : f32
    %c = arith.maximumf %mx, %b : f32
    linalg.yield %a, %c : f32, f32
  }
  return
}

// -----

// linalg.index of the split dimension becomes k * P + p.
// CHECK-LABEL: func.func @indexed(
// CHECK: %[[P:.*]] = linalg.index 0 : index
// CHECK: %[[K:.*]] = linalg.index 1 : index
// CHECK: %[[KP:.*]] = arith.muli %[[K]], %c16
// CHECK: arith.addi %[[KP]], %[[P]]
func.func @indexed(%x: memref<32xi32>, %s: memref<i32>) {
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>],
                  iterator_types = ["reduction"]}
      ins(%x : memref<32xi32>) outs(%s : memref<i32>) {
  ^bb0(%v: i32, %acc: i32):
    %i = linalg.index 0 : index
    %ii = arith.index_cast %i : index to i32
    %w = arith.muli %v, %ii : i32
    %a = arith.maxui %acc, %w : i32
    linalg.yield %a : i32
  }
  return
}

// -----

// Not split: a sum not allowed to reassociate, and too few rows (8 < 16).
// CHECK-LABEL: func.func @kept(
// CHECK-NOT: memref.alloc
// CHECK-COUNT-2: iterator_types = ["reduction"]
func.func @kept(%x: memref<64xf32>, %y: memref<8xf32>, %s: memref<f32>, %t: memref<f32>) {
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>],
                  iterator_types = ["reduction"]}
      ins(%x : memref<64xf32>) outs(%s : memref<f32>) {
  ^bb0(%v: f32, %acc: f32):
    %a = arith.addf %acc, %v : f32
    linalg.yield %a : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>],
                  iterator_types = ["reduction"]}
      ins(%y : memref<8xf32>) outs(%t : memref<f32>) {
  ^bb0(%v: f32, %acc: f32):
    %a = arith.maximumf %acc, %v : f32
    linalg.yield %a : f32
  }
  return
}
