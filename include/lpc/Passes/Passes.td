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

#endif // LPC_PASSES_TD
