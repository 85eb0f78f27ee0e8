// RUN: lpc-opt %s -split-input-file --lpc-split-reductions="contiguous=true exact=true row-parts=1 min-parts=2 max-parts=16 min-work=8" | FileCheck %s

// The host's form (lpc-cpu-codegen with threads): a full reduction whose
// result the order cannot change (an FP8 count in i64 and an amax) is
// flattened to one loop over 512 elements and split as i = p * 32 + k:
// partial p reduces the contiguous run [32 p, 32 p + 32) (a thread's chunk,
// not every 16th element), its buffer filled with the neutral element
// before the loop (no select in every iteration, which would hide the
// reduction from LLVM's vectorizer), then one generic combines the
// partials into the outputs.

// CHECK-LABEL: func.func @count_and_max(
// CHECK-DAG: %[[FLAT:.*]] = memref.collapse_shape %arg0 {{\[\[}}0, 1]] : memref<64x8xf32> into memref<512xf32>
// CHECK-DAG: %[[X:.*]] = memref.expand_shape %[[FLAT]] {{\[\[}}0, 1]] output_shape [16, 32] : memref<512xf32> into memref<16x32xf32>
// CHECK-DAG: %[[PC:.*]] = memref.alloc() : memref<16xi64>
// CHECK-DAG: %[[PM:.*]] = memref.alloc() : memref<16xf32>
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0 : i64
// CHECK-DAG: linalg.fill ins(%[[ZERO]] : i64) outs(%[[PC]] : memref<16xi64>)
// CHECK-DAG: %[[NINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK-DAG: linalg.fill ins(%[[NINF]] : f32) outs(%[[PM]] : memref<16xf32>)
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}, #{{.*}}], iterator_types = ["parallel", "reduction"]} ins(%[[X]] : memref<16x32xf32>) outs(%[[PC]], %[[PM]] : memref<16xi64>, memref<16xf32>)
// CHECK-NOT: arith.select
// CHECK: arith.addi
// CHECK: arith.maximumf
// CHECK: linalg.generic {{.*}} iterator_types = ["reduction"]} ins(%[[PC]], %[[PM]] : memref<16xi64>, memref<16xf32>) outs(%arg1, %arg2 : memref<i64>, memref<f32>)
// CHECK: memref.dealloc %[[PC]]
// CHECK: memref.dealloc %[[PM]]
func.func @count_and_max(%x: memref<64x8xf32>, %c: memref<i64>, %m: memref<f32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> ()>],
                  iterator_types = ["reduction", "reduction"]}
      ins(%x : memref<64x8xf32>) outs(%c, %m : memref<i64>, memref<f32>) {
  ^bb0(%v: f32, %acc: i64, %mx: f32):
    %b = math.absf %v : f32
    %big = arith.constant 448.0 : f32
    %sat = arith.cmpf ogt, %b, %big : f32
    %one = arith.extui %sat : i1 to i64
    %a = arith.addi %acc, %one : i64
    %mm = arith.maximumf %mx, %b : f32
    linalg.yield %a, %mm : i64, f32
  }
  return
}

// -----

// linalg.index of the split dimension becomes p * (n / P) + k (16 partials
// of 8).
// CHECK-LABEL: func.func @indexed(
// CHECK: %[[P:.*]] = linalg.index 0 : index
// CHECK: %[[K:.*]] = linalg.index 1 : index
// CHECK: %[[PN:.*]] = arith.muli %[[P]], %c8
// CHECK: arith.addi %[[PN]], %[[K]]
func.func @indexed(%x: memref<128xi32>, %s: memref<i32>) {
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>],
                  iterator_types = ["reduction"]}
      ins(%x : memref<128xi32>) outs(%s : memref<i32>) {
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

// With `exact`, a float sum keeps its order even where it may reassociate
// (a loss, a gradient norm: the host's results stay what they were), and a
// generic with such an output is left whole; with row-parts=1 reductions
// with parallel dimensions (softmax rows) are not split (the host's
// threads already take the rows).
// CHECK-LABEL: func.func @kept(
// CHECK-NOT: memref.alloc
// CHECK: iterator_types = ["reduction", "reduction"]
// CHECK: iterator_types = ["parallel", "reduction"]
func.func @kept(%x: memref<64x64xf32>, %s: memref<f32>, %m: memref<f32>, %r: memref<64xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> ()>],
                  iterator_types = ["reduction", "reduction"]}
      ins(%x : memref<64x64xf32>) outs(%s, %m : memref<f32>, memref<f32>) {
  ^bb0(%v: f32, %acc: f32, %mx: f32):
    %a = arith.addf %acc, %v fastmath<reassoc> : f32
    %c = arith.maximumf %mx, %v : f32
    linalg.yield %a, %c : f32, f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<64x64xf32>) outs(%r : memref<64xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %c = arith.maximumf %acc, %v : f32
    linalg.yield %c : f32
  }
  return
}
