//===- LpcOps.td - lpc ops ------------------------------------*- tablegen -*-===//
//
// Type constraints, the model-structure ops and the GEMM here; the other
// op families in the files included below (LpcAttentionOps.td, LpcGroupedOps.td,
// LpcComputeOps.td, LpcGradOps.td, LpcPrecisionOps.td, LpcOptimizerOps.td,
// LpcCollectiveOps.td),
// in this order: one op list, one generated file. Verifiers live in
// dialects/LpcOps.cpp, folders and canonicalization patterns in
// dialects/LpcFolds.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef LPC_OPS_TD
#define LPC_OPS_TD

include "lpc/Dialect/LpcDialect.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"

//===----------------------------------------------------------------------===//
// Type constraints
//===----------------------------------------------------------------------===//

def Lpc_FloatElement : AnyTypeOf<[F32, F16, BF16, F8E4M3FN, F8E5M2]>;
def Lpc_FP8Element : AnyTypeOf<[F8E4M3FN, F8E5M2]>;
def Lpc_IntElement : AnyTypeOf<[I32, I64]>;

def Lpc_FloatTensor : RankedTensorOf<[F32, F16, BF16, F8E4M3FN, F8E5M2]>;
def Lpc_FP8Tensor : RankedTensorOf<[F8E4M3FN, F8E5M2]>;
def Lpc_WideFloatTensor : RankedTensorOf<[F32, F16, BF16]>;
def Lpc_F32Tensor : RankedTensorOf<[F32]>;
def Lpc_IntTensor : RankedTensorOf<[I32, I64]>;
def Lpc_BoolTensor : RankedTensorOf<[I1]>;
def Lpc_NumTensor : RankedTensorOf<[F32, F16, BF16, F8E4M3FN, F8E5M2, I32, I64]>;
def Lpc_Tensor : RankedTensorOf<[F32, F16, BF16, F8E4M3FN, F8E5M2, I32, I64, I1]>;
def Lpc_F32Scalar : 0DTensorOf<[F32]> {
  let builderCall = "::mlir::RankedTensorType::get({}, $_builder.getF32Type())";
}
def Lpc_StepScalar : 0DTensorOf<[I32, I64, F32]>;
def Lpc_BoolScalar : 0DTensorOf<[I1]> {
  let builderCall = "::mlir::RankedTensorType::get({}, $_builder.getI1Type())";
}

class Lpc_Op<string mnemonic, list<Trait> traits = []>
    : Op<Lpc_Dialect, mnemonic, traits>;

//===----------------------------------------------------------------------===//
// Model structure
//===----------------------------------------------------------------------===//

def Lpc_ParamOp : Lpc_Op<"param", [FixedPrecision]> {
  let summary = "a trainable parameter (FP32 master) with its initializer";
  let description = [{
    Declares a trainable parameter. `name` is unique within the function and
    names the tensor in checkpoints. The initializer takes optional values:
    `normal` uses `std` (default 1.0) and `mean` (default 0.0), `uniform`
    uses `low`/`high` (default -1, 1), `constant` uses `value`, and the
    xavier/kaiming forms use `gain` (default 1.0) with fan-in/fan-out taken
    from the first two dims as (in, out).

    ```mlir
    %w = lpc.param "fc1.weight" xavier_uniform : tensor<784x1024xf32>
    %e = lpc.param "wte" normal {std = 0.02 : f64} : tensor<256x128xf32>
    ```
  }];
  let arguments = (ins StrAttr:$name, Lpc_InitKindAttr:$init,
                   OptionalAttr<F64Attr>:$std, OptionalAttr<F64Attr>:$mean,
                   OptionalAttr<F64Attr>:$low, OptionalAttr<F64Attr>:$high,
                   OptionalAttr<F64Attr>:$value, OptionalAttr<F64Attr>:$gain);
  let results = (outs Lpc_F32Tensor:$result);
  let assemblyFormat = "$name `` $init attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Lpc_InputOp : Lpc_Op<"input", [FixedPrecision]> {
  let summary = "a data input of the model (one batch)";
  let description = [{
    `features` and `targets` are floating point; `labels` and `tokens` are
    integer. The leading dimension is the batch.

    ```mlir
    %x = lpc.input "image" features : tensor<256x784xf32>
    %y = lpc.input "label" labels : tensor<256xi32>
    ```
  }];
  let arguments = (ins StrAttr:$name, Lpc_InputKindAttr:$kind);
  let results = (outs Lpc_Tensor:$result);
  let assemblyFormat = "$name `` $kind attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Lpc_BufferOp : Lpc_Op<"buffer", [FixedPrecision]> {
  let summary = "model state that is not trained (a PyTorch buffer)";
  let description = [{
    Declares state the model keeps across steps without training it:
    BatchNorm's running mean and variance and its batch counter. `name` is
    unique among the function's parameters and buffers and names the tensor
    in checkpoints and saved weights; `value` (default 0) fills it until
    `lpc-run --init` gives it the file's entry of that name. A training step
    reads the buffer and writes the value of its `lpc.buffer_update`;
    evaluation only reads it. No gradient flows into a buffer.

    ```mlir
    %rm = lpc.buffer "bn1.running_mean" : tensor<64xf32>
    %rv = lpc.buffer "bn1.running_var" {value = 1.0 : f64} : tensor<64xf32>
    ```
  }];
  let arguments = (ins StrAttr:$name,
                   DefaultValuedAttr<F64Attr, "0.0">:$value);
  let results = (outs RankedTensorOf<[F32, I32, I64]>:$result);
  let assemblyFormat = "$name attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Lpc_BufferUpdateOp : Lpc_Op<"buffer_update", [FixedPrecision,
    MemoryEffects<[MemWrite]>]> {
  let summary = "the value a training step leaves in an lpc.buffer";
  let description = [{
    The buffer `name` of the same function holds `value` after a training
    step (BatchNorm's momentum update of its running statistics). At most
    one update per buffer; a buffer without one keeps its value. The value
    is not differentiated. Evaluation (`lpc-autodiff{eval=true}`) drops
    the update.

    ```mlir
    // %new_mean: tensor<64xf32>
    %rm = lpc.buffer "bn1.running_mean" : tensor<64xf32>
    lpc.buffer_update "bn1.running_mean", %new_mean : tensor<64xf32>
    ```
  }];
  let arguments = (ins StrAttr:$name, RankedTensorOf<[F32, I32, I64]>:$value);
  let assemblyFormat = "$name `,` $value attr-dict `:` type($value)";
  let hasVerifier = 1;
}

def Lpc_TrainOrEvalOp : Lpc_Op<"train_or_eval", [Pure, FollowPrecision,
    AllTypesMatch<["train", "eval", "result"]>]> {
  let summary = "one value in training, another in evaluation";
  let description = [{
    `train` in a training step (model.train()), `eval` in the evaluation
    function (model.eval()): BatchNorm normalizes by the batch's statistics
    in training and by its running statistics in evaluation. Only the
    chosen operand is computed and differentiated.

    ```mlir
    // %by_batch, %by_running: tensor<16x64xf32>
    %y = lpc.train_or_eval %by_batch, %by_running : tensor<16x64xf32>
    ```
  }];
  let arguments = (ins Lpc_Tensor:$train, Lpc_Tensor:$eval);
  let results = (outs Lpc_Tensor:$result);
  let assemblyFormat = "$train `,` $eval attr-dict `:` type($result)";
}

def Lpc_StopGradientOp : Lpc_Op<"stop_gradient", [Pure, FollowPrecision,
    SameOperandsAndResultType]> {
  let summary = "its input in the forward; no gradient flows through it";
  let description = [{
    PyTorch's `x.detach()` and the results of a `torch.no_grad()` block:
    the value of `input`, which lpc-autodiff treats as a constant (a
    straight-through estimator `h + (q - h).detach()`, a target computed
    from the model's own output). lpc-autodiff resolves it: the forward uses
    `input` itself and the backward sends nothing to it, so no later pass
    sees the op. It has no folder: a canonicalization before lpc-autodiff
    must not remove it.

    ```mlir
    // %q, %h: tensor<8x16xf32>
    %d = lpc.sub %q, %h : tensor<8x16xf32>
    %c = lpc.stop_gradient %d : tensor<8x16xf32>
    %y = lpc.add %h, %c : tensor<8x16xf32>   // y == q; dy/dh == 1
    ```
  }];
  let arguments = (ins Lpc_FloatTensor:$input);
  let results = (outs Lpc_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
}

def Lpc_ConstantOp : Lpc_Op<"constant", [ConstantLike, Pure, FixedPrecision]> {
  let summary = "a constant tensor";
  let description = [{
    ```mlir
    %c = lpc.constant dense<1.0> : tensor<4xf32>
    ```
  }];
  let arguments = (ins ElementsAttr:$value);
  let results = (outs Lpc_Tensor:$result);
  let hasCustomAssemblyFormat = 1;
  let hasFolder = 1;
  let hasVerifier = 1;
  let builders = [OpBuilder<(ins "::mlir::ElementsAttr":$value), [{
    build($_builder, $_state, value.getType(), value);
  }]>];
}

//===----------------------------------------------------------------------===//
// Compute: GEMM
//===----------------------------------------------------------------------===//

def Lpc_MatmulOp : Lpc_Op<"matmul", [Pure, AlwaysLowPrecision,
    InferTypeOpAdaptor]> {
  let summary = "(batched) matrix multiply with FP32 accumulation";
  let description = [{
    `lhs` is `[batch..., M, K]` (`[batch..., K, M]` with `transpose_a`),
    `rhs` is `[batch..., K, N]` (`[batch..., N, K]` with `transpose_b`) or a
    rank-2 matrix shared by every batch. Both operands have the same element
    type, the result too; products accumulate in FP32 whatever the operand
    type. `role` (fprop | dgrad | wgrad) is set by lpc-autodiff.

    ```mlir
    // %x: tensor<256x784xf32>, %w: tensor<784x1024xf32>
    %y = lpc.matmul %x, %w : tensor<256x784xf32>, tensor<784x1024xf32>
           -> tensor<256x1024xf32>
    ```
  }];
  let arguments = (ins Lpc_FloatTensor:$lhs, Lpc_FloatTensor:$rhs,
                   UnitAttr:$transpose_a, UnitAttr:$transpose_b,
                   OptionalAttr<Lpc_GemmRoleAttr>:$role);
  let results = (outs Lpc_FloatTensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)
  }];
}

//===----------------------------------------------------------------------===//
// Compute: attention (lpc.attention, lpc.attention_grad)
//===----------------------------------------------------------------------===//

include "lpc/Dialect/LpcAttentionOps.td"

//===----------------------------------------------------------------------===//
// Compute: grouped GEMMs (lpc.grouped_matmul, mixture-of-experts layers)
//===----------------------------------------------------------------------===//

include "lpc/Dialect/LpcGroupedOps.td"

include "lpc/Dialect/LpcComputeOps.td"
include "lpc/Dialect/LpcGradOps.td"
include "lpc/Dialect/LpcPrecisionOps.td"
include "lpc/Dialect/LpcOptimizerOps.td"

//===----------------------------------------------------------------------===//
// Collectives across the ranks of a data-parallel run (lpc.all_reduce)
//===----------------------------------------------------------------------===//

include "lpc/Dialect/LpcCollectiveOps.td"

#endif // LPC_OPS_TD
