// RUN: lpc-opt %s --split-input-file --lpc-fuse-cast-transposes | FileCheck %s
// RUN: lpc-opt %s --split-input-file --lpc-fuse-cast-transposes=base-align=16 | FileCheck %s --check-prefix=ALIGN
// RUN: not lpc-opt %s --split-input-file --lpc-fuse-cast-transposes=bytes=3 2>&1 | FileCheck %s --check-prefix=BYTES
// BYTES: lpc-fuse-cast-transposes: bytes must be a power of two of at least 2, got 3
// RUN: not lpc-opt %s --split-input-file --lpc-fuse-cast-transposes=base-align=12 2>&1 | FileCheck %s --check-prefix=BASE
// BASE: lpc-fuse-cast-transposes: base-align must be 0 or a power of two, got 12

// A cast with an amax (max of the bits) that writes an FP8 tensor, then its
// transposed copy: one loop over (1 column tile of 32, 4 groups of 4 rows),
// the row groups innermost, not to be widened (lpc_tiled); each iteration
// loads its 4 rows of 32 as runs of X (1-D subviews: constant offsets from
// one pointer), casts the 128 elements (the amax carried from 0), stores
// the FP8 rows as runs of Q and the transposed copy as 32 runs of 4 of T's
// rows, and stores its partial of the amax, reduced into the accumulator
// after the loop. The transposed buffer is allocated above the cast now.
#id = affine_map<(d0, d1) -> (d0, d1)>
#s = affine_map<(d0, d1) -> ()>
func.func private @use(memref<32x16xf8E4M3FN>)
// CHECK-LABEL: func.func @amax(
// CHECK-SAME: %[[X:[^:]*]]: memref<16x32xf32>, %[[ACC:[^:]*]]: memref<i32>)
// CHECK: %[[Q:.*]] = memref.alloc() : memref<16x32xf8E4M3FN>
// CHECK-NEXT: %[[T:.*]] = memref.alloc() : memref<32x16xf8E4M3FN>
// CHECK-NEXT: %[[P:.*]] = memref.alloc() : memref<1x4xi32>
// CHECK: scf.parallel (%[[C:.*]], %[[R:.*]]) = ({{.*}}) to (%c1{{.*}}, %c4{{.*}})
// CHECK-NOT: scf.for
// CHECK: memref.subview %[[X]][%{{.*}}, %{{.*}}] [1, 32] [1, 1] : memref<16x32xf32> to memref<32xf32, strided<[1], offset: ?>>
// CHECK-COUNT-32: memref.load %{{.*}}[%{{.*}}] : memref<32xf32, strided<[1], offset: ?>>
// CHECK-COUNT-3: memref.subview %[[X]]
// Without base-align, no alignment stated.
// CHECK-NOT: alignment
// CHECK-COUNT-128: arith.maxui
// CHECK: memref.subview %[[Q]]{{.*}} [1, 32] [1, 1] : memref<16x32xf8E4M3FN> to memref<32xf8E4M3FN, strided<[1], offset: ?>>
// CHECK-COUNT-32: memref.store %{{.*}}, %{{.*}}[%{{.*}}] : memref<32xf8E4M3FN, strided<[1], offset: ?>>
// CHECK-COUNT-96: memref.store
// CHECK: memref.subview %[[T]]{{.*}} [1, 4] [1, 1] : memref<32x16xf8E4M3FN> to memref<4xf8E4M3FN, strided<[1], offset: ?>>
// CHECK-COUNT-4: memref.store %{{.*}}, %{{.*}}[%{{.*}}] : memref<4xf8E4M3FN, strided<[1], offset: ?>>
// CHECK: memref.store %{{.*}}, %[[P]][%[[C]], %[[R]]] : memref<1x4xi32>
// CHECK: } {lpc_tiled}
// CHECK: linalg.generic {{.*}}iterator_types = ["reduction", "reduction"]} ins(%[[P]] : memref<1x4xi32>) outs(%[[ACC]] : memref<i32>)
// CHECK: arith.maxui
// CHECK: memref.dealloc %[[P]]
// CHECK-NOT: linalg.transpose
// CHECK: call @use(%[[T]])
// With base-align=16 (the CUDA runtime's buffers), each access states its
// alignment: a row's elements at 16, 4, 8, 4, 16, ... bytes (f32), the FP8
// rows' at 16, 1, 2, 1, 4, ..., the transposed pieces at 4, 1, 2, 1.
// ALIGN-LABEL: func.func @amax(
// ALIGN: memref.load %{{.*}}[%{{.*}}] {alignment = 16 : i64} : memref<32xf32
// ALIGN-NEXT: memref.load %{{.*}}[%{{.*}}] {alignment = 4 : i64} : memref<32xf32
// ALIGN-NEXT: memref.load %{{.*}}[%{{.*}}] {alignment = 8 : i64} : memref<32xf32
// ALIGN-NEXT: memref.load %{{.*}}[%{{.*}}] {alignment = 4 : i64} : memref<32xf32
// ALIGN-NEXT: memref.load %{{.*}}[%{{.*}}] {alignment = 16 : i64} : memref<32xf32
// ALIGN: memref.store %{{.*}}[%{{.*}}] {alignment = 16 : i64} : memref<32xf8E4M3FN
// ALIGN-NEXT: memref.store %{{.*}}[%{{.*}}] {alignment = 1 : i64} : memref<32xf8E4M3FN
// ALIGN-NEXT: memref.store %{{.*}}[%{{.*}}] {alignment = 2 : i64} : memref<32xf8E4M3FN
// ALIGN: memref.store %{{.*}}[%{{.*}}] {alignment = 4 : i64} : memref<4xf8E4M3FN
// ALIGN-NEXT: memref.store %{{.*}}[%{{.*}}] {alignment = 1 : i64} : memref<4xf8E4M3FN
// ALIGN-NEXT: memref.store %{{.*}}[%{{.*}}] {alignment = 2 : i64} : memref<4xf8E4M3FN
// ALIGN-NEXT: memref.store %{{.*}}[%{{.*}}] {alignment = 1 : i64} : memref<4xf8E4M3FN
func.func @amax(%x: memref<16x32xf32>, %acc: memref<i32>) {
  %q = memref.alloc() : memref<16x32xf8E4M3FN>
  linalg.generic {indexing_maps = [#id, #s, #id], iterator_types = ["reduction", "reduction"]}
      ins(%x : memref<16x32xf32>) outs(%acc, %q : memref<i32>, memref<16x32xf8E4M3FN>) {
  ^bb0(%in: f32, %a: i32, %o: f8E4M3FN):
    %b = arith.bitcast %in : f32 to i32
    %m = arith.maxui %a, %b : i32
    %c = arith.truncf %in : f32 to f8E4M3FN
    linalg.yield %m, %c : i32, f8E4M3FN
  }
  %t = memref.alloc() : memref<32x16xf8E4M3FN>
  linalg.transpose ins(%q : memref<16x32xf8E4M3FN>) outs(%t : memref<32x16xf8E4M3FN>) permutation = [1, 0]
  call @use(%t) : (memref<32x16xf8E4M3FN>) -> ()
  memref.dealloc %t : memref<32x16xf8E4M3FN>
  memref.dealloc %q : memref<16x32xf8E4M3FN>
  return
}

// -----

// A pure cast (parallel loops, no accumulator): fused, no partials.
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func private @use(memref<32x16xf8E5M2>)
// CHECK-LABEL: func.func @plain(
// CHECK-NOT: linalg
// CHECK: scf.parallel
// CHECK-COUNT-128: arith.truncf
// CHECK-NOT: linalg
// CHECK: call @use
func.func @plain(%x: memref<16x32xbf16>) {
  %q = memref.alloc() : memref<16x32xf8E5M2>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<16x32xbf16>) outs(%q : memref<16x32xf8E5M2>) {
  ^bb0(%in: bf16, %o: f8E5M2):
    %c = arith.truncf %in : bf16 to f8E5M2
    linalg.yield %c : f8E5M2
  }
  %t = memref.alloc() : memref<32x16xf8E5M2>
  linalg.transpose ins(%q : memref<16x32xf8E5M2>) outs(%t : memref<32x16xf8E5M2>) permutation = [1, 0]
  call @use(%t) : (memref<32x16xf8E5M2>) -> ()
  return
}

// -----

// Left alone: the FP8 tensor is written again between the cast and the
// transpose; the transposed buffer is read in between; an f32 sum whose
// order matters; sizes that do not tile; a body that reads its indices.
#id = affine_map<(d0, d1) -> (d0, d1)>
#s = affine_map<(d0, d1) -> ()>
func.func private @use(memref<32x16xf8E4M3FN>)
// CHECK-LABEL: func.func @rewritten(
// CHECK: linalg.generic
// CHECK: linalg.fill
// CHECK: linalg.transpose
func.func @rewritten(%x: memref<16x32xf32>, %z: f8E4M3FN) {
  %q = memref.alloc() : memref<16x32xf8E4M3FN>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<16x32xf32>) outs(%q : memref<16x32xf8E4M3FN>) {
  ^bb0(%in: f32, %o: f8E4M3FN):
    %c = arith.truncf %in : f32 to f8E4M3FN
    linalg.yield %c : f8E4M3FN
  }
  linalg.fill ins(%z : f8E4M3FN) outs(%q : memref<16x32xf8E4M3FN>)
  %t = memref.alloc() : memref<32x16xf8E4M3FN>
  linalg.transpose ins(%q : memref<16x32xf8E4M3FN>) outs(%t : memref<32x16xf8E4M3FN>) permutation = [1, 0]
  call @use(%t) : (memref<32x16xf8E4M3FN>) -> ()
  return
}
// CHECK-LABEL: func.func @read_between(
// CHECK: linalg.generic
// CHECK: call @use
// CHECK: linalg.transpose
func.func @read_between(%x: memref<16x32xf32>) {
  %t = memref.alloc() : memref<32x16xf8E4M3FN>
  %q = memref.alloc() : memref<16x32xf8E4M3FN>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<16x32xf32>) outs(%q : memref<16x32xf8E4M3FN>) {
  ^bb0(%in: f32, %o: f8E4M3FN):
    %c = arith.truncf %in : f32 to f8E4M3FN
    linalg.yield %c : f8E4M3FN
  }
  call @use(%t) : (memref<32x16xf8E4M3FN>) -> ()
  linalg.transpose ins(%q : memref<16x32xf8E4M3FN>) outs(%t : memref<32x16xf8E4M3FN>) permutation = [1, 0]
  call @use(%t) : (memref<32x16xf8E4M3FN>) -> ()
  return
}
// CHECK-LABEL: func.func @ordered_sum(
// CHECK: linalg.generic
// CHECK: linalg.transpose
func.func @ordered_sum(%x: memref<16x32xf32>, %acc: memref<f32>) {
  %q = memref.alloc() : memref<16x32xf8E4M3FN>
  linalg.generic {indexing_maps = [#id, #s, #id], iterator_types = ["reduction", "reduction"]}
      ins(%x : memref<16x32xf32>) outs(%acc, %q : memref<f32>, memref<16x32xf8E4M3FN>) {
  ^bb0(%in: f32, %a: f32, %o: f8E4M3FN):
    %m = arith.addf %a, %in : f32
    %c = arith.truncf %in : f32 to f8E4M3FN
    linalg.yield %m, %c : f32, f8E4M3FN
  }
  %t = memref.alloc() : memref<32x16xf8E4M3FN>
  linalg.transpose ins(%q : memref<16x32xf8E4M3FN>) outs(%t : memref<32x16xf8E4M3FN>) permutation = [1, 0]
  call @use(%t) : (memref<32x16xf8E4M3FN>) -> ()
  return
}
func.func private @use2(memref<24x16xf8E4M3FN>)
// CHECK-LABEL: func.func @ragged(
// CHECK: linalg.generic
// CHECK: linalg.transpose
func.func @ragged(%x: memref<16x24xf32>) {
  %q = memref.alloc() : memref<16x24xf8E4M3FN>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<16x24xf32>) outs(%q : memref<16x24xf8E4M3FN>) {
  ^bb0(%in: f32, %o: f8E4M3FN):
    %c = arith.truncf %in : f32 to f8E4M3FN
    linalg.yield %c : f8E4M3FN
  }
  %t = memref.alloc() : memref<24x16xf8E4M3FN>
  linalg.transpose ins(%q : memref<16x24xf8E4M3FN>) outs(%t : memref<24x16xf8E4M3FN>) permutation = [1, 0]
  call @use2(%t) : (memref<24x16xf8E4M3FN>) -> ()
  return
}
// CHECK-LABEL: func.func @indexed(
// CHECK: linalg.generic
// CHECK: linalg.transpose
func.func @indexed(%x: memref<16x32xf32>) {
  %q = memref.alloc() : memref<16x32xf8E4M3FN>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<16x32xf32>) outs(%q : memref<16x32xf8E4M3FN>) {
  ^bb0(%in: f32, %o: f8E4M3FN):
    %i = linalg.index 0 : index
    %ii = arith.index_cast %i : index to i32
    %f = arith.sitofp %ii : i32 to f32
    %y = arith.addf %in, %f : f32
    %c = arith.truncf %y : f32 to f8E4M3FN
    linalg.yield %c : f8E4M3FN
  }
  %t = memref.alloc() : memref<32x16xf8E4M3FN>
  linalg.transpose ins(%q : memref<16x32xf8E4M3FN>) outs(%t : memref<32x16xf8E4M3FN>) permutation = [1, 0]
  call @use(%t) : (memref<32x16xf8E4M3FN>) -> ()
  return
}

// -----

// Between the cast and the transpose a GEMM call reads the FP8 tensor: a
// call marked with the operands it writes (lpc_writes, as
// lpc-gemm-to-calls marks its calls) only reads the others, and the two
// fuse; an unmarked call may write anything it is given, and they do not.
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func private @gemm(memref<16x32xf8E4M3FN>, memref<32x16xf8E4M3FN>, memref<16x16xf32>)
// CHECK-LABEL: func.func @marked(
// CHECK: scf.parallel
// CHECK: call @gemm
// CHECK-NOT: linalg.transpose
// CHECK-LABEL: func.func @unmarked(
// CHECK: linalg.generic
// CHECK: call @gemm
// CHECK: linalg.transpose
func.func @marked(%x: memref<16x32xf32>, %w: memref<32x16xf8E4M3FN>, %c: memref<16x16xf32>) {
  %q = memref.alloc() : memref<16x32xf8E4M3FN>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<16x32xf32>) outs(%q : memref<16x32xf8E4M3FN>) {
  ^bb0(%in: f32, %o: f8E4M3FN):
    %v = arith.truncf %in : f32 to f8E4M3FN
    linalg.yield %v : f8E4M3FN
  }
  call @gemm(%q, %w, %c) {lpc_writes = array<i64: 2>} : (memref<16x32xf8E4M3FN>, memref<32x16xf8E4M3FN>, memref<16x16xf32>) -> ()
  %t = memref.alloc() : memref<32x16xf8E4M3FN>
  linalg.transpose ins(%q : memref<16x32xf8E4M3FN>) outs(%t : memref<32x16xf8E4M3FN>) permutation = [1, 0]
  call @gemm(%q, %t, %c) {lpc_writes = array<i64: 2>} : (memref<16x32xf8E4M3FN>, memref<32x16xf8E4M3FN>, memref<16x16xf32>) -> ()
  return
}
func.func @unmarked(%x: memref<16x32xf32>, %w: memref<32x16xf8E4M3FN>, %c: memref<16x16xf32>) {
  %q = memref.alloc() : memref<16x32xf8E4M3FN>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<16x32xf32>) outs(%q : memref<16x32xf8E4M3FN>) {
  ^bb0(%in: f32, %o: f8E4M3FN):
    %v = arith.truncf %in : f32 to f8E4M3FN
    linalg.yield %v : f8E4M3FN
  }
  call @gemm(%q, %w, %c) : (memref<16x32xf8E4M3FN>, memref<32x16xf8E4M3FN>, memref<16x16xf32>) -> ()
  %t = memref.alloc() : memref<32x16xf8E4M3FN>
  linalg.transpose ins(%q : memref<16x32xf8E4M3FN>) outs(%t : memref<32x16xf8E4M3FN>) permutation = [1, 0]
  call @gemm(%q, %t, %c) : (memref<16x32xf8E4M3FN>, memref<32x16xf8E4M3FN>, memref<16x16xf32>) -> ()
  return
}

// -----

// A [2, 16, 32] activation quantized, the GEMM's [32, 32] view of it
// transposed: the cast's loops are collapsed like the view, then fused
// (1 column tile of 32 x 8 groups of 4 rows of the view).
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func private @use(memref<32x32xf8E4M3FN>)
// CHECK-LABEL: func.func @collapsed(
// CHECK-NOT: linalg.transpose
// CHECK: scf.parallel {{.*}} to (%c1{{.*}}, %c8{{.*}})
// CHECK-NOT: linalg.transpose
// CHECK: call @use
func.func @collapsed(%x: memref<2x16x32xf32>) {
  %q = memref.alloc() : memref<2x16x32xf8E4M3FN>
  linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x : memref<2x16x32xf32>) outs(%q : memref<2x16x32xf8E4M3FN>) {
  ^bb0(%in: f32, %o: f8E4M3FN):
    %v = arith.truncf %in : f32 to f8E4M3FN
    linalg.yield %v : f8E4M3FN
  }
  %view = memref.collapse_shape %q [[0, 1], [2]] : memref<2x16x32xf8E4M3FN> into memref<32x32xf8E4M3FN>
  %t = memref.alloc() : memref<32x32xf8E4M3FN>
  linalg.transpose ins(%view : memref<32x32xf8E4M3FN>) outs(%t : memref<32x32xf8E4M3FN>) permutation = [1, 0]
  call @use(%t) : (memref<32x32xf8E4M3FN>) -> ()
  return
}

// -----

// Two transposes of one FP8 tensor: the first is fused; for the second the
// last writer is the fused loop, and it stays a transpose.
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func private @use(memref<32x16xf8E4M3FN>)
// CHECK-LABEL: func.func @twice(
// CHECK: scf.parallel
// CHECK-NOT: linalg.transpose
// CHECK: call @use
// CHECK: linalg.transpose
// CHECK: call @use
func.func @twice(%x: memref<16x32xf32>) {
  %q = memref.alloc() : memref<16x32xf8E4M3FN>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<16x32xf32>) outs(%q : memref<16x32xf8E4M3FN>) {
  ^bb0(%in: f32, %o: f8E4M3FN):
    %c = arith.truncf %in : f32 to f8E4M3FN
    linalg.yield %c : f8E4M3FN
  }
  %t = memref.alloc() : memref<32x16xf8E4M3FN>
  linalg.transpose ins(%q : memref<16x32xf8E4M3FN>) outs(%t : memref<32x16xf8E4M3FN>) permutation = [1, 0]
  call @use(%t) : (memref<32x16xf8E4M3FN>) -> ()
  %u = memref.alloc() : memref<32x16xf8E4M3FN>
  linalg.transpose ins(%q : memref<16x32xf8E4M3FN>) outs(%u : memref<32x16xf8E4M3FN>) permutation = [1, 0]
  call @use(%u) : (memref<32x16xf8E4M3FN>) -> ()
  return
}
