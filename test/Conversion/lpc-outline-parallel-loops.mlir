// RUN: lpc-opt %s --lpc-outline-parallel-loops="min-work=1024" | FileCheck %s
// RUN: lpc-opt %s --lpc-outline-parallel-loops | FileCheck %s --check-prefix=DEFAULT
// RUN: lpc-opt %s --lpc-outline-parallel-loops="min-work=1024" --convert-scf-to-cf --finalize-memref-to-llvm --convert-arith-to-llvm --convert-func-to-llvm --reconcile-unrealized-casts --lpc-lower-parallel-calls | FileCheck %s --check-prefix=LLVM

// Top-level scf.parallel nests without reductions become functions over a
// range [lo, hi) of their flattened outer iterations (the innermost
// dimension stays a whole loop), called once over the whole range. What the
// nest reads from outside is passed in; constants are cloned in.

// CHECK-LABEL: func.func @f(
// CHECK: %[[T:.*]] = memref.alloc() : memref<4x16x256xf32>
// CHECK: %[[ACC:.*]] = memref.alloc() : memref<64xf32>
// CHECK: call @f__par0(%{{.*}}, %{{.*}}, %arg0, %arg2, %[[T]]) : (index, index, memref<4x16x256xf32>, f32, memref<4x16x256xf32>) -> ()
// CHECK: %[[V:.*]] = memref.collapse_shape %[[T]]
// CHECK: call @f__par1(%{{.*}}, %{{.*}}, %[[V]], %[[ACC]])
// Too small (8 iterations), a reduction (init values), a nest inside a loop:
// left alone.
// CHECK: scf.parallel
// CHECK: scf.parallel {{.*}} init
// CHECK: scf.for
// CHECK-NEXT: scf.parallel
// CHECK: return

// The nest 4x16x256: outer 4x16 flattened and split, the 256 loop whole.
// Only the fresh buffer is noalias (position 13: lo, hi, then arg0's 9
// descriptor fields, then s; its aligned pointer is the second field).
// CHECK-LABEL: func.func private @f__par0(%arg0: index, %arg1: index, %arg2: memref<4x16x256xf32>, %arg3: f32, %arg4: memref<4x16x256xf32>)
// CHECK-SAME: lpc.parallel_body, lpc.parallel_grain = 4 : i64, lpc.parallel_noalias = array<i64: 13>, lpc.parallel_params = 21 : i64
// CHECK: scf.for %[[F:.*]] = %arg0 to %arg1
// CHECK: arith.remui %[[F]]
// CHECK: arith.divui %[[F]]
// CHECK: scf.for %{{.*}} = %c0{{.*}} to %c256
// CHECK: arith.mulf
// CHECK: return

// A view of a fresh buffer that is the only capture of it is noalias too.
// CHECK-LABEL: func.func private @f__par1
// CHECK-SAME: lpc.parallel_noalias = array<i64: 3, 10>

// By default a nest needs 65536 innermost iterations (these have 16384).
// DEFAULT-LABEL: func.func @f(
// DEFAULT-NOT: call @f__par
// DEFAULT: return

// After the LLVM lowering: each call stores the captures into a stack struct
// and hands a thunk to the runtime; the bodies get their noalias pointers.
// LLVM-LABEL: llvm.func @f(
// LLVM: %[[CTX0:.*]] = llvm.alloca %{{.*}} x !llvm.struct<(ptr, ptr, i64, i64, i64, i64, i64, i64, i64, f32, ptr, ptr, i64, i64, i64, i64, i64, i64, i64)>
// LLVM: llvm.store
// LLVM: %[[FN:.*]] = llvm.mlir.addressof @f__par0__thunk : !llvm.ptr
// LLVM: %[[G:.*]] = llvm.mlir.constant(4 : i64) : i64
// LLVM: llvm.call @lpc_rt_parallel_for(%[[FN]], %[[CTX0]], %{{.*}}, %{{.*}}, %[[G]]) : (!llvm.ptr, !llvm.ptr, i64, i64, i64) -> ()
// LLVM: llvm.call @lpc_rt_parallel_for
// LLVM-LABEL: llvm.func internal @f__par0(
// LLVM-SAME: %arg13: !llvm.ptr {llvm.noalias}
// LLVM-LABEL: llvm.func internal @f__par0__thunk(%arg0: !llvm.ptr, %arg1: i64, %arg2: i64)
// LLVM-COUNT-17: llvm.load
// LLVM: llvm.call @f__par0(%arg1, %arg2,
// LLVM: llvm.func @lpc_rt_parallel_for(!llvm.ptr, !llvm.ptr, i64, i64, i64)

func.func @f(%a: memref<4x16x256xf32>, %b: memref<64x256xf32>, %s: f32, %small: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %c16 = arith.constant 16 : index
  %c64 = arith.constant 64 : index
  %c256 = arith.constant 256 : index
  %zero = arith.constant 0.0 : f32
  %t = memref.alloc() : memref<4x16x256xf32>
  %acc = memref.alloc() : memref<64xf32>
  scf.parallel (%i, %j, %k) = (%c0, %c0, %c0) to (%c4, %c16, %c256) step (%c1, %c1, %c1) {
    %x = memref.load %a[%i, %j, %k] : memref<4x16x256xf32>
    %y = arith.mulf %x, %s : f32
    memref.store %y, %t[%i, %j, %k] : memref<4x16x256xf32>
    scf.reduce
  }
  %v = memref.collapse_shape %t [[0, 1], [2]] : memref<4x16x256xf32> into memref<64x256xf32>
  scf.parallel (%i) = (%c0) to (%c64) step (%c1) {
    scf.for %j = %c0 to %c256 step %c1 {
      %x = memref.load %v[%i, %j] : memref<64x256xf32>
      %r = memref.load %acc[%i] : memref<64xf32>
      %y = arith.addf %r, %x : f32
      memref.store %y, %acc[%i] : memref<64xf32>
    }
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
    memref.store %s, %small[%i] : memref<8xf32>
    scf.reduce
  }
  %sum = scf.parallel (%i, %j) = (%c0, %c0) to (%c64, %c256) step (%c1, %c1) init (%zero) -> f32 {
    %x = memref.load %b[%i, %j] : memref<64x256xf32>
    scf.reduce(%x : f32) {
    ^bb0(%l: f32, %r: f32):
      %q = arith.addf %l, %r : f32
      scf.reduce.return %q : f32
    }
  }
  memref.store %sum, %small[%c0] : memref<8xf32>
  scf.for %i = %c0 to %c64 step %c1 {
    scf.parallel (%j) = (%c0) to (%c256) step (%c1) {
      %x = memref.load %b[%i, %j] : memref<64x256xf32>
      memref.store %x, %b[%i, %j] : memref<64x256xf32>
      scf.reduce
    }
  }
  return
}

// A column tile of lpc-parallel-columns: 4 tiles, each row loop around an
// scf.parallel over the tile's 128 columns. The work of a tile counts the
// nested scf.parallel too (64 x 128 = 8192 >= 1024: one tile is worth a
// thread, grain 1; counting only the scf.for, 64, it would be 16, more
// than the 4 tiles, and nothing would be split).
// CHECK-LABEL: func.func @tiles(
// CHECK: call @tiles__par0(
// CHECK-LABEL: func.func private @tiles__par0(
// CHECK-SAME: lpc.parallel_grain = 1 : i64
func.func @tiles(%x: memref<64x512xf32>, %acc: memref<512xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %c128 = arith.constant 128 : index
  %c512 = arith.constant 512 : index
  scf.parallel (%t) = (%c0) to (%c512) step (%c128) {
    scf.for %i = %c0 to %c64 step %c1 {
      scf.parallel (%j) = (%c0) to (%c128) step (%c1) {
        %col = arith.addi %t, %j : index
        %v = memref.load %x[%i, %col] : memref<64x512xf32>
        %a = memref.load %acc[%col] : memref<512xf32>
        %s = arith.addf %a, %v : f32
        memref.store %s, %acc[%col] : memref<512xf32>
        scf.reduce
      }
    }
    scf.reduce
  }
  return
}
