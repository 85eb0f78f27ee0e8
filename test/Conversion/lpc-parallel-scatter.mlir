// RUN: lpc-opt %s --lpc-parallel-scatter | FileCheck %s
// RUN: lpc-opt %s --lpc-parallel-scatter="max-parts=4 min-chunk=3" --canonicalize | FileCheck %s --check-prefix=CHUNKS

// An embedding gradient's scatter-add (tokens in order, columns inside,
// marked lpc.independent_columns by its lowering) becomes a parallel loop
// over the columns, each running the token loop in order with the column
// body inlined.
// CHECK-LABEL: func.func @scatter(
// CHECK: scf.parallel (%[[J:.*]]) = (%c0) to (%c4) step (%c1) {
// CHECK-NEXT: scf.for %[[N:.*]] = %c0 to %c6 step %c1 {
// CHECK: %[[ID:.*]] = arith.index_cast
// CHECK: scf.if
// CHECK-NEXT: %[[G:.*]] = memref.load %arg1[%[[N]], %[[J]]]
// CHECK-NEXT: %[[T:.*]] = memref.load %arg2[%[[ID]], %[[J]]]
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[T]], %[[G]]
// CHECK-NEXT: memref.store %[[S]], %arg2[%[[ID]], %[[J]]]
// CHECK-NOT: lpc.independent_columns
// CHECK: return
func.func @scatter(%ids: memref<6xi32>, %g: memref<6x4xf32>, %table: memref<5x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c5 = arith.constant 5 : index
  %c6 = arith.constant 6 : index
  scf.for %n = %c0 to %c6 step %c1 {
    %raw = memref.load %ids[%n] : memref<6xi32>
    %id = arith.index_cast %raw : i32 to index
    %lo = arith.cmpi sge, %id, %c0 : index
    %hi = arith.cmpi slt, %id, %c5 : index
    %ok = arith.andi %lo, %hi : i1
    scf.if %ok {
      scf.for %j = %c0 to %c4 step %c1 {
        %x = memref.load %g[%n, %j] : memref<6x4xf32>
        %t = memref.load %table[%id, %j] : memref<5x4xf32>
        %s = arith.addf %t, %x : f32
        memref.store %s, %table[%id, %j] : memref<5x4xf32>
      }
    }
  } {lpc.independent_columns}
  return
}

// With chunks of at least 3 tokens: 2 chunks of the 6 tokens, thread
// (p, column) sums chunk p into a zeroed partial table p, then every table
// element adds its 2 partials in order.
// CHUNKS-LABEL: func.func @scatter(
// CHUNKS: %[[PT:.*]] = memref.alloc() : memref<2x5x4xf32>
// CHUNKS: scf.parallel (%[[A:.*]], %[[B:.*]], %[[C:.*]]) = ({{.*}}) to (%c2{{.*}}, %c5{{.*}}, %c4{{.*}})
// CHUNKS-NEXT: memref.store %{{.*}}, %[[PT]][%[[A]], %[[B]], %[[C]]]
// CHUNKS: scf.parallel (%[[P:.*]], %[[J:.*]]) = ({{.*}}) to (%c2{{.*}}, %c4)
// CHUNKS: %[[LO:.*]] = arith.muli %[[P]], %c3
// CHUNKS: %[[HI:.*]] = arith.addi %[[LO]], %c3
// CHUNKS: scf.for %[[N:.*]] = %[[LO]] to %[[HI]] step %c1 {
// CHUNKS: scf.if
// CHUNKS-NEXT: %[[G:.*]] = memref.load %arg1[%[[N]], %[[J]]]
// CHUNKS-NEXT: %[[T:.*]] = memref.load %[[PT]][%[[P]], %[[ID:.*]], %[[J]]]
// CHUNKS-NEXT: %[[S:.*]] = arith.addf %[[T]], %[[G]]
// CHUNKS-NEXT: memref.store %[[S]], %[[PT]][%[[P]], %[[ID]], %[[J]]]
// CHUNKS: scf.parallel (%[[V:.*]], %[[K:.*]]) = ({{.*}}) to (%c5{{.*}}, %c4{{.*}})
// CHUNKS-NEXT: %[[INIT:.*]] = memref.load %arg2[%[[V]], %[[K]]]
// CHUNKS-NEXT: %[[R:.*]] = scf.for %[[Q:.*]] = {{.*}} iter_args(%[[ACC:.*]] = %[[INIT]])
// CHUNKS-NEXT: %[[X:.*]] = memref.load %[[PT]][%[[Q]], %[[V]], %[[K]]]
// CHUNKS-NEXT: %[[Y:.*]] = arith.addf %[[ACC]], %[[X]]
// CHUNKS: memref.store %[[R]], %arg2[%[[V]], %[[K]]]
// CHUNKS: memref.dealloc %[[PT]]

// Unmarked loops, and marked ones with two inner loops, stay as they are.
// CHECK-LABEL: func.func @kept(
// CHECK-NOT: scf.parallel
// CHECK: scf.for
// CHECK: scf.for
// CHECK: scf.for
// CHECK: lpc.independent_columns
// CHECK: scf.for
// CHECK: scf.for
func.func @kept(%g: memref<6x4xf32>, %table: memref<6x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c6 = arith.constant 6 : index
  scf.for %n = %c0 to %c6 step %c1 {
    scf.for %j = %c0 to %c4 step %c1 {
      %x = memref.load %g[%n, %j] : memref<6x4xf32>
      memref.store %x, %table[%n, %j] : memref<6x4xf32>
    }
    scf.for %j = %c0 to %c4 step %c1 {
      %x = memref.load %g[%n, %j] : memref<6x4xf32>
      memref.store %x, %table[%n, %j] : memref<6x4xf32>
    }
  } {lpc.independent_columns}
  scf.for %n = %c0 to %c6 step %c1 {
    scf.for %j = %c0 to %c4 step %c1 {
      %x = memref.load %g[%n, %j] : memref<6x4xf32>
      memref.store %x, %table[%n, %j] : memref<6x4xf32>
    }
  }
  return
}
