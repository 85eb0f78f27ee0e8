// lpc-native-wire-collectives, the first pass of lpc-gpu-codegen: an f32
// collective with a bf16 or fp16 comm_precision becomes the same collective
// of a tensor of that type between two casts (an NCCL bf16 / f16 collective
// in the CUDA artifact); fp32 ones stay; FP8 wires are an error.
// RUN: lpc-opt %s --split-input-file --lpc-native-wire-collectives --verify-diagnostics | FileCheck %s
// The CPU back end takes f32 collectives only, and says so by name.
// RUN: not lpc-jit %S/Inputs/native_wire_all_reduce.mlir --function=narrow 2>&1 | FileCheck %s --check-prefix=CPU
// CPU: lpc-jit: @narrow: 'lpc.all_reduce' of a tensor<8xbf16> at {{.*}}native_wire_all_reduce.mlir:5:8: the CPU's collectives take f32 tensors (a narrow wire is their comm_precision)

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
  // expected-error @+1 {{comm_precision fp8_e4m3 has no GPU form yet (the CPU's shared FP8 scale and f32 rank-order sums are not NCCL steps): use fp32, bf16 or fp16}}
  %0 = lpc.all_reduce %g mean {comm_precision = #lpc.precision<fp8_e4m3>} : tensor<1000xf32> -> tensor<1000xf32>
  return %0 : tensor<1000xf32>
}
