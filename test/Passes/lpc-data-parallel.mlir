// lpc-data-parallel: every gradient that reaches the optimizer, and the loss
// metric, is averaged over the ranks with lpc.all_reduce (mean): gradients in
// buckets in the chosen communication precision, the loss in fp32.
// One collective per gradient (bucket-mb=0):
// RUN: lpc-opt %s -split-input-file -lpc-autodiff=optimizer=sgd -lpc-data-parallel=bucket-mb=0 | FileCheck %s --check-prefix=SGD
// RUN: lpc-opt %s -split-input-file -lpc-autodiff="optimizer=sgd clip-grad-norm=1" -lpc-data-parallel=bucket-mb=0 | FileCheck %s --check-prefix=CLIP
// RUN: lpc-opt %s -split-input-file -lpc-autodiff -lpc-data-parallel=bucket-mb=0 | FileCheck %s --check-prefix=ADAMW
// Running it twice changes nothing more.
// RUN: lpc-opt %s -split-input-file -lpc-autodiff=optimizer=sgd -lpc-data-parallel=bucket-mb=0 -lpc-data-parallel | FileCheck %s --check-prefix=SGD
// Functions that are not train steps (the model, optimizer=none's gradients)
// are left alone.
// RUN: lpc-opt %s -split-input-file -lpc-autodiff=optimizer=none -lpc-data-parallel | FileCheck %s --check-prefix=NONE
// Buckets (the default 25 MiB holds both gradients) in bf16, before the clip;
// running it twice changes nothing more.
// RUN: lpc-opt %s -lpc-autodiff="optimizer=sgd clip-grad-norm=1" -lpc-data-parallel=comm-precision=bf16 | FileCheck %s --check-prefix=BUCKET
// RUN: lpc-opt %s -lpc-autodiff="optimizer=sgd clip-grad-norm=1" -lpc-data-parallel=comm-precision=bf16 -lpc-data-parallel | FileCheck %s --check-prefix=BUCKET
// The MLP's 6 gradients (the backward defines fc3's first) in buckets of
// 1 MiB: fc3's bias and weight and fc2's bias (45 KB) fill one; fc2's 4 MiB
// weight is one of its own, so is fc1's bias (the next would overflow it),
// then fc1's weight; `fp8` is E4M3.
// RUN: lpc-opt %examples/mlp.mlir -lpc-autodiff -lpc-data-parallel="bucket-mb=1 comm-precision=fp8" | FileCheck %s --check-prefix=MB1
// The mixed-precision passes keep the reductions and the bucket copies in f32
// (the gradients arrive through casts under bf16); under fp16 the reduced
// gradients are unscaled and checked after the reduction, so every rank
// skips alike.
// RUN: lpc-opt %examples/mlp.mlir -lpc-autodiff -lpc-data-parallel=bucket-mb=0 -lpc-mixed-precision=policy=bf16 | FileCheck %s --check-prefix=BF16
// RUN: lpc-opt %examples/mlp.mlir -lpc-autodiff -lpc-data-parallel -lpc-mixed-precision=policy=bf16 | FileCheck %s --check-prefix=BF16-BUCKET
// RUN: lpc-opt %examples/mlp.mlir -lpc-autodiff -lpc-data-parallel=bucket-mb=0 -lpc-mixed-precision=policy=fp16 | FileCheck %s --check-prefix=FP16
// The precision report's communication section: each collective's payload
// on the wire against fp32 (FP8 adds the 4-byte amax of its scale); the
// amaxes of the FP8 activations and output gradients (4) travel together
// (the FP8 weights' (2) need no collective: every rank holds the same
// weights).
// RUN: lpc-opt %examples/mlp.mlir -lpc-autodiff -lpc-data-parallel="bucket-mb=1 comm-precision=fp8" -lpc-mixed-precision="policy=fp8 reduce-amax=true" -lpc-precision-report -o /dev/null 2>&1 | FileCheck %s --check-prefix=REPORT
// RUN: lpc-opt %examples/mlp.mlir -lpc-autodiff -lpc-data-parallel="bucket-mb=1 comm-precision=fp8" -lpc-precision-report=json=true -o /dev/null 2>&1 | FileCheck %s --check-prefix=JSON
// REPORT-LABEL: precision report @mlp_train_step
// REPORT: communication per step (payloads; over N ranks each rank sends 2(N-1)/N of an all-reduce's, (N-1)/N of the others')
// REPORT-NEXT: collective location elements  on wire bytes if fp32
// REPORT-NEXT: mean loss 1  fp32 4 B 4 B
// REPORT-NEXT: gradients, bucket 0 (3 tensors)  backward(fc3),backward(fc2) 11274  fp8_e4m3 11.01 KiB 44.04 KiB
// REPORT-NEXT: gradients, bucket 1 (1 tensor) backward(fc2) 1048576  fp8_e4m3 1.00 MiB 4.00 MiB
// REPORT-NEXT: gradients, bucket 2 (1 tensor) backward(fc1) 1024  fp8_e4m3 1.00 KiB 4.00 KiB
// REPORT-NEXT: gradients, bucket 3 (1 tensor) backward(fc1) 802816  fp8_e4m3 784.00 KiB 3.06 MiB
// REPORT-NEXT: max image 4  fp32 16 B 16 B
// REPORT-NEXT: total 1.78 MiB 7.11 MiB
// JSON: "communication": {
// JSON: "comm_precision": "fp32",
// JSON-NEXT: "elements": 1,
// JSON: "all_fp32": 45096,
// JSON-NEXT: "chosen": 11278
// JSON: "what": "gradients, bucket 0 (3 tensors)"
// JSON: "total": {
// JSON-NEXT: "all_fp32": 7454764,
// JSON-NEXT: "chosen": 1863710

// Bad options.
// RUN: not lpc-opt %s -lpc-autodiff -lpc-data-parallel=comm-precision=int8 2>&1 | FileCheck %s --check-prefix=BADWIRE
// RUN: not lpc-opt %s -lpc-autodiff -lpc-data-parallel=bucket-mb=-1 2>&1 | FileCheck %s --check-prefix=BADMB
// BADWIRE: error: lpc-data-parallel: unknown comm-precision 'int8' (expected fp32, bf16, fp16, fp8_e4m3, fp8_e5m2 or fp8)
// BADMB: error: lpc-data-parallel: bucket-mb must be >= 0, got -1

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
// SGD-NEXT: %[[RW:.*]] = lpc.all_reduce %[[GW]] mean {lpc.bucket = 1 : i64} : tensor<4x3xf32> -> tensor<4x3xf32>
// SGD-NOT: lpc.all_reduce %[[GW]]
// SGD: lpc.sgd %arg0, %[[RW]],
// SGD: lpc.sgd %arg1, %[[RB:[^,]*]],
// SGD: return {{.*}}, %[[LR]] : {{.*}}, tensor<f32>
// SGD-NOT: lpc.all_reduce

// Clipping sees the averaged gradients; the optimizer takes the clipped ones.
// CLIP-LABEL: func.func @lin_train_step(
// CLIP-DAG: %[[RW:.*]] = lpc.all_reduce %{{.*}} mean {lpc.bucket = 1 : i64} : tensor<4x3xf32> -> tensor<4x3xf32>
// CLIP-DAG: %[[RB:.*]] = lpc.all_reduce %{{.*}} mean {lpc.bucket = 0 : i64} : tensor<3xf32> -> tensor<3xf32>
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

// BUCKET-LABEL: func.func @lin_train_step(
// BUCKET: %[[L:.*]] = lpc.mse_loss
// BUCKET-NEXT: %[[LR:.*]] = lpc.all_reduce %[[L]] mean : tensor<f32> -> tensor<f32>
// BUCKET: %[[GB:.*]] = lpc.reduce_sum
// BUCKET: %[[GW:.*]] = lpc.matmul {{.*}}role = #lpc.role<wgrad>
// BUCKET-NEXT: %[[FW:.*]] = lpc.reshape %[[GW]] {lpc.precision = #lpc.precision<fp32>} : tensor<4x3xf32> -> tensor<12xf32>
// BUCKET-NEXT: %[[ALL:.*]] = lpc.concat %[[GB]], %[[FW]] axis = 0 {lpc.precision = #lpc.precision<fp32>} : tensor<3xf32>, tensor<12xf32> -> tensor<15xf32>
// BUCKET-NEXT: %[[M:.*]] = lpc.all_reduce %[[ALL]] mean {comm_precision = #lpc.precision<bf16>, lpc.bucket = 0 : i64} : tensor<15xf32> -> tensor<15xf32>
// BUCKET-NEXT: %[[RB:.*]] = lpc.slice %[[M]] start = [0] limit = [3] step = [1] {lpc.precision = #lpc.precision<fp32>}
// BUCKET-NEXT: %[[SW:.*]] = lpc.slice %[[M]] start = [3] limit = [15] step = [1] {lpc.precision = #lpc.precision<fp32>}
// BUCKET-NEXT: %[[RW:.*]] = lpc.reshape %[[SW]] {lpc.precision = #lpc.precision<fp32>} : tensor<12xf32> -> tensor<4x3xf32>
// BUCKET-NEXT: lpc.clip_by_global_norm %[[RW]], %[[RB]]
// BUCKET-NOT: lpc.all_reduce
// BUCKET: return {{.*}}, %[[LR]], %{{.*}} : {{.*}}, tensor<f32>, tensor<f32>

// MB1-LABEL: func.func @mlp_train_step(
// MB1: lpc.all_reduce %{{.*}} mean : tensor<f32>
// MB1: lpc.concat {{.*}} : tensor<10xf32>, tensor<10240xf32>, tensor<1024xf32> -> tensor<11274xf32>
// MB1-NEXT: lpc.all_reduce %{{.*}} mean {comm_precision = #lpc.precision<fp8_e4m3>, lpc.bucket = {{[0-3]}} : i64} : tensor<11274xf32>
// MB1: lpc.all_reduce %{{.*}} mean {comm_precision = #lpc.precision<fp8_e4m3>, lpc.bucket = {{[0-3]}} : i64} : tensor<1024x1024xf32>
// MB1: lpc.all_reduce %{{.*}} mean {comm_precision = #lpc.precision<fp8_e4m3>, lpc.bucket = {{[0-3]}} : i64} : tensor<1024xf32>
// MB1: lpc.all_reduce %{{.*}} mean {comm_precision = #lpc.precision<fp8_e4m3>, lpc.bucket = {{[0-3]}} : i64} : tensor<784x1024xf32>
// MB1-NOT: lpc.all_reduce
// MB1-NOT: lpc.concat

// BF16-BUCKET-LABEL: func.func @mlp_train_step(
// BF16-BUCKET: lpc.all_reduce %{{.*}} mean {{.*}} : tensor<f32>
// BF16-BUCKET: lpc.concat {{.*}}lpc.assigned = #lpc.precision<fp32>{{.*}} -> tensor<1863690xf32>
// BF16-BUCKET-NEXT: lpc.all_reduce %{{.*}} mean {lpc.assigned = #lpc.precision<fp32>{{.*}}} : tensor<1863690xf32> -> tensor<1863690xf32>
// BF16-BUCKET-COUNT-6: lpc.slice {{.*}}lpc.assigned = #lpc.precision<fp32>
// BF16-BUCKET-NOT: lpc.all_reduce
