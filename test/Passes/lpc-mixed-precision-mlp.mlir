// The whole training step of the MLP example under each policy: FP32
// masters and optimizer state, one compute cast per parameter, no
// cast/cast-back chains, losses in fp32, no E5M2 x E5M2.
// RUN: lpc-opt %examples/mlp.mlir -lpc-autodiff -lpc-assign-precision=policy=bf16 -lpc-insert-casts -canonicalize | FileCheck %s --check-prefixes=COMMON,BF16
// RUN: lpc-opt %examples/mlp.mlir -lpc-autodiff -lpc-assign-precision=policy=fp16 -lpc-insert-casts -canonicalize | FileCheck %s --check-prefixes=COMMON,FP16
// RUN: lpc-opt %examples/mlp.mlir -lpc-autodiff -lpc-assign-precision=policy=fp8 -lpc-insert-casts -lpc-fp8-scaling -canonicalize | FileCheck %s --check-prefixes=COMMON,FP8
// RUN: lpc-opt %examples/mlp.mlir -lpc-autodiff -lpc-assign-precision=policy=no -lpc-insert-casts -canonicalize | FileCheck %s --check-prefix=NO

// COMMON-LABEL: func.func @mlp_train_step
// Masters and optimizer state stay f32.
// COMMON-SAME: tensor<784x1024xf32> {lpc.name = "fc1.weight", lpc.state = "param"}
// COMMON-SAME: tensor<784x1024xf32> {lpc.name = "fc1.weight", lpc.state = "exp_avg"}
// BF16-COUNT-1: lpc.cast %arg2 : tensor<1024x1024xf32> to tensor<1024x1024xbf16>
// FP16-COUNT-1: lpc.cast %arg2 : tensor<1024x1024xf32> to tensor<1024x1024xf16>
// The loss is computed in fp32.
// COMMON: lpc.softmax_cross_entropy %{{.*}}, %{{.*}} {{.*}}: tensor<256x10xf32>, tensor<256xi32>
// FP8-NOT: tensor<{{[0-9x]+}}xf8E5M2>, tensor<{{[0-9x]+}}xf8E5M2>
// FP8: lpc.scaled_matmul {{.*}}role = #lpc.role<dgrad>{{.*}} : tensor<256x1024xf8E5M2>, tensor<1024x1024xf8E4M3FN> -> tensor<256x1024xbf16>
// COMMON-COUNT-6: lpc.adamw {{.*}} : tensor<{{[0-9x]+}}xf32>
// No value is cast down and straight back up.
// COMMON-NOT: lpc.cast %{{.*}} : tensor<{{[0-9x]+}}xf32> to tensor<{{[0-9x]+}}xf32>

// NO-NOT: bf16
// NO-NOT: f16
// NO-NOT: lpc.cast
