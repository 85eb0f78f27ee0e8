// RUN: lpc-opt %s -split-input-file --lpc-to-linalg --cse --lpc-fuse-sibling-reductions | FileCheck %s

// FP8 delayed scaling: the amax and the saturation/underflow counts of one
// tensor (the scale is last step's, an argument) read %x once: one generic
// with the amax key and both counts as outputs, each with its own body.
// CHECK-LABEL: func.func @delayed(
// CHECK: %[[R:.*]]:3 = linalg.generic {{.*}} iterator_types = ["reduction", "reduction"]} ins(%arg0 : tensor<4x8xf32>) outs({{.*}} : tensor<i32>, tensor<i32>, tensor<i32>)
// CHECK: arith.maxui
// CHECK: arith.cmpf ogt
// CHECK: arith.cmpf ole
// CHECK: linalg.yield {{.*}} : i32, i32, i32
// CHECK-NOT: iterator_types = ["reduction", "reduction"]
// CHECK: tensor.extract %[[R]]#0
// CHECK: tensor.extract %[[R]]#1
// CHECK: tensor.extract %[[R]]#2
func.func @delayed(%x: tensor<4x8xf32>, %s: tensor<f32>) -> (tensor<f32>, tensor<f32>, tensor<f32>) {
  %a = lpc.amax %x : tensor<4x8xf32>
  %sat, %und = lpc.fp8_stats %x, %s {format = #lpc.precision<fp8_e4m3>} : tensor<4x8xf32>
  return %a, %sat, %und : tensor<f32>, tensor<f32>, tensor<f32>
}

// -----

// Current scaling: the counts use the scale computed from this amax, so
// they need the amax first: two passes.
// CHECK-LABEL: func.func @current(
// CHECK: linalg.generic {{.*}} iterator_types = ["reduction", "reduction"]} ins(%arg0 : tensor<4x8xf32>) outs({{.*}} : tensor<i32>)
// CHECK: %[[A:.*]] = linalg.generic {{.*}} iterator_types = []} outs
// CHECK: tensor.extract %[[A]]
// CHECK: linalg.generic {{.*}} iterator_types = ["reduction", "reduction"]} ins(%arg0 : tensor<4x8xf32>) outs({{.*}} : tensor<i32>, tensor<i32>)
func.func @current(%x: tensor<4x8xf32>) -> (tensor<f32>, tensor<f32>) {
  %a = lpc.amax %x : tensor<4x8xf32>
  %sat, %und = lpc.fp8_stats %x, %a {format = #lpc.precision<fp8_e4m3>} : tensor<4x8xf32>
  return %sat, %und : tensor<f32>, tensor<f32>
}

// -----

// Different tensors: nothing to share, nothing fused.
// CHECK-LABEL: func.func @apart(
// CHECK-COUNT-2: iterator_types = ["reduction", "reduction"]} ins(%arg{{[01]}} : tensor<4x8xf32>)
func.func @apart(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>) -> (tensor<f32>, tensor<f32>) {
  %a = lpc.amax %x : tensor<4x8xf32>
  %b = lpc.amax %y : tensor<4x8xf32>
  return %a, %b : tensor<f32>, tensor<f32>
}

// -----

// The later reduction's scale comes from a call that may have side
// effects, between the two: it cannot move above the amax, so they stay
// apart.
// CHECK-LABEL: func.func @effects(
// CHECK: linalg.generic {{.*}} outs({{.*}} : tensor<i32>)
// CHECK: call @scale
// CHECK: linalg.generic {{.*}} outs({{.*}} : tensor<i32>, tensor<i32>)
func.func private @scale() -> tensor<f32>
func.func @effects(%x: tensor<4x8xf32>) -> (tensor<f32>, tensor<f32>, tensor<f32>) {
  %a = lpc.amax %x : tensor<4x8xf32>
  %s = func.call @scale() : () -> tensor<f32>
  %sat, %und = lpc.fp8_stats %x, %s {format = #lpc.precision<fp8_e4m3>} : tensor<4x8xf32>
  return %a, %sat, %und : tensor<f32>, tensor<f32>, tensor<f32>
}

// -----

// A side-effect-free scale computed between them moves up with the
// counts; a third reduction of the same tensor (a sum, over the same
// loops) joins them too.
// CHECK-LABEL: func.func @hoist(
// CHECK: %[[S:.*]] = linalg.generic {{.*}} iterator_types = []} outs
// CHECK: tensor.extract %[[S]]
// CHECK: linalg.generic {{.*}} iterator_types = ["reduction", "reduction"]} ins(%arg0 : tensor<4x8xf32>) outs({{.*}} : tensor<i32>, tensor<i32>, tensor<i32>, tensor<f32>)
// CHECK-NOT: iterator_types = ["reduction", "reduction"]
func.func @hoist(%x: tensor<4x8xf32>, %t: tensor<f32>) -> (tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>) {
  %a = lpc.amax %x : tensor<4x8xf32>
  %s = lpc.scale %t {factor = 2.0 : f64} : tensor<f32>
  %sat, %und = lpc.fp8_stats %x, %s {format = #lpc.precision<fp8_e4m3>} : tensor<4x8xf32>
  %sum = lpc.reduce_sum %x {axes = array<i64: 0, 1>} : tensor<4x8xf32> -> tensor<f32>
  return %a, %sat, %und, %sum : tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>
}

// -----

// With elementwise=true (the GPU pipeline), the quantization of the same
// tensor joins the amax and counts: one pass writes the FP8 copy (a
// write-once output, identity map) and the statistics. Without it, the
// quantization stays its own parallel loop.
// RUN: lpc-opt %s -split-input-file --lpc-to-linalg --cse --lpc-fuse-sibling-reductions=elementwise=true | FileCheck %s --check-prefix=ELEM
// ELEM-LABEL: func.func @quantize(
// ELEM: %[[R:.*]]:4 = linalg.generic {indexing_maps = [#[[ID:[^,]*]], #{{.*}}, #{{.*}}, #{{.*}}, #{{.*}}, #[[ID]]], iterator_types = ["reduction", "reduction"]} ins(%arg0, %arg1 : tensor<4x8xf32>, tensor<f32>) outs({{.*}} : tensor<i32>, tensor<i32>, tensor<i32>, tensor<4x8xf8E4M3FN>)
// ELEM: linalg.yield {{.*}} : i32, i32, i32, f8E4M3FN
// ELEM: return %[[R]]#3
// CHECK-LABEL: func.func @quantize(
// CHECK: iterator_types = ["parallel", "parallel"]} ins(%arg0, %arg1 : tensor<4x8xf32>, tensor<f32>) outs({{.*}} : tensor<4x8xf8E4M3FN>)
func.func @quantize(%x: tensor<4x8xf32>, %s: tensor<f32>) -> (tensor<4x8xf8E4M3FN>, tensor<f32>, tensor<f32>, tensor<f32>) {
  %a = lpc.amax %x : tensor<4x8xf32>
  %sat, %und = lpc.fp8_stats %x, %s {format = #lpc.precision<fp8_e4m3>} : tensor<4x8xf32>
  %q = lpc.quantize %x, %s : tensor<4x8xf32> to tensor<4x8xf8E4M3FN>
  return %q, %a, %sat, %und : tensor<4x8xf8E4M3FN>, tensor<f32>, tensor<f32>, tensor<f32>
}
