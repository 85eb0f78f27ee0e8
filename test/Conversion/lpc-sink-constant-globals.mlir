// RUN: lpc-opt %s --lpc-sink-constant-globals | FileCheck %s

// A launch that reads a constant global through a view gets its own
// get_global and view (which outlining then copies into the kernel's
// module); a global that is not constant stays a host operand, and the
// host's own use of the table stays on the host.
memref.global "private" constant @table : memref<8xf32> = dense<[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]>
memref.global "private" @state : memref<2xf32> = dense<0.0>

// CHECK-LABEL: func.func @sink(
// CHECK: %[[T:.*]] = memref.get_global @table : memref<8xf32>
// CHECK: %[[S:.*]] = memref.get_global @state : memref<2xf32>
// CHECK: gpu.launch
// CHECK-NEXT: %[[IT:.*]] = memref.get_global @table : memref<8xf32>
// CHECK-NEXT: %[[IV:.*]] = memref.expand_shape %[[IT]] {{\[}}[0, 1]] output_shape [2, 4] : memref<8xf32> into memref<2x4xf32>
// CHECK-NEXT: %[[IS:.*]] = memref.subview %[[IT]][2] [4] [1]
// CHECK: memref.load %[[IV]]
// CHECK: memref.load %[[IS]]
// CHECK: memref.load %[[S]]
// CHECK: gpu.terminator
// CHECK: memref.load %[[T]]
func.func @sink(%out: memref<2x4xf32>) -> f32 {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %t = memref.get_global @table : memref<8xf32>
  %v = memref.expand_shape %t [[0, 1]] output_shape [2, 4] : memref<8xf32> into memref<2x4xf32>
  %sv = memref.subview %t[2] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1], offset: 2>>
  %g = memref.get_global @state : memref<2xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c2, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %c0 = arith.constant 0 : index
    %x = memref.load %v[%bx, %c0] : memref<2x4xf32>
    %x2 = memref.load %sv[%bx] : memref<4xf32, strided<[1], offset: 2>>
    %y = memref.load %g[%bx] : memref<2xf32>
    %s0 = arith.addf %x, %y : f32
    %s = arith.addf %s0, %x2 : f32
    memref.store %s, %out[%bx, %c0] : memref<2x4xf32>
    gpu.terminator
  }
  %w = memref.load %t[%c1] : memref<8xf32>
  return %w : f32
}
