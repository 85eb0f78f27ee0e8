// lpc-data-parallel{zero=1 ranks=N}: ZeRO stage 1. Each parameter's elements,
// padded with zeros to a multiple of N, split into N blocks; the bucket's
// gradients as one [N, sum K] tensor through one lpc.reduce_scatter (mean, in
// comm-precision); each optimizer op on this rank's blocks (lpc.shard of the
// parameter, its optimizer state as K-element arguments marked with the
// whole shape); the updated blocks back to every rank through one
// lpc.all_gather in fp32 at the end of the step.
// RUN: lpc-opt %s -lpc-autodiff -lpc-data-parallel="zero=1 ranks=2 comm-precision=bf16" | FileCheck %s
// Running it twice changes nothing more.
// RUN: lpc-opt %s -lpc-autodiff -lpc-data-parallel="zero=1 ranks=2 comm-precision=bf16" -lpc-data-parallel="zero=1 ranks=2" | FileCheck %s
// fp16 with dynamic loss scaling: each rank checks its blocks of the
// gradients, and a max over the ranks makes every rank skip alike; the skip
// sits between the updates and the gather.
// RUN: lpc-opt %s -lpc-autodiff=optimizer=sgd -lpc-data-parallel="zero=1 ranks=3" -lpc-mixed-precision=policy=fp16 | FileCheck %s --check-prefix=FP16
// Clipping: the norm over every rank's blocks; each rank's sum of squares,
// summed over the ranks, the others' part one more operand of the clip.
// RUN: lpc-opt %s -lpc-autodiff="optimizer=sgd clip-grad-norm=1" -lpc-data-parallel="zero=1 ranks=2" | FileCheck %s --check-prefix=CLIP
// Bad options.
// RUN: not lpc-opt %s -lpc-autodiff -lpc-data-parallel=zero=2 2>&1 | FileCheck %s --check-prefix=ZERO
// RUN: not lpc-opt %s -lpc-autodiff -lpc-data-parallel="zero=1 ranks=0" 2>&1 | FileCheck %s --check-prefix=RANKS

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

// CHECK-LABEL: func.func @lin_train_step
// CHECK-SAME: %[[W:[a-z0-9]+]]: tensor<4x3xf32> {lpc.name = "w", lpc.state = "param"}
// CHECK-SAME: %[[B:[a-z0-9]+]]: tensor<3xf32> {lpc.name = "b", lpc.state = "param"}
// CHECK-SAME: %[[MW:[a-z0-9]+]]: tensor<6xf32> {lpc.name = "w", lpc.shard_of = array<i64: 4, 3>, lpc.shard_ranks = 2 : i64, lpc.state = "exp_avg"}
// CHECK-SAME: %[[MB:[a-z0-9]+]]: tensor<2xf32> {lpc.name = "b", lpc.shard_of = array<i64: 3>, lpc.shard_ranks = 2 : i64, lpc.state = "exp_avg"}
// CHECK-SAME: -> (tensor<4x3xf32> {lpc.name = "w", lpc.state = "param"}, tensor<3xf32> {lpc.name = "b", lpc.state = "param"}, tensor<6xf32> {lpc.name = "w", lpc.shard_of = array<i64: 4, 3>, lpc.shard_ranks = 2 : i64, lpc.state = "exp_avg"}
// The backward defines the bias gradient first: its 3 elements padded to 4,
// as [2, 2]; the weight's 12 as [2, 6]; side by side.
// CHECK: %[[GB:.*]] = lpc.reduce_sum
// CHECK: %[[GW:.*]] = lpc.matmul {{.*}}role = #lpc.role<wgrad>
// CHECK: %[[Z1:.*]] = lpc.constant dense<0.000000e+00> : tensor<1xf32>
// CHECK: %[[PB:.*]] = lpc.concat %[[GB]], %[[Z1]] axis = 0
// CHECK: %[[BB:.*]] = lpc.reshape %[[PB]] {{.*}} : tensor<4xf32> -> tensor<2x2xf32>
// CHECK: %[[BW:.*]] = lpc.reshape {{.*}} : tensor<12xf32> -> tensor<2x6xf32>
// CHECK: %[[ALL:.*]] = lpc.concat %[[BB]], %[[BW]] axis = 1 {{.*}} -> tensor<2x8xf32>
// CHECK: %[[MINE:.*]] = lpc.reduce_scatter %[[ALL]] mean ranks(2) {comm_precision = #lpc.precision<bf16>, lpc.bucket = 0 : i64} : tensor<2x8xf32> -> tensor<1x8xf32>
// Each parameter's block of the mean gradient, right after the collective.
// CHECK: lpc.slice %[[MINE]] start = [0, 0] limit = [1, 2]
// CHECK: lpc.slice %[[MINE]] start = [0, 2] limit = [1, 8]
// CHECK: %[[SW:.*]] = lpc.shard {{.*}} ranks(2) : tensor<2x6xf32> -> tensor<1x6xf32>
// CHECK: %[[NW:[a-z_0-9]+]], %{{.*}}, %{{.*}} = lpc.adamw {{.*}} : tensor<6xf32>
// CHECK: lpc.shard {{.*}} ranks(2) : tensor<2x2xf32> -> tensor<1x2xf32>
// CHECK: %[[NB:[a-z_0-9]+]], %{{.*}}, %{{.*}} = lpc.adamw {{.*}} : tensor<2xf32>
// CHECK: %[[RB:.*]] = lpc.reshape %[[NB]] {{.*}} : tensor<2xf32> -> tensor<1x2xf32>
// CHECK: %[[RW:.*]] = lpc.reshape %[[NW]] {{.*}} : tensor<6xf32> -> tensor<1x6xf32>
// CHECK: %[[ROW:.*]] = lpc.concat %[[RB]], %[[RW]] axis = 1
// CHECK: %[[G:.*]] = lpc.all_gather %[[ROW]] ranks(2) : tensor<1x8xf32> -> tensor<2x8xf32>
// CHECK: lpc.slice %[[G]] start = [0, 0] limit = [2, 2]
// CHECK: %[[NEWB:.*]] = lpc.slice {{.*}} start = [0] limit = [3] step = [1] {{.*}} : tensor<4xf32> -> tensor<3xf32>
// CHECK: lpc.slice %[[G]] start = [0, 2] limit = [2, 8]
// CHECK: %[[NEWW:.*]] = lpc.reshape {{.*}} : tensor<12xf32> -> tensor<4x3xf32>
// CHECK: return %[[NEWW]], %[[NEWB]],
// CHECK-NOT: lpc.reduce_scatter

// FP16-LABEL: func.func @lin_train_step
// FP16: lpc.reduce_scatter {{.*}} mean ranks(3)
// FP16: lpc.sgd
// FP16: lpc.sgd
// FP16: %[[LOCAL:.*]] = lpc.all_finite
// FP16: %[[BAD:.*]] = lpc.where %[[LOCAL]], {{.*}} : tensor<i1>, tensor<f32>
// FP16: %[[ANY:.*]] = lpc.all_reduce %[[BAD]] max
// FP16: lpc.all_finite %[[ANY]] : tensor<f32>
// FP16: lpc.where
// FP16: lpc.all_gather {{.*}} ranks(3)
// FP16: return

// CLIP-LABEL: func.func @lin_train_step
// CLIP: %[[MINE:.*]] = lpc.reduce_scatter {{.*}} mean ranks(2)
// CLIP-NOT: lpc.clip_by_global_norm
// CLIP: %[[GB:.*]] = lpc.reshape {{.*}} -> tensor<2xf32>
// CLIP: %[[GW:.*]] = lpc.reshape {{.*}} -> tensor<6xf32>
// CLIP: lpc.mul %[[GW]], %[[GW]]
// CLIP: lpc.mul %[[GB]], %[[GB]]
// CLIP: %[[SUM:.*]] = lpc.add
// CLIP: %[[TOTAL:.*]] = lpc.all_reduce %[[SUM]] sum
// CLIP: %[[REST:.*]] = lpc.sub %[[TOTAL]], %[[SUM]]
// CLIP: %[[ROOT:.*]] = lpc.sqrt %[[REST]]
// CLIP: %[[OTHERS:.*]] = lpc.reshape %[[ROOT]] {{.*}} -> tensor<1xf32>
// CLIP: %[[C:.*]]:3, %[[NORM:.*]] = lpc.clip_by_global_norm %[[GW]], %[[GB]], %[[OTHERS]] {max_norm = 1.000000e+00 : f64} : tensor<6xf32>, tensor<2xf32>, tensor<1xf32>
// CLIP: lpc.sgd {{.*}}, %[[C]]#0, {{.*}} : tensor<6xf32>
// CLIP: lpc.sgd {{.*}}, %[[C]]#1, {{.*}} : tensor<2xf32>
// CLIP: lpc.all_gather
// CLIP: return {{.*}}, %[[NORM]] :
// CLIP-NOT: lpc.clip_by_global_norm
// ZERO: error: lpc-data-parallel: zero must be 0 or 1 (ZeRO stage), got 2
// RANKS: error: lpc-data-parallel: ranks must be >= 1, got 0
