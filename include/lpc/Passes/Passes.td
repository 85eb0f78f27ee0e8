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
    each data input, and the totals, like torchinfo's summary. The IR is left
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
        %step: tensor<i64> {lpc.state = "step"},
        %image: tensor<256x784xf32> {lpc.input = "image"}, ...)
      -> (new params {lpc.state = "param", lpc.name = ...}, new optimizer
          state, new step, loss {lpc.metric = "loss"},
          and, with clipping, the grad norm {lpc.metric = "grad_norm"} )
    ```
    Result `i` with `lpc.state = S, lpc.name = N` is the next value of the
    argument with the same attributes, so a checkpoint is exactly the state
    arguments. Every matmul is tagged with its role: `fprop` in the forward
    pass; in the backward pass `wgrad` for the gradient w.r.t. a parameter
    (possibly through reshape/transpose/broadcast/cast) and `dgrad`
    otherwise. With `optimizer=none` the function is `@<name>_grad` and
    returns the loss and one gradient per parameter (for gradient checks).

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
  ];
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
    result; the FP8 GEMMs chosen by lpc-assign-precision keep their operands
    for lpc-fp8-scaling to quantize and get a bf16 result). Every other op
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

#endif // LPC_PASSES_TD
