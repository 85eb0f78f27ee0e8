// --lpc-model-summary lists buffers (lpc.buffer: state that is not trained)
// with their declared value, counts their bytes in the total line and in
// the JSON, and widens the kind column for them.
// RUN: lpc-opt %s --lpc-model-summary -o /dev/null 2>&1 \
// RUN:   | FileCheck %s --strict-whitespace --match-full-lines
// RUN: lpc-opt %s --lpc-model-summary=json=true -o /dev/null 2>&1 | FileCheck %s --check-prefix=JSON

// CHECK:model @bn
// CHECK-NEXT:  kind    name          shape     init/kind      elements       bytes
// CHECK-NEXT:  param   w             4x8xf32   normal               32       128 B
// CHECK-NEXT:  buffer  running_mean  8xf32     value 0               8        32 B
// CHECK-NEXT:  buffer  running_var   8xf32     value 1               8        32 B
// CHECK-NEXT:  buffer  count         i64       value 3               1         8 B
// CHECK-NEXT:  input   x             16x4xf32  features             64       256 B
// CHECK-NEXT:  total: 32 parameters (128 B as FP32 masters), 72 B of buffers, 256 B of inputs per batch
// JSON: "buffer_bytes": 72,
// JSON: "kind": "buffer",
// JSON-NEXT: "name": "running_mean",

func.func @bn() -> tensor<f32> {
  %w = lpc.param "w" normal : tensor<4x8xf32>
  %m = lpc.buffer "running_mean" : tensor<8xf32>
  %v = lpc.buffer "running_var" {value = 1.0 : f64} : tensor<8xf32>
  %n = lpc.buffer "count" {value = 3.0 : f64} : tensor<i64>
  %x = lpc.input "x" features : tensor<16x4xf32>
  %h = lpc.matmul %x, %w : tensor<16x4xf32>, tensor<4x8xf32> -> tensor<16x8xf32>
  %l = lpc.reduce_sum %h {axes = array<i64: 0, 1>} : tensor<16x8xf32> -> tensor<f32>
  return %l : tensor<f32>
}
