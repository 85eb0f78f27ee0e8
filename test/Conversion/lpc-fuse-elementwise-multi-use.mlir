// RUN: lpc-opt %s -split-input-file -lpc-fuse-elementwise=multi-use=true | FileCheck %s
// RUN: lpc-opt %s -split-input-file -lpc-fuse-elementwise | FileCheck %s --check-prefix=DEFAULT

// lpc-fuse-elementwise{multi-use=true}: a producer with other users fuses
// into a consumer, its result kept as an extra result of the fused op that
// the other users read. Nothing is computed twice: each body op appears
// once in the function.

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>

// A pre-activation kept for the backward (as a GELU's input is): the bias
// add and the tanh are one loop writing both; the later user and the GEMM
// read its two results.
// CHECK-LABEL: func.func @keep_for_later
// CHECK: %[[F:.*]]:2 = linalg.generic
// CHECK-SAME: outs({{.*}}, {{.*}} : tensor<4x8xf32>, tensor<4x8xf32>)
// CHECK: %[[S:.*]] = arith.addf
// CHECK: %[[T:.*]] = math.tanh %[[S]]
// CHECK: linalg.yield %[[S]], %[[T]]
// CHECK: linalg.matmul ins(%[[F]]#1,
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %[[F]]#0 :
// CHECK-NOT: arith.addf
// CHECK: arith.mulf
// CHECK-NOT: arith.addf
// CHECK: return
// Without the option nothing fuses here: the add is a loop of its own whose
// result the other two read back.
// DEFAULT-LABEL: func.func @keep_for_later
// DEFAULT-COUNT-2: linalg.generic
// DEFAULT: linalg.matmul
// DEFAULT: linalg.generic
func.func @keep_for_later(%g: tensor<4x8xf32>, %b: tensor<8xf32>, %dy: tensor<4x8xf32>, %w: tensor<8x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %e = tensor.empty() : tensor<4x8xf32>
  %p = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%g, %b : tensor<4x8xf32>, tensor<8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  %t = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%p : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%x: f32, %o: f32):
    %s = math.tanh %x : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  %z = arith.constant 0.0 : f32
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %mm = linalg.matmul ins(%t, %w : tensor<4x8xf32>, tensor<8x8xf32>) outs(%f : tensor<4x8xf32>) -> tensor<4x8xf32>
  %d = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%dy, %p : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.mulf %x, %y : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  return %mm, %d : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>

// Siblings: one read of the shared input for both (exp, its negation and
// its max with 0 in one loop); the exp itself is not kept (no user
// outside).
// CHECK-LABEL: func.func @siblings
// CHECK: %[[F:.*]]:2 = linalg.generic
// CHECK: math.exp
// CHECK: arith.negf
// CHECK: arith.maximumf
// CHECK-NOT: linalg.generic
// CHECK: return %[[F]]#0, %[[F]]#1
// DEFAULT-LABEL: func.func @siblings
// DEFAULT-COUNT-3: linalg.generic
func.func @siblings(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %e = tensor.empty() : tensor<4x8xf32>
  %p = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = math.exp %a : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  %n = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%p : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.negf %a : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  %c0 = arith.constant 0.0 : f32
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%p : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.maximumf %a, %c0 : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  return %n, %r : tensor<4x8xf32>, tensor<4x8xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#tr = affine_map<(d0, d1) -> (d1, d0)>
#row = affine_map<(d0, d1) -> (d0)>
#col = affine_map<(d0, d1) -> (d1)>
#vec = affine_map<(d0) -> (d0)>

// Left apart: a consumer that reduces (its loop would write the kept
// result once per reduced element), one that reads it transposed, a
// broadcast (a [8] producer read by every row of a [4, 8] consumer), and a
// producer whose other user comes before the consumer (the fused op would
// not dominate it).
// CHECK-LABEL: func.func @left_apart
// CHECK-COUNT-8: linalg.generic
// CHECK-NOT: linalg.generic
func.func @left_apart(%x: tensor<4x8xf32>, %v: tensor<8xf32>) -> (tensor<4x8xf32>, tensor<4xf32>, tensor<8x4xf32>, tensor<4x8xf32>, tensor<8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
  %e = tensor.empty() : tensor<4x8xf32>
  %et = tensor.empty() : tensor<8x4xf32>
  %e4 = tensor.empty() : tensor<4xf32>
  %e8 = tensor.empty() : tensor<8xf32>
  // exp: kept (returned), read by a row sum and a transposing negation.
  %p = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = math.exp %a : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  %sum = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%p : tensor<4x8xf32>) outs(%e4 : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %a, %o : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %t = linalg.generic {indexing_maps = [#tr, #id], iterator_types = ["parallel", "parallel"]} ins(%p : tensor<4x8xf32>) outs(%et : tensor<8x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.negf %a : f32
    linalg.yield %s : f32
  } -> tensor<8x4xf32>
  // A [8] vector, kept, and added to every row.
  %q = linalg.generic {indexing_maps = [#vec, #vec], iterator_types = ["parallel"]} ins(%v : tensor<8xf32>) outs(%e8 : tensor<8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = math.exp %a : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  %bc = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %q : tensor<4x8xf32>, tensor<8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  // tanh: read by a row max, then by an elementwise consumer after it.
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = math.tanh %a : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  %u0 = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]} ins(%r : tensor<4x8xf32>) outs(%e4 : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.maximumf %a, %o : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %u1 = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%r, %u0 : tensor<4x8xf32>, tensor<4xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%a: f32, %m: f32, %o: f32):
    %s = arith.subf %a, %m : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  return %p, %sum, %t, %bc, %q, %r, %u1 : tensor<4x8xf32>, tensor<4xf32>, tensor<8x4xf32>, tensor<4x8xf32>, tensor<8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
}
