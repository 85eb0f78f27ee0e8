//===- Evaluator.h - reference evaluator of lpc functions -------*- C++ -*-===//
//
// The test oracle of lpc: evaluates a func.func of lpc ops on concrete
// tensors, in double precision, rounding the result of every op to its
// result element type with round-to-nearest-even (llvm::APFloat). Every later
// pass and back end is checked against it, so it favours obvious correctness
// over speed: one small loop per op, data as row-major `double`.
//
// Numerics, op by op, are documented with each op in LpcOps.td; the choices
// that the .td leaves open are written down here:
//  - Each op computes in double and rounds its results once to their element
//    types. Ops with several steps (layernorm, softmax, losses, optimizers)
//    round only their results, never intermediate values, with one exception:
//    sgd and adamw use their rounded new buffer / moments to update the
//    parameter (what an FP32 implementation stores and reads back).
//  - matmul and scaled_matmul accumulate in double (the "FP32 accumulation"
//    reference; scaled_matmul ignores `fast_accum`).
//  - embedding_grad and the gamma/beta gradients accumulate in double.
//  - quantize is roundToFormat(f32(x * scale), fp8, saturate = true): the
//    product is rounded to f32 first, as the GPU's f32 multiply does; unscale multiplies by 1/scale computed (and rounded) in f32.
//    fp8_compute_scale and loss_scale_update compute in f32 as their
//    descriptions say (rounding each step to f32 even when roundF32 is off).
//  - dropout keeps element `i` iff dropoutUniform(seed, step, i) >= rate.
//  - Integer results (i32, i64, i1) are exact (ops move them, lpc.add adds
//    them; no wrap-around is modelled).
//  - lr_schedule during warm-up (step < warmup_steps) is base_lr * step /
//    max(1, warmup_steps) for every kind; after it `linear` is
//    min_lr + (base_lr - min_lr) * (1 - p) with p as for `cosine`.
//
//===----------------------------------------------------------------------===//

#ifndef LPC_REFERENCE_EVALUATOR_H
#define LPC_REFERENCE_EVALUATOR_H

#include "lpc/Dialect/LpcOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/LogicalResult.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace mlir {
namespace lpc {
namespace ref {

//===----------------------------------------------------------------------===//
// Element types and rounding
//===----------------------------------------------------------------------===//

enum class DType { f32, f16, bf16, f8e4m3, f8e5m2, i32, i64, i1 };

/// The DType of an MLIR element type; nullopt for types lpc does not use.
std::optional<DType> dtypeOf(mlir::Type elementType);
/// The MLIR element type of `t`.
mlir::Type mlirTypeOf(DType t, mlir::MLIRContext *ctx);
/// MLIR's spelling: "f32", "f16", "bf16", "f8E4M3FN", "f8E5M2", "i32", "i64",
/// "i1".
llvm::StringRef dtypeName(DType t);
/// Inverse of dtypeName.
std::optional<DType> parseDType(llvm::StringRef name);
bool isFloat(DType t);
/// Storage width in bits (1 for i1).
unsigned bitWidth(DType t);
/// Largest finite value of a float format (448 for f8E4M3FN).
double maxFinite(DType t);
/// APFloat's semantics of a float format (the definition of the conversions
/// below).
const llvm::fltSemantics &semanticsOf(DType t);

/// Round-to-nearest-even conversion of a double to `t` (exact reference via
/// llvm::APFloat). Out of range: inf (f16/bf16/f32/f8E5M2) or NaN (f8E4M3FN,
/// which has no inf) unless `saturate`, which clamps finite overflow to
/// +-max finite, and so does +-inf (as PTX cvt.rn.satfinite). NaN stays NaN.
/// Integer types: round to nearest (ties to even); i1: nonzero -> 1.
double roundToFormat(double v, DType t, bool saturate = false);
/// Bit pattern of roundToFormat(v, t, saturate) in the format, and back.
/// Integers: two's complement in bitWidth(t) bits.
uint64_t toBits(double v, DType t, bool saturate = false);
double fromBits(uint64_t bits, DType t);
/// Distance between neighbours of the float format `t` in the binade of
/// `v` (the subnormal spacing below the smallest normal; 2^-7 at 1.0 in
/// bf16).
double spacing(double v, DType t);

//===----------------------------------------------------------------------===//
// Tensors
//===----------------------------------------------------------------------===//

struct Tensor {
  DType dtype = DType::f32;
  std::vector<int64_t> shape;
  std::vector<double> data; // row-major; values already representable in dtype
  int64_t numElements() const;
  int64_t rank() const { return static_cast<int64_t>(shape.size()); }
  static Tensor filled(DType, llvm::ArrayRef<int64_t> shape, double value);
};

/// "tensor<2x3xf32>".
std::string typeString(const Tensor &t);

//===----------------------------------------------------------------------===//
// Evaluation
//===----------------------------------------------------------------------===//

struct EvalOptions {
  /// false: compute f32 tensors in double without rounding (for
  /// finite-difference gradient checks).
  bool roundF32 = true;
  /// false: leave every float result unrounded, the exact value that the op
  /// would round once to its element type (values outside the format's range
  /// stay out of it). The op-by-op check of compiled code measures a
  /// compiled rounding against it (lpc/Backend/OpCheck.h).
  bool roundResults = true;
  /// true: lpc.attention and lpc.attention_grad give, in place of each
  /// float result but lse, the sum of |terms| that the result's element adds
  /// up (o_ie: sum_j p_ij |v_je|; dv_je: sum_i p_ij |g_ie|; dq_ix, dk_jx:
  /// sum |scale ds_ij k_jx|, |scale ds_ij q_ix|), unrounded. Compiled bf16
  /// attention rounds p and ds to bf16 before those products, which moves
  /// each element by at most 2^-8 of that sum (lpc/Backend/OpCheck.h).
  bool attentionTermMagnitudes = false;
  /// Training step, mixed into dropout's RNG.
  uint64_t step = 0;
};

/// Values of lpc.param / lpc.input ops by name.
using Bindings = std::map<std::string, Tensor>;

/// Evaluates `fn` (lpc ops, lpc.constant, arith.constant of tensors,
/// func.return; one block) on `args` (one per function argument); emits an
/// MLIR diagnostic at the offending op's location and fails on unsupported
/// ops, missing bindings, shape or type mismatches with args or bindings,
/// out-of-range embedding ids and labels.
llvm::FailureOr<std::vector<Tensor>> evaluate(mlir::func::FuncOp fn,
                                              llvm::ArrayRef<Tensor> args,
                                              const Bindings &bindings,
                                              const EvalOptions &opts = {});

/// The uniform number in [0, 1) that decides whether dropout keeps element
/// `index` (row-major) of its input at training step `step`: element kept iff
/// dropoutUniform(...) >= rate. A 24-bit value, exact in f32:
///   h = splitmix64(splitmix64(splitmix64(seed) ^ step) ^ index)
///   u = (h >> 40) * 2^-24
/// with splitmix64(x) the finalizer of Steele et al.'s SplitMix64 (the state
/// increment 0x9e3779b97f4a7c15 added first), as in `splitmix64` below.
double dropoutUniform(uint64_t seed, uint64_t step, uint64_t index);
uint64_t splitmix64(uint64_t x);

//===----------------------------------------------------------------------===//
// Initial values and random test data
//===----------------------------------------------------------------------===//

/// An initializer with every optional value resolved (defaults as LpcOps.td).
struct InitSpec {
  mlir::lpc::InitKind kind = mlir::lpc::InitKind::zeros;
  double std = 1.0, mean = 0.0, low = -1.0, high = 1.0, value = 0.0,
         gain = 1.0;
  static InitSpec fromOp(mlir::lpc::ParamOp op);
};

/// Deterministic initial value of a parameter (dtype f32) named `name`
/// (PyTorch formulas; fan_in = dim 0, fan_out = dim 1 of an [in, out]
/// weight, each times the product of dims 2.. when rank > 2):
///   normal(mean, std); uniform(low, high); constant(value);
///   xavier_uniform: U(-b, b), b = gain * sqrt(6 / (fan_in + fan_out));
///   xavier_normal:  N(0, gain * sqrt(2 / (fan_in + fan_out)));
///   kaiming_uniform: U(-b, b), b = gain * sqrt(3 / fan_in);
///   kaiming_normal: N(0, gain / sqrt(fan_in)).
/// Random numbers come from std::mt19937_64 seeded with
/// hashName(seed, name), so that a parameter's values do not depend on the
/// order of declaration: uniform u = (rng() >> 11) * 2^-53 in [0, 1);
/// normal by Box-Muller from two uniforms, z = sqrt(-2 ln(1 - u1)) *
/// cos(2 pi u2) (one value per pair; libstdc++'s distributions are not used
/// so that other implementations can reproduce the values).
/// Computed by lpc::rt::initializeParam (lpc/Runtime/Init.h, the LLVM-free
/// runtime), so a runtime-only trainer gets the same values.
Tensor initializeParam(mlir::lpc::ParamOp op, uint64_t seed);
Tensor initializeTensor(const InitSpec &spec, llvm::StringRef name,
                        llvm::ArrayRef<int64_t> shape, uint64_t seed);

/// Random tensor for tests: normal(0, stddev) floats rounded to dtype, never
/// exactly zero nor inf/NaN (such a value is drawn again); ints uniform in
/// [0, maxInt); i1 uniform in {0, 1}.
Tensor randomTensor(DType, llvm::ArrayRef<int64_t> shape, uint64_t seed,
                    double stddev = 1.0, int64_t maxInt = 10);

/// For an integer value used (possibly through data movement) as class
/// labels or embedding ids: the number of classes or rows, so that random
/// test data stays in range.
std::optional<int64_t> integerInputBound(mlir::Value value);

/// For an integer value used (possibly through data movement) as embedding
/// ids: the fewest rows of the tables it indexes (ids must lie in
/// [0, rows); class labels may also hold an ignore index, so they are not
/// counted here).
std::optional<int64_t> embeddingIdBound(mlir::Value value);

/// splitmix64 of `seed` combined with the 64-bit FNV-1a hash of `name`.
uint64_t hashName(uint64_t seed, llvm::StringRef name);

} // namespace ref
} // namespace lpc
} // namespace mlir

#endif // LPC_REFERENCE_EVALUATOR_H
