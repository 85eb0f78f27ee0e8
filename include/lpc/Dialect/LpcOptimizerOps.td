//===- LpcOptimizerOps.td - optimizer ops ------------------*- tablegen -*-===//
//
// Included by LpcOps.td (one op list, one generated file); verifiers in
// dialects/LpcOps.cpp, folders in dialects/LpcFolds.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef LPC_OPTIMIZER_OPS_TD
#define LPC_OPTIMIZER_OPS_TD

//===----------------------------------------------------------------------===//
// Optimizer ops
//===----------------------------------------------------------------------===//

def Lpc_SgdOp : Lpc_Op<"sgd", [Pure, FixedPrecision,
    AllTypesMatch<["param", "grad", "momentum_buffer", "new_param",
                   "new_momentum_buffer"]>]> {
  let summary = "SGD update with momentum (PyTorch semantics)";
  let description = [{
    `g = grad + weight_decay * p; buf = momentum * buf + (1 - dampening) * g;
    g = nesterov ? g + momentum * buf : buf; p = p - lr * g`. With
    `momentum = 0` the buffer passes through unchanged. The buffer starts
    at zero, so the first step matches PyTorch (which starts it at `g`)
    when dampening is 0, lpc-autodiff's setting.

    ```mlir
    // %p, %g, %buf: tensor<4x8xf32>, %lr: tensor<f32>
    %p1, %buf1 = lpc.sgd %p, %g, %buf lr(%lr) {momentum = 0.9 : f64} : tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Lpc_F32Tensor:$param, Lpc_F32Tensor:$grad,
                   Lpc_F32Tensor:$momentum_buffer, Lpc_F32Scalar:$lr,
                   DefaultValuedAttr<F64Attr, "0.0">:$momentum,
                   DefaultValuedAttr<F64Attr, "0.0">:$dampening,
                   DefaultValuedAttr<F64Attr, "0.0">:$weight_decay,
                   UnitAttr:$nesterov);
  let results = (outs Lpc_F32Tensor:$new_param,
                      Lpc_F32Tensor:$new_momentum_buffer);
  let assemblyFormat = [{
    $param `,` $grad `,` $momentum_buffer `lr` `(` $lr `)` attr-dict
    `:` type($param)
  }];
  let hasVerifier = 1;
}

def Lpc_AdamWOp : Lpc_Op<"adamw", [Pure, FixedPrecision,
    AllTypesMatch<["param", "grad", "exp_avg", "exp_avg_sq", "new_param",
                   "new_exp_avg", "new_exp_avg_sq"]>]> {
  let summary = "AdamW update: bias correction, decoupled weight decay";
  let description = [{
    PyTorch's AdamW with step `t` (the step count after this update, >= 1):
    `p = p * (1 - lr * wd); m = b1 m + (1 - b1) g; v = b2 v + (1 - b2) g^2;
    p = p - lr * (m / (1 - b1^t)) / (sqrt(v / (1 - b2^t)) + eps)`.

    ```mlir
    // %p, %g, %m, %v: tensor<4x8xf32>, %step: tensor<i64>, %lr: tensor<f32>
    %p1, %m1, %v1 = lpc.adamw %p, %g, %m, %v step(%step : tensor<i64>) lr(%lr)
        {weight_decay = 0.1 : f64} : tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Lpc_F32Tensor:$param, Lpc_F32Tensor:$grad,
                   Lpc_F32Tensor:$exp_avg, Lpc_F32Tensor:$exp_avg_sq,
                   Lpc_StepScalar:$step, Lpc_F32Scalar:$lr,
                   DefaultValuedAttr<F64Attr, "0.9">:$beta1,
                   DefaultValuedAttr<F64Attr, "0.999">:$beta2,
                   DefaultValuedAttr<F64Attr, "1e-8">:$eps,
                   DefaultValuedAttr<F64Attr, "0.01">:$weight_decay);
  let results = (outs Lpc_F32Tensor:$new_param, Lpc_F32Tensor:$new_exp_avg,
                      Lpc_F32Tensor:$new_exp_avg_sq);
  let assemblyFormat = [{
    $param `,` $grad `,` $exp_avg `,` $exp_avg_sq `step` `(` $step `:`
    type($step) `)` `lr` `(` $lr `)` attr-dict `:` type($param)
  }];
  let hasVerifier = 1;
}

def Lpc_LrScheduleOp : Lpc_Op<"lr_schedule", [Pure, FixedPrecision]> {
  let summary = "learning rate at a step (0-based count of finished updates)";
  let description = [{
    With `f = step / max(1, warmup_steps)` during warm-up (as Hugging Face's
    schedules: the first update of a warm-up runs with lr 0):
    - `constant`: `base_lr` (times `f` during warm-up);
    - `linear`: warm-up, then linear decay to `min_lr` at `total_steps`;
    - `cosine`: warm-up, then `min_lr + (base_lr - min_lr) * 0.5 *
      (1 + cos(pi * p))` with `p = (step - warmup) / max(1, total - warmup)`
      clamped to [0, 1].

    ```mlir
    // %step: tensor<i64>
    %lr = lpc.lr_schedule %step cosine {base_lr = 1.0e-3 : f64, warmup_steps = 10 : i64,
        total_steps = 100 : i64, min_lr = 1.0e-5 : f64} : tensor<i64>
    ```
  }];
  let arguments = (ins 0DTensorOf<[I32, I64]>:$step,
                   Lpc_LrScheduleKindAttr:$kind, F64Attr:$base_lr,
                   DefaultValuedAttr<I64Attr, "0">:$warmup_steps,
                   DefaultValuedAttr<I64Attr, "0">:$total_steps,
                   DefaultValuedAttr<F64Attr, "0.0">:$min_lr);
  let results = (outs Lpc_F32Scalar:$lr);
  let assemblyFormat = "$step `` $kind attr-dict `:` type($step)";
  let hasVerifier = 1;
}

def Lpc_ClipByGlobalNormOp : Lpc_Op<"clip_by_global_norm", [Pure,
    FixedPrecision, InferTypeOpAdaptor]> {
  let summary = "scales gradients so that their global L2 norm <= max_norm";
  let description = [{
    As torch.nn.utils.clip_grad_norm_: `norm = sqrt(sum_i |g_i|^2)`,
    `g_i *= min(1, max_norm / (norm + 1e-6))`. Also returns the norm
    (before clipping).

    ```mlir
    // %gw: tensor<4x8xf32>, %gb: tensor<8xf32>
    %cw, %cb, %norm = lpc.clip_by_global_norm %gw, %gb {max_norm = 1.0 : f64}
        : tensor<4x8xf32>, tensor<8xf32>
    ```
  }];
  let arguments = (ins Variadic<Lpc_F32Tensor>:$grads, F64Attr:$max_norm);
  let results = (outs Variadic<Lpc_F32Tensor>:$clipped, Lpc_F32Scalar:$norm);
  let assemblyFormat = "$grads attr-dict `:` type($grads)";
  let hasVerifier = 1;
}

#endif // LPC_OPTIMIZER_OPS_TD
