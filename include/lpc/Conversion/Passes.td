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
    "::mlir::func::FuncDialect"
  ];
}

def LpcGemmToCalls : Pass<"lpc-gemm-to-calls", "::mlir::ModuleOp"> {
  let summary = "Replaces bufferized GEMMs with calls to the CPU GEMM library";
  let description = [{
    Runs after bufferization. Each linalg.generic that lpc-to-linalg made
    for a GEMM (marked `lpc_gemm = [transpose_a, transpose_b]`) with f32 or
    bf16 operands and an f32 accumulator becomes a call to
    `lpc_rt_gemm_f32` / `lpc_rt_gemm_bf16` (runtime/gemm, C interface), on
    rank-3 views [batch, rows, cols] of its operands. The library
    overwrites the accumulator, so the zero fill before it goes away.
  }];
  let dependentDialects = [
    "::mlir::func::FuncDialect", "::mlir::memref::MemRefDialect",
    "::mlir::arith::ArithDialect"
  ];
}

#endif // LPC_CONVERSION_PASSES_TD
