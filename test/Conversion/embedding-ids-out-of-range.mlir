// RUN: lpc-opt %s --lpc-to-linalg | FileCheck %s

// An embedding lookup reads table[id] only for ids in [0, rows): an id
// computed out of range (the importer's x[rows, computed_index] and gathers
// index with computed ids) reads zeros, never memory outside the table; its
// gradient adds nothing for it either (lpc.embedding_grad).
// CHECK-LABEL: func.func @lookup
// CHECK-DAG: %[[Z:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0 : i32
// CHECK-DAG: %[[ROWS:.*]] = arith.constant 5 : i32
// CHECK: linalg.generic
// CHECK: ^bb0(%[[ID:.*]]: i32, %{{.*}}: f32):
// CHECK-DAG: %[[LT:.*]] = arith.cmpi slt, %[[ID]], %[[ROWS]] : i32
// CHECK-DAG: %[[GE:.*]] = arith.cmpi sge, %[[ID]], %[[ZERO]] : i32
// CHECK: %[[IN:.*]] = arith.andi %[[GE]], %[[LT]] : i1
// CHECK: %[[SAFE:.*]] = arith.select %[[IN]], %[[ID]], %[[ZERO]] : i32
// CHECK: %[[ROW:.*]] = arith.index_cast %[[SAFE]] : i32 to index
// CHECK: %[[V:.*]] = tensor.extract %{{.*}}[%[[ROW]], %{{.*}}] : tensor<5x8xf32>
// CHECK: %[[OUT:.*]] = arith.select %[[IN]], %[[V]], %[[Z]] : f32
// CHECK: linalg.yield %[[OUT]] : f32
func.func @lookup(%w: tensor<5x8xf32>, %ids: tensor<4x6xi32>) -> tensor<4x6x8xf32> {
  %h = lpc.embedding %w, %ids : tensor<5x8xf32>, tensor<4x6xi32> -> tensor<4x6x8xf32>
  return %h : tensor<4x6x8xf32>
}
