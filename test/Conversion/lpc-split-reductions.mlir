// RUN: lpc-opt %s -split-input-file --lpc-split-reductions="max-parts=16 min-work=2 row-parts=8 min-row=16" | FileCheck %s
// RUN: lpc-opt %s -split-input-file --lpc-split-reductions="max-parts=16 min-work=2 row-parts=8 min-row=16" --mlir-print-local-scope | FileCheck %s --check-prefix=ROWS
// RUN: lpc-opt %s -split-input-file --lpc-split-reductions="max-parts=64 min-parts=2 min-work=4 max-serial=4" | FileCheck %s --check-prefix=TWICE

// A full reduction (here a loss-like sum and an amax-like max over a
// [64, 8] buffer, two outputs) is flattened to one loop over 512 elements
// and split as i = k * 16 + p: 16 partials in parallel (thread p reads
// elements p, p + 16, ...), then each output combines its partials,
// starting from the output's own initial value, all in one generic.

// CHECK-LABEL: func.func @sum_and_max(
// CHECK-DAG: %[[FLAT:.*]] = memref.collapse_shape %arg0 {{\[\[}}0, 1]] : memref<64x8xf32> into memref<512xf32>
// CHECK-DAG: %[[X:.*]] = memref.expand_shape %[[FLAT]] {{\[\[}}0, 1]] output_shape [32, 16] : memref<512xf32> into memref<32x16xf32>
// CHECK-DAG: %[[PS:.*]] = memref.alloc() : memref<16xf32>
// CHECK-DAG: %[[PM:.*]] = memref.alloc() : memref<16xf32>
// CHECK-NOT: linalg.fill
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}, #{{.*}}], iterator_types = ["parallel", "reduction"]} ins(%[[X]] : memref<32x16xf32>) outs(%[[PS]], %[[PM]] : memref<16xf32>, memref<16xf32>)
// CHECK-NEXT: ^bb0(%{{.*}}: f32, %[[ACC:.*]]: f32, %[[MX:.*]]: f32):
// Each partial starts from the neutral element in its first iteration (no
// fill of the partials' buffers).
// CHECK-NEXT: %[[K:.*]] = linalg.index 1
// CHECK: %[[FIRST:.*]] = arith.cmpi eq, %[[K]], %c0
// CHECK: %[[S0:.*]] = arith.select %[[FIRST]], %cst{{.*}}, %[[ACC]]
// CHECK: %[[NINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK: %[[M0:.*]] = arith.select %[[FIRST]], %[[NINF]], %[[MX]]
// CHECK: arith.addf %[[S0]], {{.*}} fastmath<reassoc>
// CHECK: arith.maximumf %[[M0]]
// One generic combines both outputs' partials (one kernel per level).
// CHECK: linalg.generic {{.*}} iterator_types = ["reduction"]} ins(%[[PS]], %[[PM]] : memref<16xf32>, memref<16xf32>) outs(%arg1, %arg2 : memref<f32>, memref<f32>)
// CHECK: arith.addf {{.*}} fastmath<reassoc>
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

// -----

// A row reduction (softmax's max and sum of [4, 64] rows, the row
// dimension last): split along the row into row-parts=8 partials per row,
// p the innermost parallel dimension (threads of a row read neighbouring
// elements), partials [4, 8]; the row's max from another buffer is read as
// before. Then each row combines its 8 partials into the output.
// ROWS-LABEL: func.func @rows(
// ROWS-DAG: %[[X:.*]] = memref.expand_shape %arg0 {{\[\[}}0], [1, 2]] output_shape [4, 8, 8] : memref<4x64xf32> into memref<4x8x8xf32>
// ROWS-DAG: %[[P:.*]] = memref.alloc() : memref<4x8xf32>
// ROWS: linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0)>, affine_map<(d0, d1, d2) -> (d0, d2)>], iterator_types = ["parallel", "reduction", "parallel"]} ins(%[[X]], %arg1 : memref<4x8x8xf32>, memref<4xf32>) outs(%[[P]] : memref<4x8xf32>)
// ROWS: linalg.index 2
// ROWS: linalg.index 1
// ROWS: arith.muli %{{.*}}, %c8
// ROWS: linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%[[P]] : memref<4x8xf32>) outs(%arg2 : memref<4xf32>)
// ROWS: memref.dealloc %[[P]]
// Not split: a row of 4 (< min-row=16).
// ROWS: iterator_types = ["parallel", "reduction"]} ins(%arg3 : memref<4x4xf32>)
func.func @rows(%x: memref<4x64xf32>, %m: memref<4xf32>, %s: memref<4xf32>, %y: memref<4x4xf32>, %t: memref<4xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x, %m : memref<4x64xf32>, memref<4xf32>) outs(%s : memref<4xf32>) {
  ^bb0(%v: f32, %mx: f32, %acc: f32):
    %i = linalg.index 1 : index
    %ii = arith.index_cast %i : index to i32
    %fi = arith.sitofp %ii : i32 to f32
    %d = arith.subf %v, %mx : f32
    %e = arith.mulf %d, %fi : f32
    %a = arith.addf %acc, %e fastmath<reassoc> : f32
    linalg.yield %a : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%y : memref<4x4xf32>) outs(%t : memref<4xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %a = arith.maximumf %acc, %v : f32
    linalg.yield %a : f32
  }
  return
}

// -----

// A column reduction (a bias gradient over [2, 32, 4] tokens x features,
// features last): the longest reduction dimension (32) is split, p
// outermost so that neighbouring threads keep neighbouring features;
// partials [8, 4] (p first), combined over their first dimension.
// ROWS-LABEL: func.func @columns(
// ROWS-DAG: %[[G:.*]] = memref.expand_shape %arg0 {{\[\[}}0], [1, 2], [3]] output_shape [2, 4, 8, 4] : memref<2x32x4xf32> into memref<2x4x8x4xf32>
// ROWS-DAG: %[[P:.*]] = memref.alloc() : memref<8x4xf32>
// ROWS: linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d1, d2, d0, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d3)>], iterator_types = ["parallel", "reduction", "reduction", "parallel"]} ins(%[[G]] : memref<2x4x8x4xf32>) outs(%[[P]] : memref<8x4xf32>)
// ROWS: linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>], iterator_types = ["reduction", "parallel"]} ins(%[[P]] : memref<8x4xf32>) outs(%arg1 : memref<4xf32>)
func.func @columns(%g: memref<2x32x4xf32>, %b: memref<4xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d2)>],
                  iterator_types = ["reduction", "reduction", "parallel"]}
      ins(%g : memref<2x32x4xf32>) outs(%b : memref<4xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %a = arith.addf %acc, %v fastmath<reassoc> : f32
    linalg.yield %a : f32
  }
  return
}

// -----

// Too many partials for the last, single-thread step (max-serial=4): the
// 64 partials of a [4, 256] sum (at least 4 elements each, min-work) are
// split again into 16 (4 each), then those 16 into 4.
// TWICE-LABEL: func.func @twice(
// TWICE: memref.alloc() : memref<64xf32>
// TWICE: iterator_types = ["parallel", "reduction"]} ins(%{{.*}} : memref<16x64xf32>) outs(%{{.*}} : memref<64xf32>)
// TWICE: memref.alloc() : memref<16xf32>
// TWICE: iterator_types = ["parallel", "reduction"]} ins(%{{.*}} : memref<4x16xf32>) outs(%{{.*}} : memref<16xf32>)
// TWICE: memref.alloc() : memref<4xf32>
// TWICE: iterator_types = ["parallel", "reduction"]} ins(%{{.*}} : memref<4x4xf32>) outs(%{{.*}} : memref<4xf32>)
// TWICE: iterator_types = ["reduction"]} ins(%{{.*}} : memref<4xf32>) outs(%arg1 : memref<f32>)
func.func @twice(%x: memref<4x256xf32>, %s: memref<f32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>],
                  iterator_types = ["reduction", "reduction"]}
      ins(%x : memref<4x256xf32>) outs(%s : memref<f32>) {
  ^bb0(%v: f32, %acc: f32):
    %a = arith.addf %acc, %v fastmath<reassoc> : f32
    linalg.yield %a : f32
  }
  return
}

// -----

// A write-once output (FP8 quantization fused into its tensor's amax by
// lpc-fuse-sibling-reductions{elementwise}: old value unread, indexed by
// every loop) is written by the partial pass where it reads the input
// (element k * 16 + p at [k, p] of the same expanded view); only the amax
// has partials to combine.
// CHECK-LABEL: func.func @max_and_scaled(
// CHECK-DAG: %[[X:.*]] = memref.collapse_shape %arg0 {{\[\[}}0, 1]] : memref<64x8xf32> into memref<512xf32>
// CHECK-DAG: %[[Y:.*]] = memref.collapse_shape %arg2 {{\[\[}}0, 1]] : memref<64x8xf32> into memref<512xf32>
// CHECK-DAG: %[[XE:.*]] = memref.expand_shape %[[X]] {{\[\[}}0, 1]] output_shape [32, 16]
// CHECK-DAG: %[[YE:.*]] = memref.expand_shape %[[Y]] {{\[\[}}0, 1]] output_shape [32, 16]
// CHECK-DAG: %[[PM:.*]] = memref.alloc() : memref<16xf32>
// CHECK: linalg.generic {indexing_maps = [#[[T:.*]], #{{.*}}, #[[T]]], iterator_types = ["parallel", "reduction"]} ins(%[[XE]] : memref<32x16xf32>) outs(%[[PM]], %[[YE]] : memref<16xf32>, memref<32x16xf32>)
// CHECK: arith.maximumf
// CHECK: %[[S:.*]] = arith.mulf
// CHECK: linalg.yield %{{.*}}, %[[S]] : f32, f32
// CHECK: linalg.generic {{.*}} iterator_types = ["reduction"]} ins(%[[PM]] : memref<16xf32>) outs(%arg1 : memref<f32>)
// CHECK-NOT: linalg.generic
func.func @max_and_scaled(%x: memref<64x8xf32>, %m: memref<f32>, %y: memref<64x8xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["reduction", "reduction"]}
      ins(%x : memref<64x8xf32>) outs(%m, %y : memref<f32>, memref<64x8xf32>) {
  ^bb0(%v: f32, %mx: f32, %unused: f32):
    %b = math.absf %v : f32
    %n = arith.maximumf %mx, %b : f32
    %c = arith.constant 2.0 : f32
    %s = arith.mulf %v, %c : f32
    linalg.yield %n, %s : f32, f32
  }
  return
}
