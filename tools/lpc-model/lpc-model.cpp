//===- lpc-model.cpp - emits lpc-dialect models ---------------------------===//
//
// Builds a training model (the forward pass and its scalar loss) in the lpc
// dialect with OpBuilder and prints it:
//
//   lpc-model mlp [--input=784] [--hidden=1024,1024] [--classes=10] ...
//   lpc-model gpt [--layers=2] [--d-model=128] [--heads=4] ...
//
// The output starts with a comment that gives the exact command (every
// option spelled out) that regenerates it, so the checked-in examples can be
// reproduced byte for byte. Every op carries a NameLoc naming its layer
// ("fc1", "h.0.attn", ...), printed with the IR, so that diagnostics from
// later passes name the layer. The module is verified before it is printed
// and written atomically (temporary file + rename): a failed run never leaves
// a half-written or clobbered output file.
//
//===----------------------------------------------------------------------===//

#include "lpc/Dialect/LpcDialect.h"
#include "lpc/Dialect/LpcOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Location.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

using namespace mlir;
using namespace mlir::lpc;
namespace cl = llvm::cl;

//===----------------------------------------------------------------------===//
// Command line
//===----------------------------------------------------------------------===//

namespace {

enum class Activation { gelu, relu, silu, tanh };
enum class HeadKind { tied, untied };
enum class NormKind { layernorm, rmsnorm };
enum class AttentionKind { unfused, fused };

cl::OptionCategory outputCat("Output options");
cl::OptionCategory mlpCat("MLP options");
cl::OptionCategory gptCat("GPT options");

cl::SubCommand mlpCmd(
    "mlp",
    "MLP classifier: x -> [matmul + bias_add + activation] per hidden layer "
    "-> matmul + bias_add -> softmax_cross_entropy with the labels");
cl::SubCommand gptCmd(
    "gpt",
    "GPT-2 style decoder-only transformer language model (pre-layernorm, "
    "causal self-attention, next-token softmax_cross_entropy)");

// Sizes are read as int64_t and checked by hand, so that a negative or zero
// value gets an error naming the option rather than a parser message.
using SizeOpt = cl::opt<int64_t>;

cl::opt<std::string> outputFile(
    "o", cl::desc("Output file; '-' (the default) writes to stdout. The file "
                  "is replaced atomically and only when the run succeeds"),
    cl::value_desc("file"), cl::init("-"), cl::sub(mlpCmd), cl::sub(gptCmd),
    cl::cat(outputCat));

// --- mlp ---------------------------------------------------------------------

SizeOpt mlpInput("input",
                 cl::desc("Number of input features per sample (the 'image' "
                          "input is [batch, input] f32)"),
                 cl::value_desc("n"), cl::init(784), cl::sub(mlpCmd),
                 cl::cat(mlpCat));
cl::opt<std::string> mlpHidden(
    "hidden",
    cl::desc("Comma-separated widths of the hidden layers, one linear layer "
             "+ activation each (empty: no hidden layer, i.e. a linear "
             "classifier)"),
    cl::value_desc("w1,w2,..."), cl::init("1024,1024"), cl::sub(mlpCmd),
    cl::cat(mlpCat));
SizeOpt mlpClasses("classes",
                   cl::desc("Number of classes (width of the output layer; "
                            "the 'label' input holds class ids 0..classes-1)"),
                   cl::value_desc("n"), cl::init(10), cl::sub(mlpCmd),
                   cl::cat(mlpCat));
SizeOpt mlpBatch("batch", cl::desc("Batch size (leading dim of the inputs)"),
                 cl::value_desc("n"), cl::init(256), cl::sub(mlpCmd),
                 cl::cat(mlpCat));
cl::opt<Activation> mlpActivation(
    "activation", cl::desc("Activation after each hidden layer"),
    cl::values(clEnumValN(Activation::gelu, "gelu", "GELU (see --gelu)"),
               clEnumValN(Activation::relu, "relu", "max(x, 0)"),
               clEnumValN(Activation::silu, "silu", "x * sigmoid(x)"),
               clEnumValN(Activation::tanh, "tanh", "tanh(x)")),
    cl::init(Activation::gelu), cl::sub(mlpCmd), cl::cat(mlpCat));
cl::opt<GeluApproximation> mlpGelu(
    "gelu", cl::desc("GELU form (only with --activation=gelu)"),
    cl::values(clEnumValN(GeluApproximation::erf, "erf",
                          "exact, 0.5 x (1 + erf(x / sqrt(2)))"),
               clEnumValN(GeluApproximation::tanh, "tanh",
                          "tanh approximation (GPT-2's)")),
    cl::init(GeluApproximation::erf), cl::sub(mlpCmd), cl::cat(mlpCat));

// --- gpt ---------------------------------------------------------------------

SizeOpt gptLayers("layers",
                  cl::desc("Number of transformer blocks (at most 4096)"),
                  cl::value_desc("n"), cl::init(2), cl::sub(gptCmd),
                  cl::cat(gptCat));
SizeOpt gptDModel("d-model",
                  cl::desc("Model (embedding) width; must be divisible by "
                           "--heads"),
                  cl::value_desc("n"), cl::init(128), cl::sub(gptCmd),
                  cl::cat(gptCat));
SizeOpt gptHeads("heads",
                 cl::desc("Attention heads per block (head dim = d-model / "
                          "heads)"),
                 cl::value_desc("n"), cl::init(4), cl::sub(gptCmd),
                 cl::cat(gptCat));
SizeOpt gptSeq("seq",
               cl::desc("Sequence length (context); also the number of rows "
                        "of the learned position embedding 'wpe'"),
               cl::value_desc("n"), cl::init(64), cl::sub(gptCmd),
               cl::cat(gptCat));
SizeOpt gptVocab("vocab",
                 cl::desc("Vocabulary size (256: byte-level tokens)"),
                 cl::value_desc("n"), cl::init(256), cl::sub(gptCmd),
                 cl::cat(gptCat));
SizeOpt gptBatch("batch",
                 cl::desc("Batch size (sequences per step; the 'tokens' and "
                          "'targets' inputs are [batch, seq] i32)"),
                 cl::value_desc("n"), cl::init(16), cl::sub(gptCmd),
                 cl::cat(gptCat));
SizeOpt gptMlpRatio("mlp-ratio",
                    cl::desc("Width of the MLP hidden layer as a multiple of "
                             "d-model"),
                    cl::value_desc("n"), cl::init(4), cl::sub(gptCmd),
                    cl::cat(gptCat));
// cl::sub must come before cl::values: the value names of an option without
// a name (--tied, --untied) are registered as the values are added.
cl::opt<HeadKind> gptHead(
    cl::sub(gptCmd), cl::desc("Output head:"),
    cl::values(clEnumValN(HeadKind::tied, "tied",
                          "logits = x * wte^T, sharing the token embedding "
                          "(default)"),
               clEnumValN(HeadKind::untied, "untied",
                          "separate 'lm_head.weight' [d-model, vocab]")),
    cl::init(HeadKind::tied), cl::cat(gptCat));
cl::opt<double> gptDropout(
    "dropout",
    cl::desc("Dropout rate in [0, 1) on the embeddings, the attention "
             "probabilities and both residual branches (0: no dropout ops)"),
    cl::value_desc("rate"), cl::init(0.0), cl::sub(gptCmd), cl::cat(gptCat));
cl::opt<NormKind> gptNorm(
    "norm", cl::desc("Normalization before each sub-layer and at the end"),
    cl::values(clEnumValN(NormKind::layernorm, "layernorm",
                          "LayerNorm with weight and bias (GPT-2)"),
               clEnumValN(NormKind::rmsnorm, "rmsnorm",
                          "RMSNorm with a weight only (LLaMA)")),
    cl::init(NormKind::layernorm), cl::sub(gptCmd), cl::cat(gptCat));
cl::opt<AttentionKind> gptAttention(
    "attention", cl::desc("How causal self-attention is written"),
    cl::values(clEnumValN(AttentionKind::unfused, "unfused",
                          "matmul, scale, causal_mask, softmax, matmul: the "
                          "S x S scores are tensors (default)"),
               clEnumValN(AttentionKind::fused, "fused",
                          "one lpc.attention {causal} per block (flash "
                          "attention; no dropout on the probabilities)")),
    cl::init(AttentionKind::unfused), cl::sub(gptCmd), cl::cat(gptCat));

constexpr const char *kOverview = R"(lpc-model: emits lpc-dialect training models

  lpc-model mlp [options] [-o FILE]
  lpc-model gpt [options] [-o FILE]

The output is one func.func @mlp / @gpt() -> tensor<f32> that declares its
data inputs (lpc.input) and FP32 trainable parameters (lpc.param, with
PyTorch-like initializers) and returns the scalar loss of
lpc.softmax_cross_entropy. Weights are [in, out]. Every op is located by
the name of its layer (loc("h.0.attn")). The output starts with a comment
giving the command that regenerates it.

Initializers: linear weights xavier_uniform (gpt; the residual output
projections with gain 1/sqrt(2 * layers), as GPT-2) or kaiming_uniform with
gain sqrt(1/3) (mlp; nn.Linear's default, bound 1/sqrt(fan_in)); biases
zeros; embeddings normal(std 0.02); norm weights ones, norm biases zeros.

Run 'lpc-model mlp --help' or 'lpc-model gpt --help' for the options.
)";

//===----------------------------------------------------------------------===//
// Option validation
//===----------------------------------------------------------------------===//

/// Largest accepted value of a size option, and of a tensor's element count
/// (so that byte counts of f32 tensors fit in 64 bits).
constexpr int64_t kMaxSize = 2147483647;       // 2^31 - 1
constexpr uint64_t kMaxElements = 1ull << 60;

/// Reports a usage error naming the offending option and returns false.
bool usageError(StringRef sub, const llvm::Twine &msg) {
  llvm::errs() << "lpc-model " << sub << ": error: " << msg << "\n";
  return false;
}

bool checkSize(StringRef sub, StringRef option, int64_t v) {
  if (v < 1 || v > kMaxSize)
    return usageError(sub, "--" + option + "=" + llvm::Twine(v) +
                               ": must be a positive integer (1 to " +
                               llvm::Twine(kMaxSize) + ")");
  return true;
}

/// Checks that a tensor of `shape` has at most kMaxElements elements.
bool checkElements(StringRef sub, StringRef what,
                   ArrayRef<int64_t> shape) {
  uint64_t n = 1;
  bool overflow = false;
  for (int64_t d : shape)
    n = llvm::SaturatingMultiply(n, (uint64_t)d, &overflow);
  if (overflow || n > kMaxElements) {
    std::string dims;
    llvm::raw_string_ostream os(dims);
    llvm::interleave(shape, os, "x");
    return usageError(sub, "the sizes are too large: " + what + " [" + dims +
                               "] would have more than 2^60 elements");
  }
  return true;
}

/// Parses --hidden ("1024,1024"; "" for none).
bool parseHidden(StringRef text, SmallVectorImpl<int64_t> &widths) {
  if (text.trim().empty())
    return true;
  SmallVector<StringRef> parts;
  text.split(parts, ',');
  for (StringRef part : parts) {
    int64_t w;
    if (part.trim().getAsInteger(10, w) || w < 1 || w > kMaxSize)
      return usageError("mlp", "--hidden=" + text + ": '" + part +
                                   "' is not a positive layer width; expected "
                                   "a comma-separated list such as 1024,1024");
    widths.push_back(w);
  }
  return true;
}

/// The shortest decimal form of `v` that reads back as `v`.
std::string formatDouble(double v) {
  char buf[64];
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof(buf), "%.*g", precision, v);
    if (std::strtod(buf, nullptr) == v)
      break;
  }
  return buf;
}

StringRef activationName(Activation a) {
  switch (a) {
  case Activation::gelu:
    return "gelu";
  case Activation::relu:
    return "relu";
  case Activation::silu:
    return "silu";
  case Activation::tanh:
    return "tanh";
  }
  llvm_unreachable("unknown activation");
}

//===----------------------------------------------------------------------===//
// Model building
//===----------------------------------------------------------------------===//

/// OpBuilder plus the helpers the models share. Every op gets the NameLoc of
/// the layer it belongs to.
class ModelBuilder {
public:
  explicit ModelBuilder(MLIRContext *ctx) : ctx(ctx), b(ctx) {}

  Location loc(const llvm::Twine &layer) {
    return NameLoc::get(StringAttr::get(ctx, layer));
  }

  RankedTensorType f32(ArrayRef<int64_t> shape) {
    return RankedTensorType::get(shape, b.getF32Type());
  }
  RankedTensorType i32(ArrayRef<int64_t> shape) {
    return RankedTensorType::get(shape, b.getI32Type());
  }

  /// Creates `module { func.func @name() -> tensor<f32> { ... } }` and
  /// places the builder in the function body.
  void beginFunction(StringRef name) {
    module = ModuleOp::create(UnknownLoc::get(ctx));
    b.setInsertionPointToEnd(module->getBody());
    auto type = b.getFunctionType({}, {RankedTensorType::get({}, b.getF32Type())});
    func = func::FuncOp::create(b, loc(name), name, type);
    b.setInsertionPointToEnd(func.addEntryBlock());
  }

  void endFunction(Value loss) {
    func::ReturnOp::create(b, loc("loss"), loss);
  }

  Value input(StringRef name, InputKind kind, RankedTensorType type) {
    return InputOp::create(b, loc(name), type, name, kind);
  }

  struct Init {
    InitKind kind;
    std::optional<double> std, gain;
  };
  static Init zeros() { return {InitKind::zeros, {}, {}}; }
  static Init ones() { return {InitKind::ones, {}, {}}; }
  static Init normal(double std) { return {InitKind::normal, std, {}}; }
  static Init xavierUniform(double gain) {
    return {InitKind::xavier_uniform, {}, gain};
  }
  static Init kaimingUniform(double gain) {
    return {InitKind::kaiming_uniform, {}, gain};
  }

  /// lpc.param "<layer>.<suffix>" (or "<layer>" when suffix is empty),
  /// located at the layer.
  Value param(StringRef layer, StringRef suffix, ArrayRef<int64_t> shape,
              Init init) {
    std::string name = suffix.empty() ? layer.str() : (layer + "." + suffix).str();
    auto attr = [&](std::optional<double> v) -> FloatAttr {
      return v ? b.getF64FloatAttr(*v) : FloatAttr();
    };
    return ParamOp::create(b, loc(layer), f32(shape), name, init.kind,
                           attr(init.std), /*mean=*/FloatAttr(),
                           /*low=*/FloatAttr(), /*high=*/FloatAttr(),
                           /*value=*/FloatAttr(), attr(init.gain));
  }

  /// x [..., in] -> x * weight [in, out] (+ bias [out]) as `layer`, with
  /// parameters "<layer>.weight" and "<layer>.bias".
  Value linear(Value x, StringRef layer, int64_t in, int64_t out,
               Init weightInit, bool bias = true) {
    Value w = param(layer, "weight", {in, out}, weightInit);
    Value bv = bias ? param(layer, "bias", {out}, zeros()) : Value();
    Value y = matmul(x, w, layer);
    if (!bias)
      return y;
    return BiasAddOp::create(b, loc(layer), y, bv);
  }

  Value matmul(Value lhs, Value rhs, StringRef layer,
               bool transposeB = false) {
    return MatmulOp::create(b, loc(layer), lhs, rhs, /*transpose_a=*/false,
                            transposeB, /*role=*/GemmRoleAttr());
  }

  OpBuilder &builder() { return b; }
  OwningOpRef<ModuleOp> takeModule() { return std::move(module); }

private:
  MLIRContext *ctx;
  OpBuilder b;
  OwningOpRef<ModuleOp> module;
  func::FuncOp func;
};

/// A built model and the comment lines that describe it.
struct Model {
  OwningOpRef<ModuleOp> module;
  std::string command;     // the regenerating command, without -o
  std::string description; // one line
};

//===----------------------------------------------------------------------===//
// MLP
//===----------------------------------------------------------------------===//

struct MlpConfig {
  int64_t input, classes, batch;
  SmallVector<int64_t> hidden;
  Activation activation;
  GeluApproximation gelu;
};

bool readMlpConfig(MlpConfig &c) {
  c.input = mlpInput;
  c.classes = mlpClasses;
  c.batch = mlpBatch;
  c.activation = mlpActivation;
  c.gelu = mlpGelu;
  if (!checkSize("mlp", "input", c.input) ||
      !checkSize("mlp", "classes", c.classes) ||
      !checkSize("mlp", "batch", c.batch) || !parseHidden(mlpHidden, c.hidden))
    return false;
  if (mlpGelu.getNumOccurrences() && c.activation != Activation::gelu)
    return usageError("mlp", "--gelu only applies with --activation=gelu "
                             "(got --activation=" +
                                 activationName(c.activation) + ")");
  int64_t prev = c.input;
  if (!checkElements("mlp", "the 'image' input", {c.batch, c.input}))
    return false;
  for (int64_t w : c.hidden) {
    if (!checkElements("mlp", "a hidden layer weight", {prev, w}) ||
        !checkElements("mlp", "a hidden activation", {c.batch, w}))
      return false;
    prev = w;
  }
  return checkElements("mlp", "the output layer weight", {prev, c.classes}) &&
         checkElements("mlp", "the logits", {c.batch, c.classes});
}

std::string mlpCommand(const MlpConfig &c) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << "lpc-model mlp --input=" << c.input << " --hidden=";
  llvm::interleave(c.hidden, os, ",");
  os << " --classes=" << c.classes << " --batch=" << c.batch
     << " --activation=" << activationName(c.activation);
  if (c.activation == Activation::gelu)
    os << " --gelu=" << stringifyGeluApproximation(c.gelu);
  return s;
}

Model buildMlp(MLIRContext *ctx, const MlpConfig &c) {
  ModelBuilder mb(ctx);
  OpBuilder &b = mb.builder();
  mb.beginFunction("mlp");

  Value x = mb.input("image", InputKind::features, mb.f32({c.batch, c.input}));
  Value labels = mb.input("label", InputKind::labels, mb.i32({c.batch}));

  // nn.Linear's default: kaiming_uniform(a = sqrt(5)), i.e. gain sqrt(1/3)
  // and bound 1/sqrt(fan_in).
  const ModelBuilder::Init linearInit =
      ModelBuilder::kaimingUniform(std::sqrt(1.0 / 3.0));
  int64_t prev = c.input;
  unsigned index = 1;
  for (int64_t width : c.hidden) {
    std::string layer = "fc" + std::to_string(index++);
    x = mb.linear(x, layer, prev, width, linearInit);
    Location loc = mb.loc(layer);
    switch (c.activation) {
    case Activation::gelu:
      x = GeluOp::create(b, loc, x, c.gelu);
      break;
    case Activation::relu:
      x = ReluOp::create(b, loc, x);
      break;
    case Activation::silu:
      x = SiluOp::create(b, loc, x);
      break;
    case Activation::tanh:
      x = TanhOp::create(b, loc, x);
      break;
    }
    prev = width;
  }
  std::string head = "fc" + std::to_string(index);
  Value logits = mb.linear(x, head, prev, c.classes, linearInit);
  Value loss = SoftmaxCrossEntropyOp::create(b, mb.loc("loss"), logits, labels,
                                             LossReduction::mean,
                                             /*ignore_index=*/IntegerAttr());
  mb.endFunction(loss);

  Model m;
  m.module = mb.takeModule();
  m.command = mlpCommand(c);
  std::string widths;
  llvm::raw_string_ostream os(widths);
  os << c.input;
  for (int64_t w : c.hidden)
    os << "-" << w;
  os << "-" << c.classes;
  std::string act = activationName(c.activation).str();
  if (c.activation == Activation::gelu)
    act += " (" + stringifyGeluApproximation(c.gelu).str() + ")";
  m.description = "MLP " + widths + ", " + act + " activation, batch " +
                  std::to_string(c.batch);
  return m;
}

//===----------------------------------------------------------------------===//
// GPT
//===----------------------------------------------------------------------===//

struct GptConfig {
  int64_t layers, dModel, heads, seq, vocab, batch, mlpRatio;
  HeadKind head;
  double dropout;
  NormKind norm;
  AttentionKind attention;
};

bool readGptConfig(GptConfig &c) {
  c.layers = gptLayers;
  c.dModel = gptDModel;
  c.heads = gptHeads;
  c.seq = gptSeq;
  c.vocab = gptVocab;
  c.batch = gptBatch;
  c.mlpRatio = gptMlpRatio;
  c.head = gptHead;
  c.dropout = gptDropout;
  c.norm = gptNorm;
  c.attention = gptAttention;
  if (!checkSize("gpt", "layers", c.layers) ||
      !checkSize("gpt", "d-model", c.dModel) ||
      !checkSize("gpt", "heads", c.heads) ||
      !checkSize("gpt", "seq", c.seq) || !checkSize("gpt", "vocab", c.vocab) ||
      !checkSize("gpt", "batch", c.batch) ||
      !checkSize("gpt", "mlp-ratio", c.mlpRatio))
    return false;
  if (gptHead.getNumOccurrences() > 1)
    return usageError("gpt", "give at most one of --tied and --untied");
  if (c.layers > 4096)
    return usageError("gpt", "--layers=" + llvm::Twine(c.layers) +
                                 ": at most 4096 blocks are supported");
  if (c.dModel % c.heads != 0)
    return usageError("gpt", "--d-model=" + llvm::Twine(c.dModel) +
                                 " is not divisible by --heads=" +
                                 llvm::Twine(c.heads) +
                                 " (each head gets d-model / heads features)");
  if (!(c.dropout >= 0.0 && c.dropout < 1.0))
    return usageError("gpt", "--dropout=" + formatDouble(c.dropout) +
                                 ": the rate must be in [0, 1)");
  if (c.dropout != 0.0 && c.attention == AttentionKind::fused)
    return usageError("gpt", "--attention=fused has no dropout on the "
                             "attention probabilities: use "
                             "--attention=unfused with --dropout=" +
                                 formatDouble(c.dropout));
  int64_t d = c.dModel, b = c.batch, s = c.seq;
  return checkElements("gpt", "the MLP hidden activation",
                       {b, s, d, c.mlpRatio}) &&
         checkElements("gpt", "the MLP weight", {d, d, c.mlpRatio}) &&
         checkElements("gpt", "the qkv activation", {b, s, d, 3}) &&
         checkElements("gpt", "the qkv weight", {d, d, 3}) &&
         (c.attention == AttentionKind::fused ||
          checkElements("gpt", "the attention scores", {b, c.heads, s, s})) &&
         checkElements("gpt", "the token embedding 'wte'", {c.vocab, d}) &&
         checkElements("gpt", "the logits", {b, s, c.vocab});
}

std::string gptCommand(const GptConfig &c) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << "lpc-model gpt --layers=" << c.layers << " --d-model=" << c.dModel
     << " --heads=" << c.heads << " --seq=" << c.seq << " --vocab=" << c.vocab
     << " --batch=" << c.batch << " --mlp-ratio=" << c.mlpRatio
     << (c.head == HeadKind::tied ? " --tied" : " --untied")
     << " --dropout=" << formatDouble(c.dropout)
     << " --norm=" << (c.norm == NormKind::layernorm ? "layernorm" : "rmsnorm");
  // Only when not the default: the examples' headers predate the option.
  if (c.attention == AttentionKind::fused)
    os << " --attention=fused";
  return s;
}

Model buildGpt(MLIRContext *ctx, const GptConfig &c) {
  ModelBuilder mb(ctx);
  OpBuilder &b = mb.builder();
  mb.beginFunction("gpt");

  const int64_t B = c.batch, S = c.seq, D = c.dModel, H = c.heads,
                Dh = D / H, V = c.vocab, F = c.mlpRatio * D;
  using Init = ModelBuilder::Init;
  const Init embedInit = ModelBuilder::normal(0.02);
  const Init linearInit = ModelBuilder::xavierUniform(1.0);
  // GPT-2 scales the init of the projections that write into the residual
  // stream by 1/sqrt(2 * layers).
  const Init residualInit =
      ModelBuilder::xavierUniform(1.0 / std::sqrt(2.0 * (double)c.layers));

  uint64_t nextSeed = 0;
  auto dropout = [&](Value x, StringRef layer) -> Value {
    if (c.dropout == 0.0)
      return x;
    return DropoutOp::create(b, mb.loc(layer), x,
                             llvm::APFloat(c.dropout), nextSeed++);
  };
  auto norm = [&](Value x, StringRef layer) -> Value {
    Value gamma = mb.param(layer, "weight", {D}, ModelBuilder::ones());
    if (c.norm == NormKind::rmsnorm)
      return RmsNormOp::create(b, mb.loc(layer), x, gamma,
                               llvm::APFloat(1e-6));
    Value beta = mb.param(layer, "bias", {D}, ModelBuilder::zeros());
    return LayerNormOp::create(b, mb.loc(layer), x, gamma, beta,
                               llvm::APFloat(1e-5));
  };

  Value tokens = mb.input("tokens", InputKind::tokens, mb.i32({B, S}));
  Value targets = mb.input("targets", InputKind::labels, mb.i32({B, S}));

  // Embeddings: wte[tokens] + wpe broadcast over the batch.
  Value wte = mb.param("wte", "", {V, D}, embedInit);
  Value wpe = mb.param("wpe", "", {S, D}, embedInit);
  Value tok = EmbeddingOp::create(b, mb.loc("wte"), wte, tokens,
                                  /*padding_idx=*/IntegerAttr());
  Value pos = BroadcastOp::create(b, mb.loc("wpe"), mb.f32({B, S, D}), wpe,
                                  ArrayRef<int64_t>{1, 2});
  Value x = AddOp::create(b, mb.loc("embed"), tok, pos);
  x = dropout(x, "embed");

  const SmallVector<int64_t> toHeads = {0, 2, 1, 3};
  for (int64_t i = 0; i < c.layers; ++i) {
    std::string h = "h." + std::to_string(i);
    std::string attn = h + ".attn", mlp = h + ".mlp";
    Location attnLoc = mb.loc(attn);

    // Causal self-attention.
    Value a = norm(x, h + ".ln_1");
    Value qkv = mb.linear(a, attn + ".qkv", D, 3 * D, linearInit);
    auto head = [&](int64_t part) -> Value {
      Value t = SliceOp::create(b, attnLoc, qkv, ArrayRef<int64_t>{0, 0, part * D},
                                ArrayRef<int64_t>{B, S, (part + 1) * D},
                                ArrayRef<int64_t>{1, 1, 1});
      t = ReshapeOp::create(b, attnLoc, mb.f32({B, S, H, Dh}), t);
      return TransposeOp::create(b, attnLoc, t, toHeads); // [B, H, S, Dh]
    };
    Value q = head(0), k = head(1), v = head(2);
    Value y;
    if (c.attention == AttentionKind::fused) {
      auto att = AttentionOp::create(
          b, attnLoc, TypeRange{mb.f32({B, H, S, Dh}), mb.f32({B, H, S})}, q,
          k, v, /*mask=*/Value(), /*causal=*/true, /*scale=*/nullptr);
      y = att.getResult(); // [B, H, S, Dh]
    } else {
      Value scores = mb.matmul(q, k, attn, /*transposeB=*/true); // [B,H,S,S]
      scores = ScaleOp::create(b, attnLoc, scores,
                               llvm::APFloat(1.0 / std::sqrt((double)Dh)));
      scores = CausalMaskOp::create(
          b, attnLoc, scores,
          llvm::APFloat::getInf(llvm::APFloat::IEEEdouble(), /*Negative=*/true));
      Value probs = SoftmaxOp::create(b, attnLoc, scores, /*axis=*/-1);
      probs = dropout(probs, attn);
      y = mb.matmul(probs, v, attn); // [B, H, S, Dh]
    }
    y = TransposeOp::create(b, attnLoc, y, toHeads); // [B, S, H, Dh]
    y = ReshapeOp::create(b, attnLoc, mb.f32({B, S, D}), y);
    y = mb.linear(y, attn + ".proj", D, D, residualInit);
    y = dropout(y, attn + ".proj");
    x = AddOp::create(b, attnLoc, x, y);

    // MLP.
    Value m = norm(x, h + ".ln_2");
    m = mb.linear(m, mlp + ".fc", D, F, linearInit);
    m = GeluOp::create(b, mb.loc(mlp), m, GeluApproximation::tanh);
    m = mb.linear(m, mlp + ".proj", F, D, residualInit);
    m = dropout(m, mlp + ".proj");
    x = AddOp::create(b, mb.loc(mlp), x, m);
  }

  x = norm(x, "ln_f");
  Value logits;
  if (c.head == HeadKind::tied)
    logits = mb.matmul(x, wte, "lm_head", /*transposeB=*/true);
  else
    logits = mb.linear(x, "lm_head", D, V, linearInit, /*bias=*/false);
  Value loss = SoftmaxCrossEntropyOp::create(b, mb.loc("loss"), logits,
                                             targets, LossReduction::mean,
                                             /*ignore_index=*/IntegerAttr());
  mb.endFunction(loss);

  Model model;
  model.module = mb.takeModule();
  model.command = gptCommand(c);
  model.description =
      "GPT " + std::to_string(c.layers) +
      (c.layers == 1 ? " layer" : " layers") + ", d_model " +
      std::to_string(D) + ", " + std::to_string(H) + " heads, seq " +
      std::to_string(S) + ", vocab " + std::to_string(V) + ", batch " +
      std::to_string(B) + ", " +
      (c.norm == NormKind::layernorm ? "layernorm" : "rmsnorm") + ", " +
      (c.head == HeadKind::tied ? "tied" : "untied") + " head";
  if (c.dropout != 0.0)
    model.description += ", dropout " + formatDouble(c.dropout);
  if (c.attention == AttentionKind::fused)
    model.description += ", fused attention";
  return model;
}

//===----------------------------------------------------------------------===//
// Output
//===----------------------------------------------------------------------===//

std::string render(Model &model) {
  uint64_t tensors = 0, elements = 0;
  model.module->walk([&](ParamOp p) {
    ++tensors;
    elements += p.getType().getNumElements();
  });
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "// Generated by: " << model.command << "\n"
     << "// Do not edit: regenerate with the command above (add -o FILE).\n"
     << "// " << model.description << "; " << tensors << " parameter tensors, "
     << elements << " parameters.\n\n";
  OpPrintingFlags flags;
  flags.enableDebugInfo(/*enable=*/true, /*prettyForm=*/false);
  model.module->print(os, flags);
  return text;
}

int run(StringRef kind, Model model) {
  if (failed(verify(*model.module))) {
    llvm::errs() << "lpc-model " << kind
                 << ": internal error: the generated module does not verify "
                    "(diagnostics above); this is a bug in lpc-model\n";
    return 2;
  }
  std::string text = render(model);
  if (llvm::Error err = llvm::writeToOutput(
          outputFile, [&](llvm::raw_ostream &os) -> llvm::Error {
            os << text;
            return llvm::Error::success();
          })) {
    llvm::errs() << "lpc-model " << kind << ": error: cannot write '"
                 << outputFile << "': " << llvm::toString(std::move(err))
                 << "\n";
    return 1;
  }
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);

  // An unknown model kind would otherwise be reported as a stray positional
  // argument; name it instead.
  if (argc >= 2 && argv[1][0] != '-') {
    StringRef kind = argv[1];
    if (kind != "mlp" && kind != "gpt") {
      llvm::errs() << "lpc-model: error: unknown model kind '" << kind
                   << "' (expected 'mlp' or 'gpt'; see lpc-model --help)\n";
      return 1;
    }
  }

  for (cl::SubCommand *sub :
       {&cl::SubCommand::getTopLevel(), &mlpCmd, &gptCmd})
    cl::HideUnrelatedOptions({&outputCat, &mlpCat, &gptCat}, *sub);
  cl::ParseCommandLineOptions(argc, argv, kOverview);

  MLIRContext context;
  context.loadDialect<func::FuncDialect, LpcDialect>();

  if (mlpCmd) {
    MlpConfig config;
    if (!readMlpConfig(config))
      return 1;
    return run("mlp", buildMlp(&context, config));
  }
  if (gptCmd) {
    GptConfig config;
    if (!readGptConfig(config))
      return 1;
    return run("gpt", buildGpt(&context, config));
  }
  llvm::errs() << "lpc-model: error: missing model kind: use 'lpc-model mlp "
                  "[options]' or 'lpc-model gpt [options]' (see lpc-model "
                  "--help)\n";
  return 1;
}
