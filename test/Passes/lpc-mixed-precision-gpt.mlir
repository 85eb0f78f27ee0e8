// The GPT example under each low-precision policy: softmax, layernorm and
// the loss never run below fp32; masters stay fp32; the attention-core
// GEMMs (activations x activations) are never FP8.
// RUN: lpc-opt %examples/gpt.mlir -lpc-autodiff -lpc-mixed-precision=policy=bf16 | FileCheck %s --check-prefixes=COMMON
// RUN: lpc-opt %examples/gpt.mlir -lpc-autodiff -lpc-mixed-precision=policy=fp16 | FileCheck %s --check-prefixes=COMMON,FP16
// RUN: lpc-opt %examples/gpt.mlir -lpc-autodiff -lpc-mixed-precision="policy=fp8 amax-history-len=16" | FileCheck %s --check-prefixes=COMMON,FP8
// RUN: lpc-opt %examples/gpt.mlir -lpc-autodiff -lpc-mixed-precision="policy=fp8 amax-history-len=16" | FileCheck %s --check-prefix=FP8Q

// COMMON-LABEL: func.func @gpt_train_step(
// COMMON-SAME: tensor<256x128xf32> {lpc.name = "wte", lpc.state = "param"}
// COMMON-NOT: lpc.softmax {{.*}}: tensor<{{[0-9x]+}}x{{b?}}f16>
// COMMON-NOT: lpc.layernorm {{.*}}: tensor<{{[0-9x]+}}x{{b?}}f16>
// COMMON-NOT: lpc.softmax_cross_entropy {{.*}}: tensor<{{[0-9x]+}}x{{b?}}f16>
// COMMON-NOT: lpc.softmax_grad {{.*}}: tensor<{{[0-9x]+}}x{{b?}}f16>
// COMMON-NOT: lpc.layernorm_grad {{.*}}: tensor<{{[0-9x]+}}x{{b?}}f16>
// FP8-NOT: lpc.scaled_matmul {{.*}} : tensor<16x4x64x32xf8
// FP16: lpc.loss_scale_update
// COMMON: return

// The fp8 run puts the linear layers in FP8 and keeps q.k^T in bf16.
// FP8Q-LABEL: func.func @gpt_train_step(
// FP8Q: lpc.scaled_matmul {{.*}}role = #lpc.role<fprop>{{.*}} : tensor<16x64x128xf8E4M3FN>, tensor<128x384xf8E4M3FN> -> tensor<16x64x384xbf16>
// FP8Q-NOT: lpc.name = "{{[^"]*}}#1"
// FP8Q: lpc.matmul {{.*}}lpc.reason = "fp8 policy: fprop GEMM of activations (not a linear layer) stays bf16"{{.*}} : tensor<16x4x64x32xbf16>, tensor<16x4x64x32xbf16> -> tensor<16x4x64x64xbf16>
