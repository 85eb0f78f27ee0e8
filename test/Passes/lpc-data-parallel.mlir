// lpc-data-parallel: every gradient that reaches the optimizer, and the loss
// metric, is averaged over the ranks with lpc.all_reduce (mean, fp32).
// RUN: lpc-opt %s -split-input-file -lpc-autodiff=optimizer=sgd -lpc-data-parallel | FileCheck %s --check-prefix=SGD
// RUN: lpc-opt %s -split-input-file -lpc-autodiff="optimizer=sgd clip-grad-norm=1" -lpc-data-parallel | FileCheck %s --check-prefix=CLIP
// RUN: lpc-opt %s -split-input-file -lpc-autodiff -lpc-data-parallel | FileCheck %s --check-prefix=ADAMW
// Running it twice changes nothing more.
// RUN: lpc-opt %s -split-input-file -lpc-autodiff=optimizer=sgd -lpc-data-parallel -lpc-data-parallel | FileCheck %s --check-prefix=SGD
// Functions that are not train steps (the model, optimizer=none's gradients)
// are left alone.
// RUN: lpc-opt %s -split-input-file -lpc-autodiff=optimizer=none -lpc-data-parallel | FileCheck %s --check-prefix=NONE
// The mixed-precision passes keep the reductions in f32 (the gradients
// arrive through casts under bf16); under fp16 the reduced gradients are
// unscaled and checked after the reduction, so every rank skips alike.
// RUN: lpc-opt %examples/mlp.mlir -lpc-autodiff -lpc-data-parallel -lpc-mixed-precision=policy=bf16 | FileCheck %s --check-prefix=BF16
// RUN: lpc-opt %examples/mlp.mlir -lpc-autodiff -lpc-data-parallel -lpc-mixed-precision=policy=fp16 | FileCheck %s --check-prefix=FP16

func.func @lin() -> tensor<f32> {
  %x = lpc.input "x" features : tensor<2x4xf32>
  %t = lpc.input "t" targets : tensor<2x3xf32>
  %w = lpc.param "w" ones : tensor<4x3xf32>
  %b = lpc.param "b" zeros : tensor<3xf32>
  %y = lpc.matmul %x, %w : tensor<2x4xf32>, tensor<4x3xf32> -> tensor<2x3xf32>
  %z = lpc.bias_add %y, %b : tensor<2x3xf32>, tensor<3xf32>
  %l = lpc.mse_loss %z, %t : tensor<2x3xf32>
  return %l : tensor<f32>
}

// The model itself: no collective.
// SGD-LABEL: func.func @lin(
// SGD-NOT: lpc.all_reduce
// SGD-LABEL: func.func @lin_train_step(
// SGD: %[[L:.*]] = lpc.mse_loss
// SGD-NEXT: %[[LR:.*]] = lpc.all_reduce %[[L]] mean : tensor<f32> -> tensor<f32>
// SGD: %[[GW:.*]] = lpc.matmul {{.*}}role = #lpc.role<wgrad>
// SGD-NEXT: %[[RW:.*]] = lpc.all_reduce %[[GW]] mean : tensor<4x3xf32> -> tensor<4x3xf32>
// SGD-NOT: lpc.all_reduce %[[GW]]
// SGD: lpc.sgd %arg0, %[[RW]],
// SGD: lpc.sgd %arg1, %[[RB:[^,]*]],
// SGD: return {{.*}}, %[[LR]] : {{.*}}, tensor<f32>
// SGD-NOT: lpc.all_reduce

// Clipping sees the averaged gradients; the optimizer takes the clipped ones.
// CLIP-LABEL: func.func @lin_train_step(
// CLIP-DAG: %[[RW:.*]] = lpc.all_reduce %{{.*}} mean : tensor<4x3xf32> -> tensor<4x3xf32>
// CLIP-DAG: %[[RB:.*]] = lpc.all_reduce %{{.*}} mean : tensor<3xf32> -> tensor<3xf32>
// CLIP: %[[C:.*]]:2, %{{.*}} = lpc.clip_by_global_norm %[[RW]], %[[RB]]
// CLIP: lpc.sgd %arg0, %[[C]]#0,
// CLIP: lpc.sgd %arg1, %[[C]]#1,
// CLIP-NOT: lpc.all_reduce

// ADAMW-LABEL: func.func @lin_train_step(
// ADAMW-COUNT-3: lpc.all_reduce
// ADAMW-NOT: lpc.all_reduce
// ADAMW: lpc.adamw %arg0, %{{.*}}, %arg2, %arg4
// ADAMW: lpc.adamw %arg1, %{{.*}}, %arg3, %arg5

// NONE-NOT: lpc.all_reduce

// BF16-LABEL: func.func @mlp_train_step(
// BF16-COUNT-7: lpc.all_reduce %{{.*}} mean {lpc.assigned = #lpc.precision<fp32>{{.*}}} : tensor<{{.*}}f32> -> tensor<{{.*}}f32>
// BF16-NOT: lpc.all_reduce

// FP16-LABEL: func.func @mlp_train_step(
// FP16: %[[R:.*]] = lpc.all_reduce %{{.*}} mean {{.*}} : tensor<784x1024xf32> -> tensor<784x1024xf32>
// FP16: lpc.unscale %[[R]]
