//===- Passes.td - lpc lowerings ------------------------------*- tablegen -*-===//

#ifndef LPC_CONVERSION_PASSES_TD
#define LPC_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def LpcToLinalg : Pass<"lpc-to-linalg", "::mlir::ModuleOp"> {
  let summary = "Lowers lpc ops on tensors to linalg / tensor / arith / math";
  let description = [{
    The first step of the CPU back end. Each lpc op becomes linalg.generic
    (elementwise ops, reductions, GEMMs), linalg.transpose, tensor ops
    (reshape, slices, concatenation) and arith / math ops in the bodies.
    Low-precision operands are extended to f32 inside the bodies and results
    rounded once to their element type, so every op computes in f32 and
    rounds as the reference evaluator does (which computes in double).
    GEMMs accumulate in f32.

    Ops without a lowering yet are reported with their location. Model
    functions (with lpc.param / lpc.input ops) are left alone: what runs is
    the train step built from them.
  }];
  let dependentDialects = [
    "::mlir::linalg::LinalgDialect", "::mlir::tensor::TensorDialect",
    "::mlir::arith::ArithDialect", "::mlir::math::MathDialect",
    "::mlir::func::FuncDialect", "::mlir::scf::SCFDialect"
  ];
}

def LpcGemmToCalls : Pass<"lpc-gemm-to-calls", "::mlir::ModuleOp"> {
  let summary = "Replaces bufferized GEMMs with calls to the CPU GEMM library";
  let description = [{
    Runs after bufferization. Each linalg.generic that lpc-to-linalg made
    for a GEMM (marked `lpc_gemm = [transpose_a, transpose_b]`) with f32,
    bf16 or f16 operands and an f32 accumulator becomes a call to
    `lpc_rt_gemm_f32` / `_bf16` / `_f16` (runtime/gemm, C interface), on
    rank-3 views [batch, rows, cols] of its operands. The library
    overwrites the accumulator, so the zero fill before it goes away.
  }];
  let dependentDialects = [
    "::mlir::func::FuncDialect", "::mlir::memref::MemRefDialect",
    "::mlir::arith::ArithDialect"
  ];
}

def LpcMathApproximation
    : Pass<"lpc-math-approximation"> {
  let summary = "Replaces f32 exp/log/tanh/erf with vectorizable polynomial "
                "approximations";
  let description = [{
    MLIR's polynomial approximations (a few ulp in f32, with the special
    values handled) instead of scalar libm calls, so that the loops around
    softmax, cross-entropy, GELU and the optimizer vectorize. Ops the
    approximations do not cover stay libm calls.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::math::MathDialect",
    "::mlir::vector::VectorDialect"
  ];
}

def LpcStridedCopyToLoops
    : Pass<"lpc-strided-copy-to-loops", "::mlir::ModuleOp"> {
  let summary = "Turns memref.copy between non-contiguous buffers into "
                "linalg.copy (loops that vectorize)";
  let description = [{
    finalize-memref-to-llvm lowers a copy between contiguous buffers to
    memcpy but any other copy (slices, transposed views) to a call of the C
    runner utilities' memrefCopy, which walks the elements one at a time
    through the descriptors. As a linalg.copy the same copy becomes a loop
    nest with static bounds that LLVM vectorizes.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def LpcFuseElementwise : Pass<"lpc-fuse-elementwise", "::mlir::ModuleOp"> {
  let summary = "Fuses chains of elementwise linalg.generic ops (not GEMMs)";
  let description = [{
    Upstream's elementwise fusion on tensors, restricted so that it never
    touches a GEMM (a generic marked `lpc_gemm` must stay a GEMM for
    lpc-gemm-to-calls) and only fuses a producer into its only user, so
    nothing is computed twice. Each element still goes through the same
    operations in the same order (roundings to bf16/f16/fp8 included):
    fusion removes the intermediate tensors, not any arithmetic.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def LpcProfileMarks : Pass<"lpc-profile-marks", "::mlir::ModuleOp"> {
  let summary = "Brackets each top-level op of a bufferized function with a "
                "profiling call (lpc-jit / lpc-run --profile)";
  let description = [{
    Runs after bufferization and lpc-gemm-to-calls. Before every top-level
    op of a function body that does work (linalg ops, loops, calls,
    copies) it inserts `call @lpc_rt_profile_mark(id)`, and `id = -1`
    before the return; the time between two marks is charged to the op
    after the first. The labels (kind, shape, source location) go into the
    module attribute `lpc.profile_labels`, indexed by id.
  }];
  let dependentDialects = [
    "::mlir::func::FuncDialect", "::mlir::arith::ArithDialect"
  ];
}

def LpcOutlineParallelLoops
    : Pass<"lpc-outline-parallel-loops", "::mlir::ModuleOp"> {
  let summary = "Outlines the top-level scf.parallel loop nests of a function "
                "into bodies the runtime can run on several threads";
  let description = [{
    For each scf.parallel without reductions that is a direct child of a
    function body (what convert-linalg-to-parallel-loops makes of the
    parallel dimensions of a linalg op; reduction dimensions stay scf.for
    inside), the nest becomes a private function
    `@<fn>__par<N>(%lo: index, %hi: index, <captured values>...)` that
    runs outer iterations [lo, hi) (the outer dimensions flattened, the
    innermost one kept whole so it still vectorizes), marked
    `lpc.parallel_body` with `lpc.parallel_grain` (the fewest outer
    iterations worth a thread), and the loop becomes a call of it over the
    whole range. Still sequential and correct as it is;
    lpc-lower-parallel-calls turns the calls into runtime thread-pool
    calls after the LLVM lowering. Iterations are independent, so the
    split changes no result. Nests with fewer than `min-work` iterations in
    all are left alone.
  }];
  let options = [
    Option<"minWork", "min-work", "int64_t", "65536",
           "innermost iterations a nest needs to be outlined; also the work "
           "one thread gets at least">
  ];
  let dependentDialects = [
    "::mlir::func::FuncDialect", "::mlir::arith::ArithDialect",
    "::mlir::scf::SCFDialect"
  ];
}

def LpcLowerParallelCalls
    : Pass<"lpc-lower-parallel-calls", "::mlir::ModuleOp"> {
  let summary = "Turns calls of lpc.parallel_body functions (LLVM dialect) "
                "into lpc_rt_parallel_for calls";
  let description = [{
    Runs on the LLVM dialect, after lpc-outline-parallel-loops and the
    lowering to LLVM (when every captured memref has become plain scalars).
    Each body gets a thunk `void <body>__thunk(ptr ctx, i64 lo, i64 hi)`
    that loads the captured values from a struct and calls the body; each
    call `body(lo, hi, captures...)` becomes: store the captures into a
    stack struct, then `lpc_rt_parallel_for(thunk, ctx, lo, hi, grain)`,
    which splits [lo, hi) over the runtime's threads (the OpenMP pool the
    GEMMs use) or runs it inline when it is too small to share.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

#endif // LPC_CONVERSION_PASSES_TD
