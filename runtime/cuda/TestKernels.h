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

} // namespace cuda
} // namespace rt
} // namespace lpc

#endif // LPC_RUNTIME_CUDA_TESTKERNELS_H
