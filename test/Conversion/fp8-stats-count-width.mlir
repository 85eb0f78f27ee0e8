// lpc.fp8_stats counts in i32 when the tensor has fewer than 2^31 elements
// (no count can overflow; the loop vectorizes wider), in i64 otherwise.
// RUN: lpc-opt %s --lpc-to-linalg | FileCheck %s

// CHECK-LABEL: func.func @small(
// CHECK: linalg.generic {{.*}} outs({{.*}} : tensor<i32>, tensor<i32>)
// CHECK: arith.uitofp {{.*}} : i32 to f64
func.func @small(%x: tensor<32768x65535xbf16>, %s: tensor<f32>) -> (tensor<f32>, tensor<f32>) {
  %sat, %und = lpc.fp8_stats %x, %s {format = #lpc.precision<fp8_e4m3>} : tensor<32768x65535xbf16>
  return %sat, %und : tensor<f32>, tensor<f32>
}

// 2^31 elements: a count could reach 2^31.
// CHECK-LABEL: func.func @large(
// CHECK: linalg.generic {{.*}} outs({{.*}} : tensor<i64>, tensor<i64>)
// CHECK: arith.uitofp {{.*}} : i64 to f64
func.func @large(%x: tensor<32768x65536xbf16>, %s: tensor<f32>) -> (tensor<f32>, tensor<f32>) {
  %sat, %und = lpc.fp8_stats %x, %s {format = #lpc.precision<fp8_e5m2>} : tensor<32768x65536xbf16>
  return %sat, %und : tensor<f32>, tensor<f32>
}
