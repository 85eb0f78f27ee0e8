// RUN: lpc-opt %s --lpc-parallel-columns="columns=128 min-work=2048" | FileCheck %s
// RUN: lpc-opt %s --lpc-parallel-columns | FileCheck %s --check-prefix=DEFAULT

// Reductions over rows into columns (a reduction loop before a parallel
// one) are tiled along their parallel loops with an scf.forall, so that
// the host's threads share the columns; each tile is the same reduction on
// fewer columns (the rows summed in the same order).

#rows = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#cols = affine_map<(d0, d1, d2) -> (d2)>

// A bias gradient [4, 64, 512] -> [512]: 4 tiles of 128 columns.
// CHECK-LABEL: func.func @bias_grad
// CHECK: scf.forall (%[[J:.*]]) = (0) to (512) step (128) shared_outs(%[[O:.*]] = %{{.*}}) -> (tensor<512xf32>)
// CHECK: tensor.extract_slice %arg0[0, 0, %[[J]]] [4, 64, 128] [1, 1, 1]
// CHECK: linalg.generic {{.*}} iterator_types = ["reduction", "reduction", "parallel"]
// CHECK-SAME: outs(%{{.*}} : tensor<128xf32>)
// CHECK: tensor.parallel_insert_slice %{{.*}} into %[[O]][%[[J]]] [128] [1]
// With the default min-work (65536) the 32768 iterations of a tile are too
// few: left alone.
// DEFAULT-LABEL: func.func @bias_grad
// DEFAULT-NOT: scf.forall
// DEFAULT: return
func.func @bias_grad(%x: tensor<4x64x512xf32>) -> tensor<512xf32> {
  %c0 = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<512xf32>
  %z = linalg.fill ins(%c0 : f32) outs(%e : tensor<512xf32>) -> tensor<512xf32>
  %r = linalg.generic {indexing_maps = [#rows, #cols],
                       iterator_types = ["reduction", "reduction", "parallel"]}
      ins(%x : tensor<4x64x512xf32>) outs(%z : tensor<512xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %out, %in : f32
    linalg.yield %s : f32
  } -> tensor<512xf32>
  return %r : tensor<512xf32>
}

// Two results (a LayerNorm's weight and bias gradients) tile together.
// CHECK-LABEL: func.func @two_results
// CHECK: scf.forall (%[[J:.*]]) = (0) to (256) step (128) shared_outs(%[[A:.*]] = %{{.*}}, %[[B:.*]] = %{{.*}})
// CHECK: tensor.parallel_insert_slice %{{.*}} into %[[A]][%[[J]]] [128] [1]
// CHECK: tensor.parallel_insert_slice %{{.*}} into %[[B]][%[[J]]] [128] [1]
func.func @two_results(%x: tensor<2x64x256xf32>, %y: tensor<2x64x256xf32>)
    -> (tensor<256xf32>, tensor<256xf32>) {
  %c0 = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<256xf32>
  %z = linalg.fill ins(%c0 : f32) outs(%e : tensor<256xf32>) -> tensor<256xf32>
  %r:2 = linalg.generic {indexing_maps = [#rows, #rows, #cols, #cols],
                         iterator_types = ["reduction", "reduction", "parallel"]}
      ins(%x, %y : tensor<2x64x256xf32>, tensor<2x64x256xf32>)
      outs(%z, %z : tensor<256xf32>, tensor<256xf32>) {
  ^bb0(%a: f32, %b: f32, %o1: f32, %o2: f32):
    %p = arith.mulf %a, %b : f32
    %s1 = arith.addf %o1, %p : f32
    %s2 = arith.addf %o2, %b : f32
    linalg.yield %s1, %s2 : f32, f32
  } -> (tensor<256xf32>, tensor<256xf32>)
  return %r#0, %r#1 : tensor<256xf32>, tensor<256xf32>
}

// A reduction over the batch into [8, 64] (a position-embedding
// gradient): the innermost loop whole (64 < 128), the outer parallel loop
// in tiles of 2 rows so that a tile has 16 x 2 x 64 >= 2048 iterations.
// CHECK-LABEL: func.func @outer_parallel
// CHECK: scf.forall (%{{.*}}, %{{.*}}) = (0, 0) to (8, 64) step (2, 64)
// CHECK: -> tensor<2x64xf32>
func.func @outer_parallel(%x: tensor<16x8x64xf32>) -> tensor<8x64xf32> {
  %c0 = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x64xf32>
  %z = linalg.fill ins(%c0 : f32) outs(%e : tensor<8x64xf32>) -> tensor<8x64xf32>
  %r = linalg.generic {indexing_maps = [#rows, affine_map<(d0, d1, d2) -> (d1, d2)>],
                       iterator_types = ["reduction", "parallel", "parallel"]}
      ins(%x : tensor<16x8x64xf32>) outs(%z : tensor<8x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %out, %in : f32
    linalg.yield %s : f32
  } -> tensor<8x64xf32>
  return %r : tensor<8x64xf32>
}

// Left alone: a row reduction (already parallel over its rows), a full
// reduction (nothing parallel), a column reduction of one tile.
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT: scf.forall
// CHECK: return
func.func @left_alone(%x: tensor<4x64x512xf32>, %s: tensor<64x128xf32>)
    -> (tensor<4x64xf32>, tensor<f32>, tensor<128xf32>) {
  %c0 = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x64xf32>
  %z = linalg.fill ins(%c0 : f32) outs(%e : tensor<4x64xf32>) -> tensor<4x64xf32>
  %rows = linalg.generic {indexing_maps = [#rows, affine_map<(d0, d1, d2) -> (d0, d1)>],
                          iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x : tensor<4x64x512xf32>) outs(%z : tensor<4x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %a = arith.addf %out, %in : f32
    linalg.yield %a : f32
  } -> tensor<4x64xf32>
  %e0 = tensor.empty() : tensor<f32>
  %z0 = linalg.fill ins(%c0 : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %all = linalg.generic {indexing_maps = [#rows, affine_map<(d0, d1, d2) -> ()>],
                         iterator_types = ["reduction", "reduction", "reduction"]}
      ins(%x : tensor<4x64x512xf32>) outs(%z0 : tensor<f32>) {
  ^bb0(%in: f32, %out: f32):
    %a = arith.addf %out, %in : f32
    linalg.yield %a : f32
  } -> tensor<f32>
  %e1 = tensor.empty() : tensor<128xf32>
  %z1 = linalg.fill ins(%c0 : f32) outs(%e1 : tensor<128xf32>) -> tensor<128xf32>
  %one = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>],
                         iterator_types = ["reduction", "parallel"]}
      ins(%s : tensor<64x128xf32>) outs(%z1 : tensor<128xf32>) {
  ^bb0(%in: f32, %out: f32):
    %a = arith.addf %out, %in : f32
    linalg.yield %a : f32
  } -> tensor<128xf32>
  return %rows, %all, %one : tensor<4x64xf32>, tensor<f32>, tensor<128xf32>
}
