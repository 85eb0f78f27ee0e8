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
    the train step built from them. The codegen pipelines set
    `reject-models`, which makes one an error that says how to compile only
    the functions lpc-autodiff built.

    FP8 conversions are integer code (exact, vectorizable; the CPU has no
    instructions for them). With `fp8-hardware-cvt` they stay arith ops for
    a back end that has (lpc-gpu-codegen for sm_89+, via lpc-fp8-to-nvvm):
    `arith.extf` from fp8, `arith.truncf` to fp8 (overflow gives NaN for
    E4M3FN, inf for E5M2), and for saturating casts and quantization
    `arith.truncf` of `minimumf(maximumf(x, -max), max)`.
  }];
  let options = [
    Option<"fp8HardwareCvt", "fp8-hardware-cvt", "bool", /*default=*/"false",
           "FP8 conversions as arith.extf / arith.truncf (saturating ones "
           "clamped to +-max first) instead of integer code">,
    Option<"fp8Gemm", "fp8-gemm", "bool", /*default=*/"false",
           "FP8 GEMMs (lpc.scaled_matmul with M, N, K multiples of 16 and "
           "an E4M3 operand) read their FP8 operands directly, for FP8 "
           "GEMM calls; otherwise the operands are widened to bf16 copies">,
    Option<"rejectModels", "reject-models", "bool", /*default=*/"false",
           "a model function is an error located at it, saying how to "
           "leave it out (the codegen pipelines, which cannot compile one)">
  ];
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

    With `fp8`, GEMMs of FP8 operands (lpc-to-linalg{fp8-gemm}) become
    `lpc_rt_gemm_f8e4m3_f8e4m3` / `_f8e4m3_f8e5m2` / `_f8e5m2_f8e4m3` calls
    in cuBLASLt's FP8 layout: A not transposed, B transposed ("TN"); an
    operand stored the other way is first copied transposed (linalg.transpose
    into a new buffer). Where the GEMM's only consumer dequantizes it
    (its element used once, by `c * (x * y)` with x and y loaded from
    rank-0 f32 buffers nothing writes in between: the operands' scale
    inverses) the call is the `_scaled` variant, which takes those two
    buffers after C and applies them itself (cuBLASLt's A/B scale
    pointers); and where that consumer then only rounds the element to
    bf16, the `_scaled_bf16` variant writes C in bf16, as a bf16 GEMM whose
    result is only rounded does (`lpc_rt_gemm_bf16_bf16`).

    An f32 result whose reader only adds an f32 bias per column (`c + b`,
    b indexed by the last dimension) becomes a `_bias` call (f32, bf16,
    f16 GEMMs) that adds it in f32 itself, cuBLASLt's bias epilogue; a
    reader left copying C then gives its output to the GEMM. (bf16 and FP8
    graphs round the product before adding the bias, which the epilogue
    would not do, so they keep their kernel.) Both rewrites need the reader
    to be the first op to touch C after the GEMM and nothing else to read C
    until it is overwritten or freed (C's buffer made in the function).
  }];
  let options = [
    Option<"fp8", "fp8", "bool", /*default=*/"false",
           "FP8 GEMMs become calls in the TN layout (transposed copies where "
           "needed)">,
    Option<"deviceOperands", "device-operands", "bool", /*default=*/"false",
           "an operand that is a constant global (host memory) is first "
           "copied into a new buffer by a loop nest, which the GPU pipeline "
           "makes a kernel that reads the table from its PTX module "
           "(lpc-sink-constant-globals): the GPU's GEMMs read device memory">
  ];
  let dependentDialects = [
    "::mlir::func::FuncDialect", "::mlir::memref::MemRefDialect",
    "::mlir::arith::ArithDialect"
  ];
}

def LpcDistinctResults : Pass<"lpc-distinct-results", "::mlir::func::FuncOp"> {
  let summary = "Gives every buffer a function returns more than once a copy "
                "of its own";
  let description = [{
    Runs between bufferization and `buffer-results-to-out-params
    {hoist-static-allocs}`, which replaces a returned buffer's allocation by
    its out-parameter and crashes (MLIR 22) when one allocation is returned
    twice: the second result finds the allocation already gone. Folding makes
    such returns: two results that canonicalize to the same value (`x - 0`
    and `x` in lpc-jit --op-check's probes, two states that fold alike).
    Each repeat becomes a new allocation of the same type that the buffer is
    copied into. Buffers returned once are left alone.

    ```mlir
    return %m, %m : memref<4xf32>, memref<4xf32>
    // becomes
    %c = memref.alloc() : memref<4xf32>
    memref.copy %m, %c : memref<4xf32> to memref<4xf32>
    return %m, %c : memref<4xf32>, memref<4xf32>
    ```
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
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

    `keep` names ops left as they are: lpc-gpu-codegen keeps `math.exp`
    for libdevice's `__nv_expf` (a range reduction and the hardware's
    `ex2.approx`, 2 ulp as CUDA documents it) in a handful of
    instructions where the polynomial takes about twenty.
  }];
  let options = [
    ListOption<"keep", "keep", "std::string",
               "math ops (e.g. math.exp) not to approximate">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::math::MathDialect",
    "::mlir::vector::VectorDialect"
  ];
}

def LpcFP8ToNVVM : Pass<"lpc-fp8-to-nvvm"> {
  let summary = "FP8 arith.truncf / arith.extf to the PTX conversion "
                "instructions (sm_89+), with lpc's exact semantics";
  let description = [{
    Runs in the gpu.module part of lpc-gpu-codegen, on what
    lpc-to-linalg{fp8-hardware-cvt} leaves. Scalar conversions between f32
    and f8E4M3FN / f8E5M2 become `nvvm.convert.f32x2.to.f8x2` (PTX
    `cvt.rn.satfinite.{e4m3,e5m2}x2.f32`: round to nearest even, overflow
    and inf to +-max) and `nvvm.convert.f8x2.to.f16x2` (PTX
    `cvt.rn.f16x2.{e4m3,e5m2}x2`, exact) then `arith.extf` (exact), with
    both lanes given the same value. Where the instruction differs from
    lpc's casts (encodeFP8 / decodeFP8, the reference evaluator), selects
    fix the result:

    * a truncf that is not of a clamp to +-max does not saturate: E4M3FN
      gives NaN (0x7F | sign) for |x| > 464 (464, the tie between 448 and
      the next step, rounds to the even 448) and inf; E5M2 gives inf
      (0x7C | sign) for |x| >= 61440 (the tie rounds up: 57344 is odd);
    * NaN in gives lpc's NaN, sign | 0x7F (E4M3FN) or 0x7E (E5M2), and
      decoded NaN the default quiet NaN with the byte's sign: the PTX
      manual does not fix the NaN the instructions return.

    ```mlir
    %y = arith.truncf %x : f32 to f8E4M3FN
    // becomes
    %p = nvvm.convert.f32x2.to.f8x2 %x, %x {rnd = #nvvm.fp_rnd_mode<rn>,
             sat = #nvvm.sat_mode<satfinite>} : i16(f8E4M3FN)
    %c = arith.trunci %p : i16 to i8
    // ... %over = |bits(x)| >u bits(464.0); %c2 = select %over, sign|0x7F, %c
    %y = arith.bitcast %c2 : i8 to f8E4M3FN
    ```

    Sources narrower than f32 are extended first (exact). Integer sources
    (sitofp / uitofp to fp8, what canonicalize makes of a truncf of a
    sitofp to f32) go through f32, exactly: integers past 2^24 overflow
    either way. An f64 source (double rounding), vectors, a rounding mode
    other than to-nearest-even, and a gpu.module whose NVVM target is older
    than sm_89 (or sm_89 without PTX 8.1) are errors.
  }];
  let dependentDialects = [
    "::mlir::NVVM::NVVMDialect", "::mlir::LLVM::LLVMDialect",
    "::mlir::arith::ArithDialect"
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
    lpc-gemm-to-calls) and, by default, only fuses a producer into its only
    user: nothing is ever computed twice. Each element still goes through
    the same operations in the same order (roundings to bf16/f16/fp8
    included): fusion removes the intermediate tensors, not any arithmetic.

    With `multi-use`, a producer with other users fuses too, where its
    consumer reads it element for element and every other user comes later:
    the fused op writes the producer's result as well (for those users) and
    the consumer's, in one pass, so the consumer no longer reads it back.
    (Upstream's fusion would leave the other users on the producer and
    fuse it into each of them again: its work done once per user.)

    With `broadcast=false` (the host's pipeline), a producer that its
    consumer reads through a broadcast (a bias cast to bf16, read by every
    row) stays a loop of its own: fused, its work would be done again for
    every element it is broadcast to (on the host, the cast of a 2048-wide
    bias 2048 times per step, 15% of the instructions of the GELU loop that
    reads it); unfused, it costs one pass over the small tensor. The GPU
    keeps fusing them: recomputing is cheap there, a kernel launch is not.
  }];
  let options = [
    Option<"multiUse", "multi-use", "bool", /*default=*/"false",
           "also fuse a producer that has other users, keeping its result "
           "as an extra result of the fused op">,
    Option<"broadcast", "broadcast", "bool", /*default=*/"true",
           "fuse a producer that the consumer reads through a broadcast "
           "(recomputing it for every element it is broadcast to)">,
  ];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def LpcFuseSiblingReductions
    : Pass<"lpc-fuse-sibling-reductions", "::mlir::ModuleOp"> {
  let summary = "Fuses full reductions of the same tensor into one "
                "linalg.generic (one read; one kernel per split level)";
  let description = [{
    On tensors, after lpc-fuse-elementwise. Two linalg.generic ops whose
    loops are all reductions (an amax, FP8 saturation/underflow counts)
    fuse when their loop ranges are equal, they read a common input through
    the same indexing map, and the later one does not depend on the earlier
    one. The fused op, at the earlier one's place, has the inputs of both
    (each once) and the outputs of both, and each output's body unchanged;
    the side-effect-free ops the later one's operands need (fills) move up
    with it. Ops with side effects in between stop the fusion.

    With `elementwise` (the GPU pipeline), an elementwise generic over the
    same loops that reads a common input joins a full reduction too (FP8
    quantization with the amax and counts of its tensor: one pass reads
    the tensor, writes the FP8 copy and the partial statistics); its
    outputs become write-once outputs of the fused reduction, which
    lpc-split-reductions writes where it reads the inputs.
  }];
  let options = [
    Option<"elementwise", "elementwise", "bool", "false",
           "also fuse elementwise generics over the same loops into full "
           "reductions (GPU: one pass instead of two)">,
  ];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def LpcParallelColumns : Pass<"lpc-parallel-columns", "::mlir::ModuleOp"> {
  let summary = "Tiles reductions over rows into columns (bias / LayerNorm "
                "weight gradients) into an scf.forall over column tiles, so "
                "that the host's threads share them";
  let description = [{
    On tensors, before bufferization (host pipeline). A linalg.generic in
    which a reduction loop comes before a parallel one becomes, in
    convert-linalg-to-parallel-loops, scf.for loops over the reduced rows
    around an scf.parallel over the columns: a top-level scf.for, which
    runs on one thread. Its parallel loops are tiled with an scf.forall
    (the innermost in tiles of `columns`, the outer ones one by one, or
    several at a time while a tile has fewer than `min-work` innermost
    iterations) when that makes at least two tiles of at least `min-work`;
    scf-forall-to-parallel and lpc-outline-parallel-loops then hand the
    tiles to the threads. Each output element still sums its inputs in the
    same order: results are bit-identical.
  }];
  let options = [
    Option<"columns", "columns", "int64_t", "128",
           "iterations of the innermost parallel loop per tile">,
    Option<"minWork", "min-work", "int64_t", "65536",
           "innermost iterations a tile needs at least (the host pipeline "
           "passes its parallel-min-work)">
  ];
  let dependentDialects = [
    "::mlir::scf::SCFDialect", "::mlir::tensor::TensorDialect",
    "::mlir::linalg::LinalgDialect", "::mlir::affine::AffineDialect"
  ];
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

def LpcOutlineSerialLoops
    : Pass<"lpc-outline-serial-loops", "::mlir::ModuleOp"> {
  let summary = "Outlines every top-level loop nest of a function with many "
                "into a never-inlined function of its own";
  let description = [{
    The host's compile time: LLVM's loop passes on one function holding
    thousands of loop nests (a recurrent layer unrolled over its time
    steps) take time that grows with the square of the nests
    (ScalarEvolution's guard queries walk back through every earlier loop),
    and so does convert-scf-to-cf. In a function with at least `min-loops`
    top-level `scf.for` / `scf.parallel` nests (without results), each nest
    becomes a private function `@<fn>__loop<N>(<captured values>...)`
    marked `lpc.serial_body` and `noinline`, called in its place; constants
    are cloned in. Which captured buffers alias no other capture is
    recorded as for lpc-outline-parallel-loops (`lpc.parallel_noalias`,
    set by lpc-lower-parallel-calls), so the bodies still vectorize.
    Functions with fewer nests are left as they are. Runs after
    lpc-outline-parallel-loops (whose bodies it leaves alone) on the CPU.
  }];
  let options = [
    Option<"minLoops", "min-loops", "int64_t", "256",
           "top-level loop nests a function needs before they are outlined">
  ];
  let dependentDialects = [
    "::mlir::func::FuncDialect", "::mlir::arith::ArithDialect",
    "::mlir::scf::SCFDialect"
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
    GEMMs use) or runs it inline when it is too small to share. On every
    function (the bodies of lpc-outline-serial-loops too) it sets
    `llvm.noalias` on the parameters `lpc.parallel_noalias` names.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

def LpcParallelScatter : Pass<"lpc-parallel-scatter"> {
  let summary = "Runs the column loop of an embedding gradient's "
                "scatter-add in parallel, outside its token loop (GPU)";
  let description = [{
    An scf.for marked `lpc.independent_columns` (the embedding gradient:
    for each token n in order, for each column j, table[ids[n], j] +=
    grad[n, j]) becomes an scf.parallel over the inner loop's columns
    around a copy of the outer loop, the inner loop's body inlined: a
    thread per column, each summing its tokens in the original order, so
    the results are bit-identical. Where the update is an addition into a
    static f32 table over all its columns, the tokens are also split into
    P contiguous chunks (a power of two up to `max-parts` dividing the
    token count, chunks of at least `min-chunk` tokens, P tables within
    `max-partial-bytes`): thread (p, column) sums chunk p into a zeroed
    partial table p, then a thread per table element adds the P partials
    to it in order (sums reassociated by chunks). Loops with results
    (before bufferization) or with more than one inner loop are left alone.
  }];
  let options = [
    Option<"maxParts", "max-parts", "int64_t", "32",
           "most chunks of tokens">,
    Option<"minChunk", "min-chunk", "int64_t", "16",
           "fewest tokens per chunk">,
    Option<"maxPartialBytes", "max-partial-bytes", "int64_t", "268435456",
           "most bytes of partial tables (256 MiB)">
  ];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::arith::ArithDialect"];
}

def LpcPromoteAccumulators : Pass<"lpc-promote-accumulators"> {
  let summary = "Carries a loop's accumulator (a load and store of one "
                "element every iteration) in an scf.for iter_arg (GPU)";
  let description = [{
    A reduction lowered to loops loads the output element, combines and
    stores it back in every iteration; in a GPU kernel, whose buffers are
    plain pointers, that is a round trip through global memory per
    element. Where the load and the store are of the same buffer at the
    same loop-invariant indices, directly in the loop's body (load first),
    and nothing else in the loop may access that memory, the value is
    loaded once before the loop, carried as an iter_arg and stored once
    after it. Buffers are different memory when they are views of
    different allocations and at least one of them is a memref.alloc made
    in the function; loops with ops other than loads, stores and
    side-effect-free ops are left alone.
  }];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::memref::MemRefDialect"];
}

def LpcAlignKernelArgs : Pass<"lpc-align-kernel-args"> {
  let summary = "Marks the pointer parameters of GPU kernels (llvm.func "
                "with gpu.kernel) as aligned to `bytes`";
  let description = [{
    Every pointer a CUDA artifact passes to a kernel is the base of an
    argument, a result or the arena, which the runtime guarantees to be
    16-byte aligned (docs/cuda-artifact.md). With `llvm.align` on those
    parameters LLVM can prove neighbouring accesses aligned and vectorize
    them (see lpc-widen-parallel-loops).
  }];
  let options = [
    Option<"bytes", "bytes", "int64_t", "16",
           "alignment of every pointer parameter (a power of two)">
  ];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

def LpcWidenParallelLoops : Pass<"lpc-widen-parallel-loops"> {
  let summary = "Gives each iteration of an elementwise scf.parallel V "
                "neighbouring elements, loads first (GPU: 16-byte accesses)";
  let description = [{
    Each outermost scf.parallel whose body has no nested regions, touches
    memory only through memref.load and memref.store, and loads nothing
    after its first store, takes V neighbouring iterations of its innermost
    dimension (from 0 by 1) per iteration: V is `bytes` divided by the
    narrowest element type accessed with the innermost induction variable
    as the last index, halved until it divides the dimension. Each op of
    the body is copied V times in a row, the stores after everything else,
    so that accesses to neighbouring addresses sit next to each other for
    LLVM's load/store vectorizer. Moving later copies' loads above earlier
    copies' stores relies on the iterations of an scf.parallel being
    independent. A loop marked `lpc_tiled` (lpc-fuse-cast-transposes:
    its iterations already take tiles shaped for wide accesses) is left
    alone.
  }];
  let options = [
    Option<"bytes", "bytes", "int64_t", "16",
           "bytes of the narrowest element type per iteration">
  ];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::arith::ArithDialect"];
}

def LpcFuseCastTransposes : Pass<"lpc-fuse-cast-transposes"> {
  let summary = "Makes the cast that writes an FP8 tensor also write the "
                "transposed copy an FP8 GEMM needs, tile by tile (one pass "
                "over the source instead of a cast and a transpose)";
  let description = [{
    For a `linalg.transpose` that `lpc-tile-transposes` would tile (the last
    two dimensions swapped, static identity layouts, those dimensions
    multiples of T = `bytes` / the element size) into a fresh allocation,
    whose input (or the buffer it is a `memref.collapse_shape` view of: a
    [B, S, D] activation as a GEMM's [B * S, D] operand) was last written in
    the same block by a bufferized `linalg.generic` (the FP8 cast) that
    - has only reduction loops (outputs: the tensor and any other
      identity-indexed output written once per iteration, and 0-d
      accumulators whose combiner's order does not matter: max/min,
      integer add/or/and/xor, an addf with reassoc) or only parallel loops
      (outputs all written once),
    - uses no `linalg.index` and no op with memory effects in its body,
      and reads buffers it does not write through projected permutations,
    and when nothing between the two ops touches the transposed copy's
    buffer (a call marked `lpc_writes`, as lpc-gemm-to-calls marks its
    GEMMs, touches only what it lists and reads the rest): the cast (its
    loops first collapsed like the view, if it is one) becomes an
    `scf.parallel` over (leading dimensions..., column tiles, row groups),
    the row groups innermost (neighbouring GPU threads: neighbouring rows),
    marked `lpc_tiled` (lpc-widen-parallel-loops leaves it alone). An
    iteration takes R rows (R = 4 bytes / the element size: 4 for FP8) of
    C columns (C = 2T, or T where the columns are no multiple of 2T), all
    unrolled: it loads its R source rows, runs the cast's body on each
    element (in row-major order, the accumulators carried along from their
    neutral elements), stores each written-once output's R rows and the
    transposed copy's C pieces of R consecutive elements (a warp's 32
    threads write 32 x 4 consecutive bytes of a transposed row), then one
    partial per accumulator. Each row it reads or writes is a 1-D
    `memref.subview` (accesses at constant offsets from one pointer, which
    LLVM's load/store vectorizer merges); with `base-align` each load and
    store states its alignment. A `linalg.generic` reducing the partials
    ([leading..., column tiles, row groups]) into the original accumulators
    follows (for `lpc-split-reductions` to split), then the partials'
    deallocation; the transpose is erased and its buffer's allocation moved
    above the cast.

    Results equal the unfused lowering's bit for bit: the per-element
    computation is the body's, and the reductions may be reordered. A
    transpose whose input some other op writes last, or whose sizes do not
    tile, is left for `lpc-tile-transposes`.
  }];
  let options = [
    Option<"bytes", "bytes", "int64_t", "16",
           "bytes of T elements (T = bytes / the element size; a thread "
           "takes 2T or T columns); a power of two, at least 2">,
    Option<"baseAlign", "base-align", "int64_t", "0",
           "the alignment in bytes every buffer's start is known to have "
           "(the CUDA runtime's 16); the loads and stores then state their "
           "alignment (0: they do not)">
  ];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::linalg::LinalgDialect"];
}

def LpcTileTransposes : Pass<"lpc-tile-transposes"> {
  let summary = "Turns bufferized transposes of the last two dimensions into "
                "an scf.parallel over tiles that loads and stores rows of "
                "`bytes` bytes (GPU: coalesced 16-byte accesses)";
  let description = [{
    A `linalg.transpose` on memrefs that swaps the last two dimensions (the
    leading ones, if any, in place), with static shapes, contiguous
    (identity-layout) input and output, distinct buffers, and an int or
    float element of E = 1, 2, 4, ... bytes (E < `bytes`), becomes an
    `scf.parallel` over (leading dimensions..., row tiles, column tiles),
    from 0 by 1, the column tiles innermost. Each iteration moves one
    T x T tile, T = `bytes` / E (16 x 16 for FP8 with the default 16):
    first T rows of T consecutive elements are loaded (scalar
    `memref.load`s, row by row), then T rows of T consecutive elements
    stored (scalar `memref.store`s, destination row by destination row),
    all indices explicit `arith` arithmetic. Neighbouring iterations read
    neighbouring tiles of the same source rows, so once the loop is
    collapsed onto GPU threads a warp reads whole rows, and LLVM's
    load/store vectorizer (NVPTX's O3 pipeline) merges each row's T scalar
    accesses into one `bytes`-byte access, given the 16-byte alignment of
    kernel pointers (lpc-align-kernel-args) and tiles at multiples of T.

    A transpose whose last two dimensions are not both multiples of T is
    left alone (still correct: linalg lowers it element by element), as is
    any other permutation. Loading a tile before storing it relies on the
    input and output not overlapping, as the element-wise lowering's
    parallel loop does.
  }];
  let options = [
    Option<"bytes", "bytes", "int64_t", "16",
           "bytes each iteration loads per source row and stores per "
           "destination row (a power of two, at least 2)">
  ];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::memref::MemRefDialect"];
}

def LpcCollapseParallelLoops : Pass<"lpc-collapse-parallel-loops"> {
  let summary = "Collapses each outermost multi-dimensional scf.parallel "
                "into one dimension (for the GPU's thread mapping)";
  let description = [{
    The GPU pipeline tiles parallel loops by 256 along their first
    dimension and maps the rest to the grid: a [1, 2048, 4096] loop would
    give blocks with one working thread and grid sizes past CUDA's limits.
    One linear dimension (the last one fastest: neighbouring threads take
    neighbouring elements of row-major buffers) gives full blocks of
    threads along x. The original indices are recovered by division and
    remainder by constants.
  }];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::arith::ArithDialect"];
}

def LpcParallelDimsOuter : Pass<"lpc-parallel-dims-outer"> {
  let summary = "Moves the parallel dimensions of linalg.generic ops in "
                "front of their reduction dimensions (for the GPU)";
  let description = [{
    convert-linalg-to-parallel-loops makes an scf.parallel only of the
    parallel dimensions that come before the first reduction dimension; a
    generic like a bias gradient ([reduction, reduction, parallel]) would
    become sequential loops, which the GPU pipeline cannot map to threads.
    With the parallel dimensions first, each output element gets a thread
    that runs its whole reduction, in the same order as before. Reductions
    with no parallel dimension at all are left as they are.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def LpcNativeWireCollectives
    : Pass<"lpc-native-wire-collectives", "::mlir::ModuleOp"> {
  let summary = "Spells the GPU's narrow wire formats as collectives NCCL "
                "runs (bf16 / fp16 natively, FP8 as bytes around kernels)";
  let description = [{
    The first pass of lpc-gpu-codegen (and, with `ranks`, of lpc-run's
    GPU steps). An f32 `lpc.all_reduce`, `lpc.reduce_scatter` or
    `lpc.all_gather` whose `comm_precision` is narrow:

    - `bf16` or `fp16`: becomes a cast of its input to that type, the same
      collective on the narrow tensor (NCCL's bf16 / f16 reductions: half
      the bytes on the wire) and a cast of the result back to f32. Its
      numerics are NCCL's, not the CPU runtime's (which rounds once, sums
      in f32 in rank order and rounds the mean once): NCCL adds in its own
      order and rounds each partial sum to the type, so N ranks round up
      to N - 1 more times.
    - `fp8_e4m3` or `fp8_e5m2`: becomes the CPU runtime's algorithm written
      out, so that the GPU computes what the CPU computes: `lpc.amax` of
      the rank's values (non-finite made +inf), an f32 `lpc.all_reduce
      max`, `lpc.wire_scale` (the shared power of two), `lpc.quantize`;
      for the all-reduce and the reduce-scatter, the FP8 values, padded
      with zeros to N blocks, go through `lpc.all_to_all` (rank r receives
      every rank's block r), are widened and summed over the ranks with
      `lpc.reduce_sum` (f32, rank 0 first) and divided by N; the
      all-reduce rounds that mean to FP8 and `lpc.all_gather`s it (FP8
      bytes), the reduce-scatter keeps it; `lpc.dequantize` (or a multiply)
      by 1 / scale last. Only bytes travel, so NCCL needs no FP8 type, and
      every rank gets the same bits. The all-reduce's blocks need the rank
      count: `ranks` (0, the default, makes an FP8 all-reduce an error
      naming it); `ranks=1` makes it a copy built for one rank (nothing is
      rounded on one rank; the runtime refuses the step on more). The
      sharding collectives carry their own `ranks`.

    Run on the CPU (`lpc-run --wire-kernels`), the FP8 form gives the
    CPU runtime's bits.
  }];
  let options = [
    Option<"ranks", "ranks", "int64_t", /*default=*/"0",
           "the run's rank count, for an FP8 all-reduce (0: not known)">,
  ];
  let dependentDialects = ["::mlir::lpc::LpcDialect"];
}

def LpcSinkConstantGlobals
    : Pass<"lpc-sink-constant-globals", "::mlir::ModuleOp"> {
  let summary = "Moves the constant tensors a GPU kernel reads into the "
                "kernel (PTX globals) instead of passing host memory";
  let description = [{
    A constant that is not a splat (a rotary cos/sin table, a constant index
    tensor or mask that lpc-import computed) bufferizes to a
    `memref.global` read through `memref.get_global` in the host function,
    which is host memory: a kernel cannot read it, and the CUDA artifact
    has no view of it. Runs in lpc-gpu-codegen after the parallel loops
    became gpu.launch ops and before gpu-kernel-outlining: each
    `memref.get_global` of a constant global that a launch uses, with the
    chain of views made of it (subview, expand/collapse_shape, cast,
    reinterpret_cast with constant operands), is cloned into the launch
    body. Outlining then copies the global into the kernel's gpu.module and
    the NVPTX back end emits it as an initialized `.global` array of the
    PTX module. The host copies are left dead (canonicalize removes them).
    Host uses that remain (a GEMM operand) are left alone and the artifact
    writer reports them.
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect",
                           "::mlir::memref::MemRefDialect"];
}

def LpcMergeGPUModules : Pass<"lpc-merge-gpu-modules", "::mlir::ModuleOp"> {
  let summary = "Moves the kernels of the one-kernel gpu.modules that "
                "gpu-kernel-outlining makes into one gpu.module";
  let description = [{
    Runs in lpc-gpu-codegen right after gpu-kernel-outlining, which gives
    every kernel its own gpu.module (a train step has hundreds). Each
    module holding nothing but one gpu.func (and the constant
    `memref.global`s it reads, which lpc-sink-constant-globals put there:
    copies of one host global under its name, kept once) moves into one gpu.module
    `@<first module>_kernels`; the kernel takes its old module's name (unique
    in the parent) and every gpu.launch_func is redirected. One module then
    goes through LLVM's NVPTX back end once instead of once per kernel, and
    the artifact has one PTX module to load.
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect"];
}

def LpcGPULaunchInfo : Pass<"lpc-gpu-launch-info", "::mlir::ModuleOp"> {
  let summary = "Records on each gpu.launch_func which operands its kernel "
                "reads and writes and how many loop iterations one thread "
                "runs (for the runtime's cost model)";
  let description = [{
    Runs in lpc-gpu-codegen after lpc-merge-gpu-modules, while the kernels
    are memref-level gpu.funcs. Per launch:

    - `lpc_access`: one string per kernel operand, "r", "w", "rw" or ""
      (scalars, and memrefs the kernel never touches), from the memory
      effects of the kernel's uses of the argument and of the views made of
      it (a use of unknown effect counts as "rw"). "r" means the kernel
      reads what the operand held before the launch: a 0-d memref whose
      first access is a store (a scalar passed between the statements of a
      one-thread kernel) is "w" even if the kernel reads it back;
    - `lpc_serial_iters`: the loop iterations one thread runs in sequence:
      an scf.for counts its static trip count times its body's (at least
      1), loops in sequence add, an scf.if counts its longer branch; absent
      when a bound is not constant or another kind of loop is present.

    ```mlir
    gpu.launch_func @k::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
        args(%x : memref<64xf32>, %m : memref<f32>)
    // becomes
    gpu.launch_func @k::@k ... args(...) {lpc_access = ["r", "w"],
                                          lpc_serial_iters = 64 : i64}
    ```

    lib/Backend/GPUArtifact.cpp writes them as the launch's `access` and
    `serial_iters` keys (docs/cuda-artifact.md).
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect"];
}

def LpcGPUSerialKernels
    : Pass<"lpc-gpu-serial-kernels", "::mlir::func::FuncOp"> {
  let summary = "Wraps the serial code of a bufferized function (loops "
                "and scalar ops outside parallel loops) in one-iteration "
                "parallel loops: single-thread GPU kernels";
  let description = [{
    Runs in lpc-gpu-codegen after convert-linalg-to-parallel-loops. What
    is left outside parallel loops (reductions with no parallel dimension,
    0-d scalar code) reads and writes device buffers, so it cannot stay in
    the host function: each run of such ops moves into
    `scf.parallel (%i) = (0) to (1)`, which becomes a one-thread kernel.
    Scalars a run computes and later code uses are stored to 0-d buffers
    and loaded where they are used. The host function keeps allocations,
    views, copies, calls, constants and index arithmetic. A value computed
    on the device that host code itself needs (a dynamic size, say) is an
    error. Correct, not fast: two-level reductions are future work.
  }];
  let dependentDialects = [
    "::mlir::scf::SCFDialect", "::mlir::memref::MemRefDialect",
    "::mlir::arith::ArithDialect"
  ];
}

def LpcMergeSerialKernels
    : Pass<"lpc-merge-serial-kernels", "::mlir::func::FuncOp"> {
  let summary = "Merges runs of adjacent single-thread kernels (and small "
                "copies between them) into one single-thread kernel";
  let description = [{
    Runs at the end of the GPU loop stage, after lpc-gpu-serial-kernels,
    on the host function's top level. A candidate is an `scf.parallel`
    with constant bounds, no results and at most `max-iterations`
    iterations (one-iteration loops are single-thread kernels; a loop of a
    few iterations runs them one after the other in an scf.for), or a
    `memref.copy` of static shape with at most `max-copy-elements`
    elements (0-d state copies: device-to-device copies of 4-8 bytes in
    the artifact). Each maximal run of two or more candidates that are
    adjacent in program order becomes one `scf.parallel (%i) = (0) to
    (1)` in place of the last of them, holding the pieces in their order
    (copies as loads and stores): one thread runs them in program order,
    so every dependency between them holds. Between two candidates may
    stand allocations, deallocations, ops without memory effects or
    regions (constants, index arithmetic, views), and other kernels
    (scf.parallel loops) and copies that provably touch none of the
    buffers of the pieces before them (each memref they use is a view of
    an allocation other than those of the pieces; two function arguments
    may be one buffer). Those stay where they are, except deallocations,
    which move after the merged loop (a piece before them may use what
    they free). Anything else (a GEMM or attention call, a kernel or copy
    that may touch a piece's buffer) ends the run: pieces never move
    across an op that may touch their buffers.
  }];
  let options = [
    Option<"maxIterations", "max-iterations", "int64_t", /*default=*/"1",
           "scf.parallel loops of at most this many iterations are merged">,
    Option<"maxCopyElements", "max-copy-elements", "int64_t",
           /*default=*/"16",
           "memref.copy ops of at most this many elements are merged">,
  ];
  let dependentDialects = [
    "::mlir::scf::SCFDialect", "::mlir::memref::MemRefDialect",
    "::mlir::arith::ArithDialect"
  ];
}

def LpcMergeIndependentKernels
    : Pass<"lpc-merge-independent-kernels", "::mlir::func::FuncOp"> {
  let summary = "Defers small kernels to where their results are needed and "
                "launches independent ones together (multi-tensor kernels)";
  let description = [{
    Runs last in the GPU loop stage, on the host function's top level, where
    every kernel is a one-dimensional `scf.parallel (%i) = (0) to (N) step
    (1)`. A candidate is such a loop with at most `max-threads` iterations
    whose allocated buffers hold at most `max-bytes` bytes in all: the final
    stages of reductions (amax, saturation counts, norms), the FP8 amax
    histories and scales, the loss-scale state. Copies of static shape and
    at most `max-copy-elements` elements (the initial values of reduction
    accumulators, 0-d state) first become one-thread loops of loads and
    stores, and candidates.

    1. Sinking: each candidate, from the last to the first, moves down past
       every op that provably touches none of its buffers (allocations,
       deallocations of other buffers, ops without memory effects or
       regions, and kernels, copies and runtime calls (`lpc_rt_*`, which
       touch their operands only) that neither write what it reads or
       writes nor read what it writes; two function arguments may be one
       buffer unless `distinct-args`, and reading one buffer from both
       sides is no conflict). It stops
       before the first op that may touch one of its buffers, or before
       the terminator; deallocations of its buffers move after it. With
       delayed scaling nothing in a step reads the next scale, so the
       scale and history work of every FP8 tensor gathers at the end of
       the step.
    2. Merging: in each run of candidates apart only by allocations,
       deallocations and ops without memory effects or regions, each
       candidate gets a level, one more than the highest level of an earlier
       candidate of the run that it conflicts with in that sense (0 if
       none).
       The candidates of one level become one loop of the sum of their
       iterations (iteration i runs piece k's iteration i - start_k in an
       scf.if chain), the levels in order, in place of the run's last
       candidate; the run's deallocations move after them. A merged loop
       takes pieces while its kernel parameters stay within
       `max-param-bytes` (each memref is a descriptor of (3 + 2 x rank) x 8
       bytes; 4096 is the limit of every device and driver).

    Pieces of one loop touch disjoint buffers, so running them side by side
    is running them one after the other; and no kernel moves across an op
    that may touch its buffers, so every dependency of the program holds.
  }];
  let options = [
    Option<"maxThreads", "max-threads", "int64_t", /*default=*/"65536",
           "loops of at most this many iterations are candidates">,
    Option<"maxBytes", "max-bytes", "int64_t", /*default=*/"16777216",
           "candidates use allocated buffers of at most this many bytes in "
           "all (sinking keeps them allocated longer)">,
    Option<"maxParamBytes", "max-param-bytes", "int64_t",
           /*default=*/"4096",
           "kernel parameter bytes of a merged loop at most">,
    Option<"maxCopyElements", "max-copy-elements", "int64_t",
           /*default=*/"16",
           "memref.copy ops of static shape and at most this many elements "
           "first become one-thread loops (and candidates)">,
    Option<"distinctArgs", "distinct-args", "bool", /*default=*/"false",
           "the function's arguments are distinct buffers (lpc's runtimes "
           "pass each argument and result of a step in its own block); "
           "false: any two may be one buffer">,
  ];
  let dependentDialects = [
    "::mlir::scf::SCFDialect", "::mlir::memref::MemRefDialect",
    "::mlir::arith::ArithDialect"
  ];
}

def LpcSplitReductions : Pass<"lpc-split-reductions"> {
  let summary = "Splits bufferized reductions into parallel partial "
                "reductions and a small final one (two-level: the GPU, and "
                "the host's full reductions)";
  let description = [{
    One reduction dimension d_s of a linalg.generic is split as k * P + p:
    a generic parallel over p (and the output's dimensions) computes P
    partials per output element (thread p reads elements p, p + P, ...),
    and a generic per output combines them into the original output (one
    generic for all outputs of a full reduction). Outputs of a full
    reduction written once per iteration (old value unread, indexed by
    every loop) are written by the partial pass where it reads the inputs.
    Full reductions (0-d outputs) are first collapsed to one loop where
    every input is read whole from a collapsible buffer, then split into up
    to `max-parts` partials of at least `min-work` elements (along the loop
    allowing the most, if several are left); while more than `max-serial`
    partials remain, their combination is split again, into partials of at
    least `max-serial` elements (few levels: each is a kernel launch). Reductions with parallel dimensions split the
    dimension that runs along their largest input's last dimension (a
    softmax or layernorm row; p becomes the innermost parallel dimension,
    so neighbouring threads read neighbouring elements), or, if that one is
    parallel (a bias gradient's columns), their longest reduction dimension
    with p outermost; up to `row-parts` partials, for reductions of at least
    `min-row` elements. Only outputs whose combiner can be reordered are
    taken (addf with reassoc, max/min, integer add/and/or/xor/max/min); the
    partials start from its neutral element (selected in their first iteration, so
    their buffer needs no fill). Sums change their order (they
    were marked reassociable); max/min and integer results are exact.

    The host's pipeline (threads on) runs it with `contiguous`, `exact`
    and `row-parts=1`: only full reductions whose result does not depend
    on the order (an amax, FP8 saturation/underflow counts; no float sum,
    so that a loss or a norm keeps its summation order), split as
    d_s = p * (n / P) + k, so that each partial reads one contiguous run
    (a thread's chunk, which LLVM vectorizes) instead of every P-th
    element.
  }];
  let options = [
    Option<"maxParts", "max-parts", "int64_t", "1024",
           "most partials of a full reduction (threads of the first level)">,
    Option<"minParts", "min-parts", "int64_t", "16",
           "fewer possible partials of a full reduction than this: not "
           "split">,
    Option<"minWork", "min-work", "int64_t", "16",
           "fewest elements a partial of a full reduction reduces">,
    Option<"maxSerial", "max-serial", "int64_t", "1024",
           "most partials left for a full reduction's last, single-thread "
           "step (more are split again)">,
    Option<"rowParts", "row-parts", "int64_t", "32",
           "most partials per output element of a reduction with parallel "
           "dimensions (32: a warp per row)">,
    Option<"minRow", "min-row", "int64_t", "256",
           "reductions with parallel dimensions over fewer elements than "
           "this: not split">,
    Option<"contiguous", "contiguous", "bool", "false",
           "a full reduction's partial p reduces elements p * n/P to "
           "(p + 1) * n/P - 1 (a CPU thread's run) instead of p, p + P, ... "
           "(a GPU warp's neighbours)">,
    Option<"exact", "exact", "bool", "false",
           "only outputs whose result does not depend on the order "
           "(max/min, integer ops): no float sums, even reassociable ones">
  ];
  let dependentDialects = [
    "::mlir::linalg::LinalgDialect", "::mlir::memref::MemRefDialect",
    "::mlir::arith::ArithDialect", "::mlir::affine::AffineDialect"
  ];
}

#endif // LPC_CONVERSION_PASSES_TD
