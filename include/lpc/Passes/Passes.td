//===- Passes.td - lpc passes ---------------------------------*- tablegen -*-===//
//
// Every lpc pass is declared here (GEN_PASS_DECL / GEN_PASS_DEF), lives in
// passes/<Name>.cpp named after its flag, and has a lit test under
// test/Passes/<flag>.mlir.
//
//===----------------------------------------------------------------------===//

#ifndef LPC_PASSES_TD
#define LPC_PASSES_TD

include "mlir/Pass/PassBase.td"

def LpcModelSummary : Pass<"lpc-model-summary", "::mlir::ModuleOp"> {
  let summary = "Prints the parameters and data inputs of each model";
  let description = [{
    For every function that declares `lpc.param` or `lpc.input` ops, prints
    each parameter (name, shape, initializer, element count, FP32 bytes),
    each buffer (`lpc.buffer`, with its declared value), each data input,
    and the totals, like torchinfo's summary. The IR is left
    unchanged. With `json=true` the summary is a JSON array with one object per function.

    ```
    model @mlp
      kind   name        shape          init/kind        elements     bytes
      input  image       256x784xf32    features           200704  784.00 KiB
      param  fc1.weight  784x1024xf32   kaiming_uniform    802816    3.06 MiB
      ...
      total: 1863690 parameters (7.11 MiB as FP32 masters), ...
    ```
  }];
  let options = [
    Option<"json", "json", "bool", /*default=*/"false",
           "print JSON instead of a table">,
    Option<"outputFile", "output", "std::string", /*default=*/"\"-\"",
           "where to write the summary ('-' for stderr)">,
  ];
}

def LpcPrecisionReport : Pass<"lpc-precision-report", "::mlir::ModuleOp"> {
  let summary = "Reports the precision of every op, GEMM counts, FP8 fallbacks "
                "and memory against all-FP32";
  let description = [{
    For every function with compute ops, prints one row per compute op
    (always-low / follow / keep-fp32 class) and per GEMM: op, location (as
    the IR names it: `fc1`, `backward(fc2)` for the backward of fc2), GEMM
    role, precision class, chosen precision and the rule that chose it
    (`lpc.reason`). The chosen precision is `lpc.assigned` where
    lpc-assign-precision set it, `fp8 E4M3xE5M2` for an FP8 GEMM (the
    `lpc.fp8` formats of a matmul, or the operand types of an
    `lpc.scaled_matmul`), and the result type otherwise. Other ops (casts,
    quantization, optimizer and structure ops) are counted on one line.

    Then GEMM counts per role and precision, the GEMMs that lpc-assign-precision
    kept out of FP8 (reasons starting with `fp8 fallback` or `fp8 policy`),
    and memory in bytes under the chosen precisions and if everything were
    FP32: parameters (FP32 masters: the same), gradients (what the backward
    produced for each optimizer update, seen through lpc.cast, lpc.unscale
    and clipping), optimizer state (exp_avg, exp_avg_sq, momentum_buffer),
    FP8 state (fp8_scale, fp8_amax_history) and loss-scaler state (none in
    an FP32 run), all state arguments (the checkpoint), the largest forward
    activation (each column the largest tensor under its precisions), and
    the forward activations read by backward ops (distinct values, seen
    through casts, before fusion or rematerialization; FP8 copies count as
    FP8; data inputs and scalars are not activations).

    Works on a bare forward model, after lpc-assign-precision (types still
    f32: the assigned precision counts) and after the whole pipeline. The IR
    is left unchanged. With `json=true` the report is a JSON array with one
    object per function, with the same content.

    ```
    precision report @mlp_train_step        (examples/mlp.mlir, policy=fp8)
      op                              location        role   class       precision      reason
      lpc.matmul                      fc1             fprop  always-low  fp8 E4M3xE4M3  fp8 fprop GEMM (E4M3 x E4M3), bf16 output
      lpc.bias_add                    fc1             -      follow      bf16           follow: inputs are bf16
      ...
      lpc.matmul                      fc3             fprop  always-low  bf16           fp8 fallback to bf16: K = 1024, N = 10 not both multiples of 16
      ...
      lpc.matmul                      backward(fc2)   dgrad  always-low  fp8 E5M2xE4M3  fp8 dgrad GEMM (E5M2 x E4M3), bf16 output
      ...
      lpc.add                         optimizer       -      follow      i64
      not listed: 6 lpc.adamw, 3 lpc.constant
      GEMMs   fp32   bf16   fp16    fp8  total
      fprop      0      1      0      2      3
      dgrad      0      1      0      1      2
      wgrad      0      1      0      2      3
      total      0      3      0      5      8
      fp8 fallbacks:
        fprop lpc.matmul at fc3: fp8 fallback to bf16: K = 1024, N = 10 not both multiples of 16
        ...
      memory                                   as chosen               if all fp32
        parameters                   7454760    7.11 MiB       7454760    7.11 MiB
        gradients                    3727400    3.55 MiB       7454760    7.11 MiB
        optimizer state             14909520   14.22 MiB      14909520   14.22 MiB
        fp8 state                          0         0 B             0         0 B
        loss-scaler state                  0         0 B             0         0 B
        checkpoint state            22364288   21.33 MiB      22364288   21.33 MiB
        largest activation            524288  512.00 KiB       1048576    1.00 MiB  lpc.matmul at fc1 (256x1024xbf16)
        saved for backward           2102272    2.00 MiB       4204544    4.01 MiB
    ```
  }];
  let options = [
    Option<"json", "json", "bool", /*default=*/"false",
           "print JSON instead of a table">,
    Option<"outputFile", "output", "std::string", /*default=*/"\"-\"",
           "where to write the report ('-' for stderr)">,
  ];
}

def LpcDecomposeAttention
    : Pass<"lpc-decompose-attention", "::mlir::ModuleOp"> {
  let summary = "Writes lpc.attention as GEMMs, a mask and a softmax";
  let description = [{
    For back ends and precisions without a fused attention kernel: the
    CUDA artifact runs lpc.attention through cuDNN only in bf16 or fp16,
    without a mask, with head dims that are multiples of 8 and at most 128
    (every cuDNN 9 GPU), and with a key length that is a multiple of 128
    (cuDNN up to 9.15, CUDA 13.0's, has no backward for other lengths). Run before lpc-autodiff, it rewrites

    ```mlir
    %o, %lse = lpc.attention %q, %k, %v {causal} : ...
    ```

    as `lpc.matmul %q, %k {transpose_b}`, `lpc.scale`, `lpc.add` of the
    broadcast mask, `lpc.causal_mask`, `lpc.softmax`, `lpc.matmul` with
    `%v` (and the row logsumexp when `%lse` is used): the S x S scores
    become tensors again, the graph lpc-model's `--attention=unfused`
    writes. A row that sees no key gives NaN there (the fused op gives 0).

    With `policy=bf16` or `fp16` (or `fp8`, whose attention runs in bf16),
    attention ops cuDNN can run in that precision stay; with `policy=no`
    (the default) every one is decomposed. A user's fp32 pin
    (`lpc.precision`) decomposes that op under any policy. Causal
    attention with more queries than keys cannot be decomposed (its first
    rows see no key): an error names it.
  }];
  let dependentDialects = ["::mlir::lpc::LpcDialect"];
  let options = [
    Option<"policy", "policy", "std::string", /*default=*/"\"no\"",
           "The mixed-precision policy the graph will get: no | bf16 | "
           "fp16 | fp8; attention cuDNN can run in it stays fused">,
  ];
}

def LpcAutodiff : Pass<"lpc-autodiff", "::mlir::ModuleOp"> {
  let summary = "Builds the training step: forward, reverse-mode backward, "
                "optimizer update";
  let description = [{
    For each function that declares `lpc.param` ops and returns one scalar
    f32 loss (or the one named by `function`), adds `@<name>_train_step`
    next to it. The forward function is kept (for evaluation).

    The train step takes all state explicitly, then the data inputs:
    ```mlir
    func.func @mlp_train_step(
        %fc1.weight: tensor<784x1024xf32> {lpc.state = "param", lpc.name = "fc1.weight"},
        ...,                                 // exp_avg, exp_avg_sq (adamw) or
                                             // momentum_buffer (sgd) per param
        %bn.running_mean: tensor<64xf32> {lpc.state = "buffer",
            lpc.name = "bn.running_mean", lpc.init = 0.0}, ...  // lpc.buffer
        %step: tensor<i64> {lpc.state = "step"},
        %image: tensor<256x784xf32> {lpc.input = "image"}, ...)
      -> (new params {lpc.state = "param", lpc.name = ...}, new optimizer
          state, each updated buffer {lpc.state = "buffer", lpc.name = ...},
          new step, loss {lpc.metric = "loss"},
          and, with clipping, the grad norm {lpc.metric = "grad_norm"} )
    ```
    Result `i` with `lpc.state = S, lpc.name = N` is the next value of the
    argument with the same attributes, so a checkpoint is exactly the state
    arguments. Every matmul is tagged with its role: `fprop` in the forward
    pass; in the backward pass `wgrad` for the gradient w.r.t. a parameter
    (possibly through reshape/transpose/broadcast/cast) and `dgrad`
    otherwise. With `optimizer=none` the function is `@<name>_grad` and
    returns the loss and one gradient per parameter (for gradient checks).
    With `eval=true` it also emits `@<name>_eval`: the forward pass with the
    parameters as arguments ({lpc.state = "param"}), returning the loss
    {lpc.metric = "loss"} and, when the loss is a cross-entropy, its logits
    {lpc.metric = "logits"} (for accuracy).

    Buffers (`lpc.buffer`: BatchNorm's running statistics) are state
    arguments in both functions. The train step takes the `train` side of
    each `lpc.train_or_eval` and returns the value of each
    `lpc.buffer_update` (not differentiated); the eval function takes the
    `eval` side, as it drops dropout, and updates nothing.

    Each op has a vector-Jacobian rule; ops without one on a path from a
    parameter to the loss are reported with their location. Integer values
    (labels, token ids) and masks are not differentiated.
  }];
  let dependentDialects = ["::mlir::lpc::LpcDialect",
                           "::mlir::func::FuncDialect"];
  let options = [
    Option<"function", "function", "std::string", /*default=*/"\"\"",
           "forward function to differentiate (default: every function "
           "with lpc.param ops)">,
    Option<"optimizer", "optimizer", "std::string", /*default=*/"\"adamw\"",
           "sgd | adamw | none (gradients only)">,
    Option<"lr", "lr", "double", /*default=*/"1e-3", "base learning rate">,
    Option<"lrSchedule", "lr-schedule", "std::string",
           /*default=*/"\"constant\"",
           "constant | linear | cosine (computed from the step count) | "
           "input (an extra f32 argument {lpc.input = \"lr\"})">,
    Option<"warmupSteps", "warmup-steps", "int64_t", /*default=*/"0",
           "linear warm-up steps">,
    Option<"totalSteps", "total-steps", "int64_t", /*default=*/"0",
           "steps of the whole run (for linear/cosine decay)">,
    Option<"minLr", "min-lr", "double", /*default=*/"0.0",
           "final learning rate of linear/cosine decay">,
    Option<"beta1", "beta1", "double", /*default=*/"0.9", "AdamW beta1">,
    Option<"beta2", "beta2", "double", /*default=*/"0.999", "AdamW beta2">,
    Option<"eps", "eps", "double", /*default=*/"1e-8", "AdamW epsilon">,
    Option<"weightDecay", "weight-decay", "double", /*default=*/"0.01",
           "decoupled weight decay (AdamW) or L2 penalty (SGD)">,
    Option<"momentum", "momentum", "double", /*default=*/"0.0",
           "SGD momentum">,
    Option<"nesterov", "nesterov", "bool", /*default=*/"false",
           "SGD Nesterov momentum">,
    Option<"clipGradNorm", "clip-grad-norm", "double", /*default=*/"0.0",
           "clip gradients to this global L2 norm (0: off)">,
    Option<"emitEval", "eval", "bool", /*default=*/"false",
           "also emit @<name>_eval(params, inputs) -> (loss, logits): the "
           "forward pass with parameters as arguments, for evaluation">,
  ];
}

def LpcDataParallel : Pass<"lpc-data-parallel", "::mlir::ModuleOp"> {
  let summary = "Averages the gradients (and the loss metric) over the ranks "
                "of a data-parallel run";
  let description = [{
    On every train step that lpc-autodiff built (a function returning
    `lpc.state` results), each gradient that reaches an optimizer op
    (`lpc.adamw`, `lpc.sgd`) is averaged over the ranks with
    `lpc.all_reduce ... mean` before it; when the gradients go through
    `lpc.clip_by_global_norm`, the clip's operands are averaged instead, so
    that the clip sees the global gradients and every rank computes the
    same norm.

    Gradients travel in buckets, as PyTorch DDP's do: in the order the
    backward defines them (the last layer's first), consecutive gradients
    fill a bucket up to `bucket-mb` MiB of f32 values (a larger gradient is
    a bucket of its own; 0 puts every gradient in its own). A bucket is one
    flat tensor (`lpc.reshape` of each gradient to 1-D, one `lpc.concat`),
    one `lpc.all_reduce` placed right after its last gradient is computed,
    and `lpc.slice` + `lpc.reshape` back; these copies are pinned to fp32
    (`lpc.precision`). One collective per bucket instead of one per
    gradient: fewer latencies, and one FP8 scale per bucket.

    `comm-precision` is the all-reduce's `comm_precision`: the format the
    gradients take on the wire (fp32; bf16 or fp16, half the bytes; FP8,
    a quarter, with one power-of-two scale per bucket agreed by every rank;
    `fp8` is E4M3, whose extra mantissa bit suits a range the scale
    already fits). The result with `{lpc.metric = "loss"}` is averaged in
    fp32, so that every rank (and rank 0, which reports) holds the global
    loss. Run it after lpc-autodiff and before lpc-mixed-precision.

    One process is one rank, where `lpc.all_reduce` gives its input back:
    the step computes what it did without the pass.

    Before:
    ```mlir
    %c:3 = lpc.clip_by_global_norm %gw, %gb {max_norm = 1.0 : f64} : ...
    %p1, %m1 = lpc.sgd %w, %c#0, %mw lr(%lr) : tensor<4x8xf32>
    return ..., %loss : ..., tensor<f32>   // {lpc.metric = "loss"}
    ```
    After (`bucket-mb=25 comm-precision=bf16`; %gb defined after %gw):
    ```mlir
    %fw = lpc.reshape %gw {lpc.precision = #lpc.precision<fp32>}
        : tensor<4x8xf32> -> tensor<32xf32>
    %fb = lpc.reshape %gb {...} : tensor<8xf32> -> tensor<8xf32>
    %all = lpc.concat %fw, %fb axis = 0 {...} : ... -> tensor<40xf32>
    %m = lpc.all_reduce %all mean {comm_precision = #lpc.precision<bf16>}
        : tensor<40xf32> -> tensor<40xf32>
    %sw = lpc.slice %m start = [0] limit = [32] step = [1] {...} ...
    %rw = lpc.reshape %sw {...} : tensor<32xf32> -> tensor<4x8xf32>
    ... %rb likewise from [32, 40)
    %c:3 = lpc.clip_by_global_norm %rw, %rb {max_norm = 1.0 : f64} : ...
    %p1, %m1 = lpc.sgd %w, %c#0, %mw lr(%lr) : tensor<4x8xf32>
    %l = lpc.all_reduce %loss mean : tensor<f32> -> tensor<f32>
    return ..., %l : ..., tensor<f32>
    ```
    A gradient that is already the result of an `lpc.all_reduce` is left
    alone, so the pass may run twice.

    `zero=1 ranks=N` shards the optimizer (ZeRO stage 1). Each parameter's
    elements, flattened and padded with zeros to a multiple of N, are split
    into N equal blocks; rank r updates block r of every parameter and
    holds only that block of its optimizer state (the state arguments and
    results become `tensor<Kxf32>`, K = ceil(elements / N), marked
    `{lpc.shard_of = array<i64: ...>, lpc.shard_ranks = N}` with the
    parameter's shape, which `lpc-run` uses to gather whole tensors into
    checkpoints and to cut a checkpoint's tensors for any rank count). A
    bucket's gradients travel as one `[N, sum K]` tensor, each gradient's
    blocks as a column range, through one `lpc.reduce_scatter ... mean`
    (in `comm-precision`): rank r receives block r of each gradient. The
    parameter blocks come from `lpc.shard` (local), the updated blocks go
    back to every rank through one `lpc.all_gather` per bucket, in fp32
    (the parameters are the FP32 master weights: a narrow wire would round
    them every step). Same results as zero=0 where the reduction order is
    the same: the reduce-scatter adds in rank order as the all-reduce does.
    Under `lpc.clip_by_global_norm` each rank adds the squares of its
    blocks, an `lpc.all_reduce ... sum` adds the ranks' sums, and
    `sqrt(total - mine)` joins the rank's blocks as one more operand of a
    clip over the blocks: every block is scaled by the global factor.
  }];
  let options = [
    Option<"bucketMb", "bucket-mb", "double", /*default=*/"25.0",
           "gradient bucket size in MiB of f32 values (0: one collective per "
           "gradient)">,
    Option<"commPrecision", "comm-precision", "std::string",
           /*default=*/"\"fp32\"",
           "format of the gradients on the wire: fp32, bf16, fp16, fp8_e4m3, "
           "fp8_e5m2 or fp8 (= fp8_e4m3)">,
    Option<"zero", "zero", "int64_t", /*default=*/"0",
           "ZeRO stage: 0 (every rank updates every parameter) or 1 (each "
           "rank updates, and holds the optimizer state of, 1/ranks of each "
           "parameter)">,
    Option<"ranks", "ranks", "int64_t", /*default=*/"1",
           "with zero=1: the number of ranks the step is built for">,
  ];
  let dependentDialects = ["::mlir::lpc::LpcDialect"];
}

def LpcAssignPrecision : Pass<"lpc-assign-precision", "::mlir::ModuleOp"> {
  let summary = "Chooses a precision for every lpc compute op and records why";
  let description = [{
    Paints each lpc compute op with `lpc.assigned = #lpc.precision<..>` and
    `lpc.reason = "..."` (the rule that decided), from the policy, the op's
    precision class (declared in ODS) and the user's pins:

    - `always-low` (matmul): the policy's low type (bf16 / fp16; bf16 under
      fp8), FP32 accumulation. Under `policy=fp8`, a matmul of a linear layer
      (one operand is a parameter, or a weight-gradient GEMM) also gets
      `lpc.fp8 = [lhs, rhs]` formats: E4M3 for activations and weights, E5M2
      for gradients with `fp8-format=hybrid` (never E5M2 x E5M2). It stays
      bf16, with the reason recorded, when its role is listed in
      `override-linear-precision`, when K or N is not a multiple of 16, or
      when M*N*K < `fp8-min-mnk` (FP8 does not pay for small GEMMs).
    - `keep-fp32` (exp, log, pow, rsqrt, softmax, norms, reductions, losses):
      fp32. With bf16 (and fp8) policies, sum/mean may follow bf16 inputs
      (`relax-bf16-reductions`): bf16 has FP32's exponent range.
    - `follow` (add, mul, activations, data movement...): fp32 when any
      computed input is fp32 (deny spreads forward, as TensorFlow's AMP
      painter), the low type when its computed inputs are low, fp32 when no
      input is computed (parameters, data and constants do not vote).
    - A user pin `lpc.precision = #lpc.precision<..>` wins, except that
      losses never run below fp32.

    With `policy=no` every op is fp32. The IR is otherwise unchanged:
    lpc-insert-casts materializes the decisions.
  }];
  let dependentDialects = ["::mlir::lpc::LpcDialect"];
  let options = [
    Option<"policy", "policy", "std::string", /*default=*/"\"bf16\"",
           "no | fp16 | bf16 | fp8 (as Accelerate's mixed_precision)">,
    ListOption<"alwaysLowOps", "always-low", "std::string",
               "op names to treat as always-low (e.g. lpc.gelu)">,
    ListOption<"keepFP32Ops", "keep-fp32", "std::string",
               "op names to keep in fp32">,
    ListOption<"followOps", "follow", "std::string",
               "op names that follow their inputs">,
    Option<"relaxBF16Reductions", "relax-bf16-reductions", "bool",
           /*default=*/"true",
           "let sum/mean follow bf16 inputs under bf16/fp8 policies">,
    Option<"fp8Format", "fp8-format", "std::string",
           /*default=*/"\"hybrid\"",
           "hybrid (E4M3 forward, E5M2 gradients) | e4m3">,
    ListOption<"overrideLinearPrecision", "override-linear-precision",
               "std::string",
               "GEMM roles (fprop, dgrad, wgrad) of linear layers to run in "
               "bf16 instead of fp8">,
    Option<"fp8MinMNK", "fp8-min-mnk", "int64_t", /*default=*/"2097152",
           "smallest M*N*K run in fp8 (default 128^3); smaller GEMMs run "
           "in bf16">,
  ];
}

def LpcInsertCasts : Pass<"lpc-insert-casts", "::mlir::ModuleOp"> {
  let summary = "Materializes the assigned precisions with lpc.cast";
  let description = [{
    For every op with `lpc.assigned = P`: its float operands are cast to P
    and its float results get P's element type (losses keep their f32
    result; the FP8 GEMMs chosen by lpc-assign-precision are left unchanged
    for lpc-fp8-scaling, which quantizes their operands as they are). Every other op
    (optimizer, precision and structure ops, func.return) gets each float
    operand back in the type it had before, so FP32 masters, optimizer state
    and the returned values keep their types.

    One cast per (value, type): a value needed in bf16 by five ops is cast
    once. A value is never cast back and forth: a cast of a cast that the
    first one made exact folds (run -canonicalize after, as the
    lpc-mixed-precision pipeline does).

    ```mlir
    %h = lpc.matmul %x, %w {lpc.assigned = #lpc.precision<bf16>, ...}
           : tensor<8x4xf32>, tensor<4x4xf32> -> tensor<8x4xf32>
    // becomes
    %xc = lpc.cast %x : tensor<8x4xf32> to tensor<8x4xbf16>
    %wc = lpc.cast %w : tensor<4x4xf32> to tensor<4x4xbf16>
    %h = lpc.matmul %xc, %wc {...} : ..., ... -> tensor<8x4xbf16>
    ```
  }];
  let dependentDialects = ["::mlir::lpc::LpcDialect"];
}

def LpcFP8Scaling : Pass<"lpc-fp8-scaling", "::mlir::ModuleOp"> {
  let summary = "Turns the chosen FP8 GEMMs into scaled FP8 GEMMs with "
                "Transformer Engine's scaling recipes";
  let description = [{
    Every lpc.matmul that lpc-assign-precision marked with `lpc.fp8 = [lhs,
    rhs]` becomes an `lpc.scaled_matmul` of quantized operands:

    ```mlir
    %y = lpc.matmul %x, %w {lpc.fp8 = [#lpc.precision<fp8_e4m3>,
                                       #lpc.precision<fp8_e4m3>], ...}
    // becomes, with delayed scaling, per FP8 tensor (here %x):
    %a = lpc.amax %x
    %h1, %sa = lpc.amax_history_push %hist, %a {algo = #lpc.amax_algo<max>}
    %qx = lpc.quantize %x, %scale : ... to tensor<..xf8E4M3FN>
    %sx = lpc.div %one, %scale          // scale_inv
    %s1 = lpc.fp8_compute_scale %sa, %scale, %step {format = ..., margin}
    %y = lpc.scaled_matmul %qx, %qw scales(%sx, %sw) {fast_accum, role}
    ```

    Delayed scaling (train steps, which have a `step` state argument):
    each FP8 tensor gets two state arguments and results,
    `{lpc.state = "fp8_scale", lpc.name = N, lpc.init = 1.0}` and
    `{lpc.state = "fp8_amax_history", lpc.name = N}`: the step quantizes with
    the scale from earlier steps, records its amax, and returns the next
    scale. N is the parameter's name for weights, `<weight>.input` for the
    activation of a linear layer and `<weight>.grad_output` for its output
    gradient; a tensor used by several GEMMs (the weight in fprop and dgrad,
    the input in fprop and wgrad, the output gradient in dgrad and wgrad)
    has one state and one amax, and is quantized once per shape.
    Current scaling (`scaling=current`, and functions without a step, such
    as the forward model used for evaluation): the scale comes from the
    amax of the tensor itself, no state.

    Fast accumulation is used for the roles in `fast-accum` (default fprop:
    dgrad and wgrad accumulate with promotion, as Transformer Engine and
    torchao do).
  }];
  let dependentDialects = ["::mlir::lpc::LpcDialect"];
  let options = [
    Option<"scaling", "scaling", "std::string", /*default=*/"\"delayed\"",
           "delayed | current">,
    Option<"margin", "margin", "int64_t", /*default=*/"0",
           "scale = (fp8_max / amax) / 2^margin">,
    Option<"interval", "interval", "int64_t", /*default=*/"1",
           "recompute scales every this many steps">,
    Option<"amaxHistoryLen", "amax-history-len", "int64_t",
           /*default=*/"1024", "length of each amax history">,
    Option<"amaxComputeAlgo", "amax-compute-algo", "std::string",
           /*default=*/"\"max\"", "max | most_recent">,
    ListOption<"fastAccum", "fast-accum", "std::string",
               "GEMM roles that use fast accumulation (default: fprop)">,
    Option<"reduceAmax", "reduce-amax", "bool", /*default=*/"false",
           "in train steps (functions with a step state), each amax is "
           "reduced with max over the ranks of a data-parallel run "
           "(lpc.all_reduce max) before it enters the history or a scale, "
           "so that every rank holds the same scales (Transformer Engine's "
           "amax reduction): with delayed scaling all of a step's amaxes in "
           "one collective at the end of the step (nothing else reads them "
           "there), with current scaling one per tensor; a parameter's amax "
           "is not reduced (every rank holds the same parameters); other "
           "functions (evaluation, which one rank runs alone) are left as "
           "they are">,
  ];
}

def LpcLossScaling : Pass<"lpc-loss-scaling", "::mlir::ModuleOp"> {
  let summary = "Loss scaling for FP16 training (PyTorch GradScaler)";
  let description = [{
    Applies to every train step built by lpc-autodiff: a function with a
    backward seed (`lpc.grad_seed`) and optimizer
    ops (`lpc.adamw`, `lpc.sgd`). The loss itself (and its metric) is
    unchanged: only the seed of the backward pass is multiplied by the
    scale, so every gradient is scaled. Gradients are unscaled (`lpc.unscale`,
    f32) right where the step consumes them: the operands of
    `lpc.clip_by_global_norm` (so the norm and the clipping see true
    gradients), else the `grad` operand of each optimizer op. Gradients that
    reach the optimizer through `lpc.cast` (lpc-insert-casts) are unscaled
    after the cast, in f32.

    `mode=dynamic` (default; torch.cuda.amp.GradScaler):

    ```mlir
    func.func @mlp_train_step(%w: tensor<4x4xf32> {lpc.state = "param", ...},
        ..., %step: tensor<i64> {lpc.state = "step"},
        %x: tensor<8x4xf32> {lpc.input = "x"}) -> (...) {
      %seed = lpc.grad_seed : tensor<f32>
      ... backward uses %seed ...
      %p, %m, %v = lpc.adamw %w, %g, %m0, %v0 step(%t1 : tensor<i64>) lr(%lr)
      return %p, %m, %v, %t1, %loss
    }
    // becomes
    func.func @mlp_train_step(%w: ..., %step: tensor<i64> {lpc.state = "step"},
        %S: tensor<f32> {lpc.state = "loss_scale", lpc.init = 65536.0 : f64},
        %T: tensor<i64> {lpc.state = "loss_scale_growth_tracker"},
        %x: tensor<8x4xf32> {lpc.input = "x"})
        -> (..., step, new %S {lpc.state = "loss_scale"},
            new %T {lpc.state = "loss_scale_growth_tracker"},
            loss {lpc.metric = "loss"}, %S {lpc.metric = "loss_scale"},
            skipped {lpc.metric = "skipped"} : tensor<i1>) {
      %seed = lpc.grad_seed : tensor<f32>
      %sseed = lpc.loss_scale %seed, %S : tensor<f32>
      ... backward uses %sseed ...
      %u = lpc.unscale %g, %S : tensor<4x4xf32>
      %p, %m, %v = lpc.adamw %w, %u, %m0, %v0 step(%t1 : tensor<i64>) lr(%lr)
      %ok = lpc.all_finite %u, ... : tensor<4x4xf32>, ...
      %okb = lpc.broadcast %ok dims = [] : tensor<i1> -> tensor<4x4xi1>
      %p1 = lpc.where %okb, %p, %w : tensor<4x4xi1>, tensor<4x4xf32>
      ... (%m, %v likewise) ...
      %t2 = lpc.where %ok, %t1, %step : tensor<i1>, tensor<i64>
      %S1, %T1 = lpc.loss_scale_update %S, %T, %ok {backoff_factor = 0.5,
                   growth_factor = 2.0, growth_interval = 2000} : tensor<i64>
      %skipped = lpc.where %ok, %false, %true : tensor<i1>, tensor<i1>
      return %p1, %m1, %v1, %t2, %S1, %T1, %loss, %S, %skipped
    }
    ```

    The new state arguments come after the existing ones (before the first
    `lpc.input`), their results before the metrics. `lpc.all_finite` covers
    every unscaled gradient. When a gradient is not finite the step is
    skipped, as GradScaler skips `optimizer.step()`: every optimizer result
    (parameter, moments, momentum buffer) keeps its old value and the
    `step` state does not advance (so AdamW's bias correction and the
    learning-rate schedule count applied updates only). The optimizer ops
    still read `step + 1`. The scale is then backed off or grown by
    `lpc.loss_scale_update`. Metrics: `loss_scale` (the scale used by this
    step) and `skipped` (true when the update was skipped).

    `mode=static`: the seed is multiplied by the constant `static-scale` and
    the gradients unscaled by it; no state, no finiteness check, no skipping,
    no extra metrics (an overflow reaches the weights, as with a static
    scale in Apex or Megatron). `mode=off`: the IR is not changed.

    Gradient functions (`@<name>_grad` of `lpc-autodiff optimizer=none`,
    which return {lpc.state = "grad"} results) have no state: their seed is
    scaled by a constant (init-scale, or static-scale in static mode) and
    the returned gradients are unscaled. Forward models are left alone.
    Errors (at the op's location): a
    function with optimizer ops but no seed (loss scaling cannot scale the
    gradients without it; run lpc-autodiff to build train steps), a
    function with more than one seed, and a train step whose body is not a
    single block ending in `func.return`. The seed is its own op
    (`lpc.grad_seed`), so `-canonicalize` never merges it with another 1.0
    and the pass can run anywhere after lpc-autodiff.

    Idempotent: a function that already contains `lpc.loss_scale` or
    `lpc.unscale`, or has a `loss_scale` state argument, has been scaled
    already and is left unchanged, so running the pass twice never scales
    twice (whatever the options of the second run).
  }];
  let dependentDialects = ["::mlir::lpc::LpcDialect"];
  let options = [
    Option<"mode", "mode", "std::string", /*default=*/"\"dynamic\"",
           "dynamic | static | off">,
    Option<"initScale", "init-scale", "double", /*default=*/"65536.0",
           "dynamic: initial scale (lpc.init of the loss_scale state)">,
    Option<"growthFactor", "growth-factor", "double", /*default=*/"2.0",
           "dynamic: scale multiplier after growth-interval clean steps "
           "(> 1)">,
    Option<"backoffFactor", "backoff-factor", "double", /*default=*/"0.5",
           "dynamic: scale multiplier after a step with inf/NaN gradients "
           "(in (0, 1))">,
    Option<"growthInterval", "growth-interval", "int64_t",
           /*default=*/"2000",
           "dynamic: consecutive finite steps before the scale grows (>= 1)">,
    Option<"staticScale", "static-scale", "double", /*default=*/"1024.0",
           "static: the constant loss scale (default 2^10: with no skipping "
           "an overflow corrupts the weights, so the default is well below "
           "dynamic's initial 2^16; use a power of two, which scales and "
           "unscales exactly)">,
  ];
}

#endif // LPC_PASSES_TD
