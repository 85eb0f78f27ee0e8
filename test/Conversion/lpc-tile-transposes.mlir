// RUN: lpc-opt %s -split-input-file --lpc-tile-transposes | FileCheck %s
// RUN: lpc-opt %s -split-input-file --lpc-tile-transposes="bytes=4" | FileCheck %s --check-prefix=B4
// RUN: not lpc-opt %s -split-input-file --lpc-tile-transposes="bytes=3" 2>&1 | FileCheck %s --check-prefix=BAD

// FP8, rank 2, [48, 80] -> [80, 48]: 3 x 5 tiles of 16 x 16, the column
// tiles innermost. Each iteration loads 16 source rows of 16 consecutive
// bytes (row0 + i, col0 + k), then stores 16 destination rows of 16
// consecutive bytes (col0 + k, row0 + i). With bytes=4: 4 x 4 tiles.
// BAD: bytes must be a power of two of at least 2, got 3
// CHECK-LABEL: func.func @rank2
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[C3:.*]] = arith.constant 3 : index
// CHECK-DAG: %[[C5:.*]] = arith.constant 5 : index
// CHECK: scf.parallel (%[[R:.*]], %[[C:.*]]) = (%[[C0]], %[[C0]]) to (%[[C3]], %[[C5]]) step (%[[C1]], %[[C1]])
// CHECK-NEXT: %[[T:.*]] = arith.constant 16 : index
// CHECK-NEXT: %[[R0:.*]] = arith.muli %[[R]], %[[T]] : index
// CHECK-NEXT: %[[K0:.*]] = arith.muli %[[C]], %[[T]] : index
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1 : index
// CHECK-NEXT: %[[R1:.*]] = arith.addi %[[R0]], %[[ONE]] : index
// CHECK-NEXT: %[[K1:.*]] = arith.addi %[[K0]], %[[ONE]] : index
// CHECK: %[[C15:.*]] = arith.constant 15 : index
// CHECK-NEXT: %[[R15:.*]] = arith.addi %[[R0]], %[[C15]] : index
// CHECK-NEXT: %[[K15:.*]] = arith.addi %[[K0]], %[[C15]] : index
// CHECK-NEXT: memref.load %[[IN:.*]][%[[R0]], %[[K0]]] : memref<48x80xf8E4M3FN>
// CHECK-NEXT: memref.load %[[IN]][%[[R0]], %[[K1]]]
// CHECK-COUNT-14: memref.load %[[IN]][%[[R0]], %{{.*}}]
// CHECK-NEXT: memref.load %[[IN]][%[[R1]], %[[K0]]]
// CHECK-COUNT-238: memref.load
// CHECK-NEXT: %[[LAST:.*]] = memref.load %[[IN]][%[[R15]], %[[K15]]]
// CHECK-NEXT: memref.store %{{.*}}, %[[OUT:.*]][%[[K0]], %[[R0]]] : memref<80x48xf8E4M3FN>
// CHECK-NEXT: memref.store %{{.*}}, %[[OUT]][%[[K0]], %[[R1]]]
// CHECK-COUNT-14: memref.store %{{.*}}, %[[OUT]][%[[K0]], %{{.*}}]
// CHECK-NEXT: memref.store %{{.*}}, %[[OUT]][%[[K1]], %[[R0]]]
// CHECK-COUNT-238: memref.store
// CHECK-NEXT: memref.store %[[LAST]], %[[OUT]][%[[K15]], %[[R15]]]
// CHECK-NEXT: scf.reduce
// CHECK-NOT: linalg.transpose
// B4-LABEL: func.func @rank2
// B4: scf.parallel {{.*}} to (%c12, %c20)
// B4-COUNT-16: memref.load
// B4-NOT: memref.load
// B4-COUNT-16: memref.store
// B4-NOT: memref.store
func.func @rank2(%in: memref<48x80xf8E4M3FN>, %out: memref<80x48xf8E4M3FN>) {
  linalg.transpose ins(%in : memref<48x80xf8E4M3FN>) outs(%out : memref<80x48xf8E4M3FN>) permutation = [1, 0]
  return
}

// -----

// Batched (rank 3): the batch dimension outermost and untouched; bf16
// (2 bytes) takes 8 x 8 tiles: [3, 16, 40] -> [3, 40, 16] is 3 x 2 x 5.
// CHECK-LABEL: func.func @batched
// CHECK: scf.parallel (%[[B:.*]], %[[R:.*]], %[[C:.*]]) = ({{.*}}) to (%c3, %c2, %c5)
// CHECK-NEXT: %[[T:.*]] = arith.constant 8 : index
// CHECK-NEXT: %[[R0:.*]] = arith.muli %[[R]], %[[T]] : index
// CHECK-NEXT: %[[K0:.*]] = arith.muli %[[C]], %[[T]] : index
// CHECK: memref.load %{{.*}}[%[[B]], %[[R0]], %[[K0]]] : memref<3x16x40xbf16>
// CHECK-COUNT-63: memref.load %{{.*}}[%[[B]], %{{.*}}, %{{.*}}] : memref<3x16x40xbf16>
// CHECK-NEXT: memref.store %{{.*}}, %{{.*}}[%[[B]], %[[K0]], %[[R0]]] : memref<3x40x16xbf16>
// CHECK-COUNT-63: memref.store %{{.*}}, %{{.*}}[%[[B]], %{{.*}}, %{{.*}}] : memref<3x40x16xbf16>
// CHECK-NEXT: scf.reduce
// CHECK-NOT: linalg.transpose
// With bytes=4, 2 x 2 tiles.
// B4-LABEL: func.func @batched
// B4: scf.parallel {{.*}} to (%c3, %c8, %c20)
// B4-COUNT-4: memref.load
// B4-COUNT-4: memref.store
// B4-NEXT: scf.reduce
func.func @batched(%in: memref<3x16x40xbf16>, %out: memref<3x40x16xbf16>) {
  linalg.transpose ins(%in : memref<3x16x40xbf16>) outs(%out : memref<3x40x16xbf16>) permutation = [0, 2, 1]
  return
}

// -----

// Left alone: a dimension not a multiple of the tile (FP8: 16; 24 is not;
// with bytes=4 the tile is 4 and it is taken), a permutation that is not
// the swap of the last two, a strided (non-contiguous) view, a dynamic
// shape, a transpose onto itself, tensors.
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT: scf.parallel
// CHECK-COUNT-6: linalg.transpose
// CHECK-NOT: scf.parallel
// B4-LABEL: func.func @left_alone
// B4: scf.parallel {{.*}} to (%c6, %c8)
// B4-COUNT-5: linalg.transpose
// B4-NOT: scf.parallel
func.func @left_alone(%a: memref<24x32xf8E5M2>, %at: memref<32x24xf8E5M2>,
                      %b: memref<16x32x48xf8E4M3FN>, %bt: memref<32x16x48xf8E4M3FN>,
                      %c: memref<32x32xf8E4M3FN, strided<[64, 1]>>, %ct: memref<32x32xf8E4M3FN>,
                      %d: memref<?x32xf8E4M3FN>, %dt: memref<32x?xf8E4M3FN>,
                      %e: memref<32x32xf8E4M3FN>,
                      %f: tensor<32x32xf8E4M3FN>) -> tensor<32x32xf8E4M3FN> {
  linalg.transpose ins(%a : memref<24x32xf8E5M2>) outs(%at : memref<32x24xf8E5M2>) permutation = [1, 0]
  linalg.transpose ins(%b : memref<16x32x48xf8E4M3FN>) outs(%bt : memref<32x16x48xf8E4M3FN>) permutation = [1, 0, 2]
  linalg.transpose ins(%c : memref<32x32xf8E4M3FN, strided<[64, 1]>>) outs(%ct : memref<32x32xf8E4M3FN>) permutation = [1, 0]
  linalg.transpose ins(%d : memref<?x32xf8E4M3FN>) outs(%dt : memref<32x?xf8E4M3FN>) permutation = [1, 0]
  linalg.transpose ins(%e : memref<32x32xf8E4M3FN>) outs(%e : memref<32x32xf8E4M3FN>) permutation = [1, 0]
  %init = tensor.empty() : tensor<32x32xf8E4M3FN>
  %r = linalg.transpose ins(%f : tensor<32x32xf8E4M3FN>) outs(%init : tensor<32x32xf8E4M3FN>) permutation = [1, 0]
  return %r : tensor<32x32xf8E4M3FN>
}
