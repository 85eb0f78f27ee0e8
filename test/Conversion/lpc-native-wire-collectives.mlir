// lpc-native-wire-collectives, the first pass of lpc-gpu-codegen: an f32
// collective with a bf16 or fp16 comm_precision becomes the same collective
// of a tensor of that type between two casts (an NCCL bf16 / f16 collective
// in the CUDA artifact); fp32 ones stay. An FP8 one becomes the CPU
// runtime's algorithm in ops: shared power-of-two scale, quantize, an
// all_to_all of FP8 blocks, f32 sums in rank order, an FP8 all_gather.
// RUN: lpc-opt %s --split-input-file --lpc-native-wire-collectives --verify-diagnostics | FileCheck %s
// RUN: lpc-opt %S/Inputs/fp8_wire.mlir --lpc-native-wire-collectives=ranks=3 | FileCheck %s --check-prefix=FP8
// RUN: lpc-opt %S/Inputs/fp8_wire.mlir --lpc-native-wire-collectives=ranks=1 | FileCheck %s --check-prefix=ONE
// The CPU back end's reductions take f32 only, and it says so by name.
// RUN: not lpc-jit %S/Inputs/native_wire_all_reduce.mlir --function=narrow 2>&1 | FileCheck %s --check-prefix=CPU
// CPU: lpc-jit: @narrow: 'lpc.all_reduce' of a tensor<8xbf16> at {{.*}}native_wire_all_reduce.mlir:5:8: the CPU's reductions take f32 tensors (a narrow wire is their comm_precision)
// lpc.wire_scale compiled (integer code, the same on the GPU) against the
// reference's log2 in double, at the edges: 0, the format's max, the next
// float either side, powers of two, subnormals (clamped to 2^126), the
// largest float, infinities and NaN.
// RUN: lpc-jit %S/Inputs/wire_scale.mlir --function=scales | FileCheck %s --check-prefix=SCALE
// SCALE: all results match the reference evaluator

// An all-reduce of 3 x 7 = 21 values over 3 ranks: 7 per rank, no padding.
// FP8-LABEL: func.func @fp8(
// FP8: %[[F:.*]] = lpc.reshape %arg0 : tensor<3x7xf32> -> tensor<21xf32>
// FP8-NEXT: %[[A:.*]] = lpc.amax %[[F]] : tensor<21xf32>
// FP8-NEXT: %[[INF:.*]] = lpc.constant dense<0x7F800000> : tensor<f32>
// FP8-NEXT: %[[OK:.*]] = lpc.compare lt, %[[A]], %[[INF]]
// FP8-NEXT: %[[A2:.*]] = lpc.where %[[OK]], %[[A]], %[[INF]]
// FP8-NEXT: %[[G:.*]] = lpc.all_reduce %[[A2]] max : tensor<f32> -> tensor<f32>
// FP8-NEXT: %[[S:.*]] = lpc.wire_scale %[[G]] {format = #lpc.precision<fp8_e4m3>}
// FP8: %[[INV:.*]] = lpc.div %{{.*}}, %[[S]] : tensor<f32>
// FP8-NEXT: %[[Q:.*]] = lpc.quantize %[[F]], %[[S]] : tensor<21xf32> to tensor<21xf8E4M3FN>
// FP8-NEXT: %[[Q2:.*]] = lpc.reshape %[[Q]] : tensor<21xf8E4M3FN> -> tensor<3x7xf8E4M3FN>
// FP8: %[[T:.*]] = lpc.all_to_all %[[Q2]] ranks(3) : tensor<3x7xf8E4M3FN>
// FP8-NEXT: %[[W:.*]] = lpc.cast %[[T]] : tensor<3x7xf8E4M3FN> to tensor<3x7xf32>
// FP8-NEXT: %[[SUM:.*]] = lpc.reduce_sum %[[W]] {axes = array<i64: 0>} : tensor<3x7xf32> -> tensor<7xf32>
// FP8-NEXT: %[[N:.*]] = lpc.constant dense<3.000000e+00> : tensor<7xf32>
// FP8-NEXT: %[[MEAN:.*]] = lpc.div %[[SUM]], %[[N]] : tensor<7xf32>
// FP8-NEXT: %[[QM:.*]] = lpc.quantize %[[MEAN]], %{{.*}} : tensor<7xf32> to tensor<7xf8E4M3FN>
// FP8-NEXT: %[[ALL:.*]] = lpc.all_gather %[[QM]] ranks(3) {comm_precision = #lpc.precision<fp8_e4m3>} : tensor<7xf8E4M3FN> -> tensor<21xf8E4M3FN>
// FP8-NEXT: %[[Y:.*]] = lpc.dequantize %[[ALL]], %[[INV]] : tensor<21xf8E4M3FN> to tensor<21xf32>
// FP8-NEXT: %[[R:.*]] = lpc.reshape %[[Y]] : tensor<21xf32> -> tensor<3x7xf32>
// 10 values over 3 ranks: padded with zeros to 12 (E5M2).
// FP8: lpc.wire_scale %{{.*}} {format = #lpc.precision<fp8_e5m2>}
// FP8: lpc.concat %{{.*}}, %{{.*}} axis = 0 : tensor<10xf32>, tensor<2xf32> -> tensor<12xf32>
// FP8: lpc.all_to_all %{{.*}} ranks(3) : tensor<3x4xf8E5M2>
// FP8: lpc.all_gather %{{.*}} ranks(3) {comm_precision = #lpc.precision<fp8_e5m2>} : tensor<4xf8E5M2> -> tensor<12xf8E5M2>
// FP8: %[[Y2:.*]] = lpc.dequantize %{{.*}}, %{{.*}} : tensor<12xf8E5M2> to tensor<12xf32>
// FP8-NEXT: lpc.slice %[[Y2]] start = [0] limit = [10] step = [1] : tensor<12xf32> -> tensor<10xf32>
// ZeRO-1's reduce-scatter (its own ranks(2)): this rank's block of the
// mean, unscaled by a multiply, not rounded again.
// FP8: lpc.all_to_all %{{.*}} ranks(2) : tensor<2x15xf8E4M3FN>
// FP8: %[[RS:.*]] = lpc.div %{{.*}}, %{{.*}} : tensor<15xf32>
// FP8-NEXT: %[[B:.*]] = lpc.broadcast %{{.*}} dims = [] : tensor<f32> -> tensor<15xf32>
// FP8-NEXT: %[[U:.*]] = lpc.mul %[[RS]], %[[B]] : tensor<15xf32>
// FP8-NEXT: lpc.reshape %[[U]] : tensor<15xf32> -> tensor<5x3xf32>
// An all-gather: scaled, gathered as FP8, unscaled.
// FP8: %[[QG:.*]] = lpc.quantize %arg3, %{{.*}} : tensor<4x3xf32> to tensor<4x3xf8E4M3FN>
// FP8-NEXT: %[[GG:.*]] = lpc.all_gather %[[QG]] ranks(2) {comm_precision = #lpc.precision<fp8_e4m3>} : tensor<4x3xf8E4M3FN> -> tensor<8x3xf8E4M3FN>
// FP8-NEXT: lpc.dequantize %[[GG]], %{{.*}} : tensor<8x3xf8E4M3FN> to tensor<8x3xf32>
// FP8-NOT: comm_precision = #lpc.precision<fp8_e4m3>} : tensor<{{.*}}xf32>

// One rank: nothing travels and nothing is rounded; the all-reduce is a
// copy built for one rank (so the runtime refuses more), the sharding
// collectives keep their ranks(2) in FP8.
// ONE-LABEL: func.func @fp8(
// ONE-NEXT: %[[F:.*]] = lpc.reshape %arg0 : tensor<3x7xf32> -> tensor<21xf32>
// ONE-NEXT: %[[T:.*]] = lpc.all_to_all %[[F]] ranks(1) : tensor<21xf32>
// ONE-NEXT: lpc.reshape %[[T]] : tensor<21xf32> -> tensor<3x7xf32>
// ONE-NOT: lpc.quantize %arg1
// ONE: lpc.all_to_all %{{.*}} ranks(2) : tensor<2x15xf8E4M3FN>

// CHECK-LABEL: func.func @gradients
// CHECK-SAME: (%[[G:.*]]: tensor<1000xf32>, %[[L:.*]]: tensor<f32>, %[[P:.*]]: tensor<250xf32>)
func.func @gradients(%g: tensor<1000xf32>, %loss: tensor<f32>, %p: tensor<250xf32>)
    -> (tensor<1000xf32>, tensor<f32>, tensor<250xf32>, tensor<1000xf32>) {
  // CHECK-NEXT: %[[C:.*]] = lpc.cast %[[G]] : tensor<1000xf32> to tensor<1000xbf16>
  // CHECK-NEXT: %[[R:.*]] = lpc.all_reduce %[[C]] mean {comm_precision = #lpc.precision<bf16>} : tensor<1000xbf16> -> tensor<1000xbf16>
  // CHECK-NEXT: %[[M:.*]] = lpc.cast %[[R]] : tensor<1000xbf16> to tensor<1000xf32>
  %0 = lpc.all_reduce %g mean {comm_precision = #lpc.precision<bf16>} : tensor<1000xf32> -> tensor<1000xf32>
  // The loss stays f32.
  // CHECK-NEXT: %[[LM:.*]] = lpc.all_reduce %[[L]] mean : tensor<f32> -> tensor<f32>
  %1 = lpc.all_reduce %loss mean : tensor<f32> -> tensor<f32>
  // ZeRO-1's halves in fp16.
  // CHECK-NEXT: %[[C2:.*]] = lpc.cast %[[G]] : tensor<1000xf32> to tensor<1000xf16>
  // CHECK-NEXT: %[[S:.*]] = lpc.reduce_scatter %[[C2]] mean ranks(4) {comm_precision = #lpc.precision<fp16>} : tensor<1000xf16> -> tensor<250xf16>
  // CHECK-NEXT: %[[SM:.*]] = lpc.cast %[[S]] : tensor<250xf16> to tensor<250xf32>
  %2 = lpc.reduce_scatter %g mean ranks(4) {comm_precision = #lpc.precision<fp16>} : tensor<1000xf32> -> tensor<250xf32>
  // CHECK-NEXT: %[[C3:.*]] = lpc.cast %[[P]] : tensor<250xf32> to tensor<250xf16>
  // CHECK-NEXT: %[[A:.*]] = lpc.all_gather %[[C3]] ranks(4) {comm_precision = #lpc.precision<fp16>} : tensor<250xf16> -> tensor<1000xf16>
  // CHECK-NEXT: %[[AM:.*]] = lpc.cast %[[A]] : tensor<1000xf16> to tensor<1000xf32>
  %3 = lpc.all_gather %p ranks(4) {comm_precision = #lpc.precision<fp16>} : tensor<250xf32> -> tensor<1000xf32>
  // CHECK-NEXT: return %[[M]], %[[LM]], %[[SM]], %[[AM]]
  return %0, %1, %2, %3 : tensor<1000xf32>, tensor<f32>, tensor<250xf32>, tensor<1000xf32>
}

// -----

func.func @fp8(%g: tensor<1000xf32>) -> tensor<1000xf32> {
  // expected-error @+1 {{comm_precision fp8_e4m3 on the GPU is built for a rank count (each rank adds its block of the FP8 values): run lpc-native-wire-collectives with ranks=N before lpc-gpu-codegen (lpc-run passes its own)}}
  %0 = lpc.all_reduce %g mean {comm_precision = #lpc.precision<fp8_e4m3>} : tensor<1000xf32> -> tensor<1000xf32>
  return %0 : tensor<1000xf32>
}
