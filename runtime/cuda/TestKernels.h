//===- TestKernels.h - hand-written PTX for the driver checks ---*- C++ -*-===//
//
// Kernels that exercise module loading, launches and graphs without nvcc or
// the compiler: y[i] = a * x[i] + y[i] over n floats (one thread per
// element). The normal test run assembles kTestPtx with `ptxas -arch=sm_90`
// (ctest runtime/cuda-ptx), so a typo here fails on machines without a GPU
// too. kBrokenPtx must make the driver's JIT fail with CUDA_ERROR_INVALID_PTX
// and a log naming the line.
//
//===----------------------------------------------------------------------===//

#ifndef LPC_RUNTIME_CUDA_TESTKERNELS_H
#define LPC_RUNTIME_CUDA_TESTKERNELS_H

#include "lpc/Runtime/Json.h"

#include <string>

namespace lpc {
namespace rt {
namespace cuda {

// PTX ISA 7.0 / sm_80: old enough for every driver lpc supports (12.0+),
// new enough for ptxas 13, which no longer targets pre-Turing GPUs.
inline constexpr const char kTestPtx[] = R"ptx(//
// lpc runtime/cuda test kernel: y = a * x + y
//
.version 7.0
.target sm_80
.address_size 64

.visible .entry lpc_test_axpy(
    .param .u64 lpc_test_axpy_x,
    .param .u64 lpc_test_axpy_y,
    .param .f32 lpc_test_axpy_a,
    .param .u32 lpc_test_axpy_n)
{
    .reg .pred  %p<2>;
    .reg .b32   %r<6>;
    .reg .f32   %f<5>;
    .reg .b64   %rd<8>;

    ld.param.u64    %rd1, [lpc_test_axpy_x];
    ld.param.u64    %rd2, [lpc_test_axpy_y];
    ld.param.f32    %f1, [lpc_test_axpy_a];
    ld.param.u32    %r1, [lpc_test_axpy_n];
    mov.u32         %r2, %ctaid.x;
    mov.u32         %r3, %ntid.x;
    mov.u32         %r4, %tid.x;
    mad.lo.s32      %r5, %r2, %r3, %r4;
    setp.ge.u32     %p1, %r5, %r1;
    @%p1 bra        LPC_DONE;
    cvta.to.global.u64  %rd3, %rd1;
    cvta.to.global.u64  %rd4, %rd2;
    mul.wide.u32    %rd5, %r5, 4;
    add.s64         %rd6, %rd3, %rd5;
    add.s64         %rd7, %rd4, %rd5;
    ld.global.f32   %f2, [%rd6];
    ld.global.f32   %f3, [%rd7];
    fma.rn.f32      %f4, %f1, %f2, %f3;
    st.global.f32   [%rd7], %f4;
LPC_DONE:
    ret;
}
)ptx";

inline constexpr const char kTestKernelName[] = "lpc_test_axpy";

inline constexpr const char kBrokenPtx[] = R"ptx(
.version 7.0
.target sm_80
.address_size 64

.visible .entry lpc_test_broken()
{
    lpc.not.an.instruction;
    ret;
}
)ptx";

// Fake-driver-only kernels (tests/FakeDriver.cpp runs host implementations
// of them): valid PTX with the parameter lists of MLIR's expanded memref
// descriptors, and empty bodies, so they compute nothing on a real GPU.

// y = a * x + b over two 2-D f32 views: (x: 7 params) (y: 7 params) a b.
inline constexpr const char kFakeAffinePtx[] = R"ptx(//
// lpc fake-driver kernel (empty body)
//
.version 7.0
.target sm_80
.address_size 64

.visible .entry lpc_fake_affine_2d(
    .param .u64 .ptr .align 4 lpc_fake_affine_2d_param_0,
    .param .u64 .ptr .align 4 lpc_fake_affine_2d_param_1,
    .param .u64 lpc_fake_affine_2d_param_2,
    .param .u64 lpc_fake_affine_2d_param_3,
    .param .u64 lpc_fake_affine_2d_param_4,
    .param .u64 lpc_fake_affine_2d_param_5,
    .param .u64 lpc_fake_affine_2d_param_6,
    .param .u64 .ptr .align 4 lpc_fake_affine_2d_param_7,
    .param .u64 .ptr .align 4 lpc_fake_affine_2d_param_8,
    .param .u64 lpc_fake_affine_2d_param_9,
    .param .u64 lpc_fake_affine_2d_param_10,
    .param .u64 lpc_fake_affine_2d_param_11,
    .param .u64 lpc_fake_affine_2d_param_12,
    .param .u64 lpc_fake_affine_2d_param_13,
    .param .f32 lpc_fake_affine_2d_param_14,
    .param .f32 lpc_fake_affine_2d_param_15
)
{
    ret;
}
)ptx";

// out[i] = start + i * num / den over a 1-D f32 view: (out: 5 params)
// f64 start, i64 num, i32 den (one parameter of each scalar kind).
inline constexpr const char kFakeRampPtx[] = R"ptx(//
// lpc fake-driver kernel (empty body)
//
.version 7.0
.target sm_80
.address_size 64

.visible .entry lpc_fake_ramp(
    .param .u64 lpc_fake_ramp_param_0,
    .param .u64 lpc_fake_ramp_param_1,
    .param .u64 lpc_fake_ramp_param_2,
    .param .u64 lpc_fake_ramp_param_3,
    .param .u64 lpc_fake_ramp_param_4,
    .param .f64 lpc_fake_ramp_param_5,
    .param .u64 lpc_fake_ramp_param_6,
    .param .u32 lpc_fake_ramp_param_7
)
{
    ret;
}
)ptx";

/// A small artifact (docs/cuda-artifact.md) on the fake kernels: launches
/// on strided and offset views, two GEMMs (one batched with a broadcast B),
/// a copy; args, results and buffers. Its numbers are checked in
/// tests/CudaTests.cpp (cuda-executor); lpc-cuda-check --print-test-artifact
/// prints it.
inline std::string testArtifactJson() {
  std::string text = R"json({
  "format": "lpc-cuda-artifact",
  "version": 2,
  "chip": "sm_90",
  "producer": "hand-written (runtime/cuda/TestKernels.h)",
  "functions": [{
    "name": "toy_step",
    "args": [
      {"dtype": "F32", "shape": [4, 3], "state": "", "name": "", "input": "x", "metric": ""},
      {"dtype": "F32", "shape": [2, 3], "state": "param", "name": "fc.weight", "input": "", "metric": "", "init": 0.5}
    ],
    "results": [
      {"dtype": "F32", "shape": [4, 2], "state": "", "name": "", "input": "", "metric": "y"},
      {"dtype": "F32", "shape": [3, 4], "state": "", "name": "", "input": "", "metric": ""},
      {"dtype": "F32", "shape": [2, 4], "state": "", "name": "", "input": "", "metric": ""},
      {"dtype": "F32", "shape": [3, 3], "state": "", "name": "", "input": "", "metric": ""},
      {"dtype": "F32", "shape": [2, 2, 2], "state": "", "name": "", "input": "", "metric": ""}
    ],
    "arena_bytes": 512,
    "buffers": [{"offset": 0, "bytes": 48}, {"offset": 256, "bytes": 32}],
    "modules": [{"name": "affine", "ptx": @AFFINE@}, {"name": "ramp", "ptx": @RAMP@}],
    "ops": [
      {"op": "launch", "module": 0, "kernel": "lpc_fake_affine_2d", "grid": [1, 1, 1], "block": [128, 1, 1], "shared_bytes": 0, "params": [
        {"view": {"space": "arg", "index": 0, "offset": 0, "sizes": [4, 3], "strides": [3, 1], "elem_bytes": 4}},
        {"view": {"space": "buffer", "index": 0, "offset": 0, "sizes": [4, 3], "strides": [3, 1], "elem_bytes": 4}},
        {"f32": 2.0}, {"f32": 1.0}]},
      {"op": "gemm", "a": {"space": "buffer", "index": 0, "offset": 0, "sizes": [1, 4, 3], "strides": [12, 3, 1], "elem_bytes": 4},
        "b": {"space": "arg", "index": 1, "offset": 0, "sizes": [1, 2, 3], "strides": [6, 3, 1], "elem_bytes": 4},
        "c": {"space": "result", "index": 0, "offset": 0, "sizes": [1, 4, 2], "strides": [8, 2, 1], "elem_bytes": 4},
        "a_type": "F32", "b_type": "F32", "c_type": "F32", "trans_a": false, "trans_b": true, "broadcast_b": false},
      {"op": "launch", "module": 0, "kernel": "lpc_fake_affine_2d", "grid": [1, 1, 1], "block": [128, 1, 1], "shared_bytes": 0, "params": [
        {"view": {"space": "arg", "index": 0, "offset": 0, "sizes": [3, 4], "strides": [1, 3], "elem_bytes": 4}},
        {"view": {"space": "result", "index": 1, "offset": 0, "sizes": [3, 4], "strides": [4, 1], "elem_bytes": 4}},
        {"f32": -1.0}, {"f32": 0.5}]},
      {"op": "launch", "module": 1, "kernel": "lpc_fake_ramp", "grid": [1, 1, 1], "block": [32, 1, 1], "shared_bytes": 0, "params": [
        {"view": {"space": "buffer", "index": 1, "offset": 0, "sizes": [8], "strides": [1], "elem_bytes": 4}},
        {"f64": 1.5}, {"i64": 3}, {"i32": 2}]},
      {"op": "copy", "src": {"space": "buffer", "index": 1, "offset": 0, "sizes": [8], "strides": [1], "elem_bytes": 4},
        "dst": {"space": "result", "index": 2, "offset": 0, "sizes": [2, 4], "strides": [4, 1], "elem_bytes": 4}},
      {"op": "launch", "module": 0, "kernel": "lpc_fake_affine_2d", "grid": [1, 1, 1], "block": [128, 1, 1], "shared_bytes": 0, "params": [
        {"view": {"space": "arg", "index": 0, "offset": 3, "sizes": [3, 3], "strides": [3, 1], "elem_bytes": 4}},
        {"view": {"space": "result", "index": 3, "offset": 0, "sizes": [3, 3], "strides": [3, 1], "elem_bytes": 4}},
        {"f32": 1.0}, {"f32": 0.0}]},
      {"op": "gemm", "a": {"space": "arg", "index": 0, "offset": 0, "sizes": [2, 2, 3], "strides": [6, 3, 1], "elem_bytes": 4},
        "b": {"space": "arg", "index": 1, "offset": 0, "sizes": [1, 2, 3], "strides": [6, 3, 1], "elem_bytes": 4},
        "c": {"space": "result", "index": 4, "offset": 0, "sizes": [2, 2, 2], "strides": [4, 2, 1], "elem_bytes": 4},
        "a_type": "F32", "b_type": "F32", "c_type": "F32", "trans_a": false, "trans_b": true, "broadcast_b": true}
    ]
  }]
}
)json";
  auto put = [&](const std::string &key, const char *ptx) {
    text.replace(text.find(key), key.size(), jsonQuote(ptx));
  };
  put("@AFFINE@", kFakeAffinePtx);
  put("@RAMP@", kFakeRampPtx);
  return text;
}

} // namespace cuda
} // namespace rt
} // namespace lpc

#endif // LPC_RUNTIME_CUDA_TESTKERNELS_H
