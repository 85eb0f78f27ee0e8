//===- CPUBackend.h - JIT-compiled lpc functions on the host ----*- C++ -*-===//
//
// Compiles one function of an lpc module (a train step, an eval function)
// to native code with the CPU codegen pipeline, LLVM (O2, host CPU) and ORC's
// LLJIT, caching the object code on disk, and runs it on caller-owned
// buffers. Arguments and results are described
// by their lpc.state / lpc.name / lpc.input / lpc.metric attributes, so the
// caller (lpc-run, lpc-jit) can match state, data and metrics by name.
//
//===----------------------------------------------------------------------===//

#ifndef LPC_BACKEND_CPUBACKEND_H
#define LPC_BACKEND_CPUBACKEND_H

#include "lpc/Reference/Evaluator.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace llvm {
class raw_ostream;
} // namespace llvm

namespace llvm::orc {
class LLJIT;
} // namespace llvm::orc

namespace mlir {
namespace lpc {
namespace cpu {

/// One argument or result of a compiled function.
struct Slot {
  std::string state;  // lpc.state (param, exp_avg, step, fp8_scale, ...)
  std::string name;   // lpc.name (parameter name), may be empty
  std::string input;  // lpc.input (data input name)
  std::string metric; // lpc.metric (loss, logits, grad_norm, ...)
  std::optional<double> init; // lpc.init: initial value of non-param state
  // lpc.id_bound: an integer input that indexes an embedding of this many
  // rows (its ids must lie in [0, idBound)); 0: none.
  int64_t idBound = 0;
  // ZeRO-1 (lpc.shard_of, lpc.shard_ranks): this rank's block of an f32
  // tensor of this shape, split between shardRanks ranks; empty otherwise.
  std::vector<int64_t> shardOf;
  int64_t shardRanks = 0;
  ref::DType dtype = ref::DType::f32;
  std::vector<int64_t> shape;
  int64_t numElements() const;
  /// Bytes of the row-major buffer (i1 takes one byte per element).
  size_t byteSize() const;
};

/// The slot of an argument or result of type `type` (a static tensor of an
/// lpc element type) with attributes `attrs` (may be null).
llvm::Expected<Slot> slotFor(Type type, DictionaryAttr attrs);

struct CompileOptions {
  /// Time every top-level op of the lowered function (lpc-profile-marks);
  /// read the figures with CompiledFunction::profile().
  bool profile = false;
  /// Run the loop nests of at least this many innermost iterations on the
  /// runtime's threads (the GEMMs' OpenMP pool: OMP_NUM_THREADS or
  /// lpc::rt::setGemmThreads); also the least work a thread gets. 0: one
  /// thread, the loops exactly as before threading (for A/B checks).
  int64_t parallelMinWork = kDefaultParallelMinWork;
  static constexpr int64_t kDefaultParallelMinWork = 65536;
  /// Also run the GPU pipeline's loop passes (a test of their semantics on
  /// the CPU; see buildCPUCodegenPipeline).
  bool gpuLoopPasses = false;
  /// With gpuLoopPasses: at the GPU pipeline's sizes, not the smallest.
  bool gpuSizes = false;
  /// Where compiled objects are cached, keyed on the lowered function, the
  /// host CPU and the codegen version. Unset: $LPC_CACHE_DIR (``off``
  /// disables), else $XDG_CACHE_HOME/lpc, else ~/.cache/lpc. "": no cache.
  std::optional<std::string> cacheDir;
  /// Print the module in the LLVM dialect (after the MLIR pipeline) here;
  /// such compiles bypass the cache.
  llvm::raw_ostream *printLLVMDialect = nullptr;
};

/// Time spent in one top-level op of a profiled function, over all runs.
struct ProfileEntry {
  std::string label;
  double seconds = 0;
  int64_t calls = 0;
};

/// The kind of op a profile label names: "GEMM" for the GEMM library's
/// calls ("call lpc_rt_gemm_bf16 @ fc1"), else the op ("map", "reduce",
/// "linalg.transpose", "scf.forall", "call lpc_rt_..." for other calls).
std::string profileKind(llvm::StringRef label);

/// A profile's seconds and op count per kind (profileKind), most time first
/// (ties by name, so the order is deterministic).
struct ProfileKindTotal {
  std::string kind;
  double seconds = 0;
  int64_t ops = 0;
};
std::vector<ProfileKindTotal>
profileByKind(llvm::ArrayRef<ProfileEntry> entries);

class CompiledFunction {
public:
  ~CompiledFunction();
  /// Compiles @`name` of `module` (the module is not modified).
  static llvm::Expected<std::unique_ptr<CompiledFunction>>
  compile(ModuleOp module, llvm::StringRef name,
          const CompileOptions &options = {});

  /// Per-op times accumulated over all runs so far (empty unless compiled
  /// with CompileOptions::profile), in program order.
  std::vector<ProfileEntry> profile() const;
  /// Zeroes those times (after warm-up runs, say).
  void resetProfile();

  const std::vector<Slot> &args() const { return argSlots; }
  const std::vector<Slot> &results() const { return resultSlots; }
  /// Seconds spent in codegen and LLVM compilation (or loading the cached
  /// object).
  double compileSeconds() const { return seconds; }
  /// Whether the code came from the compile cache.
  bool cached() const { return fromCache; }

  /// Runs the function: one contiguous row-major buffer per argument and per
  /// result, of the sizes the slots give. Results are written, never read.
  llvm::Error run(llvm::ArrayRef<const void *> args,
                  llvm::ArrayRef<void *> results);

private:
  CompiledFunction() = default;
  std::unique_ptr<llvm::orc::LLJIT> jit;
  void (*entry)(void **) = nullptr;
  bool fromCache = false;
  std::vector<Slot> argSlots, resultSlots;
  double seconds = 0;
  std::vector<ProfileEntry> profileEntries;
};

/// Bytes <-> reference tensors (values exactly representable in the dtype).
/// Bytes of temporaries the JIT-compiled code holds (its buffer pool: freed
/// buffers are kept for the next step).
size_t bufferPoolBytes();

void packTensor(const ref::Tensor &t, void *dst);
ref::Tensor unpackTensor(const Slot &slot, const void *src);

} // namespace cpu
} // namespace lpc
} // namespace mlir

#endif // LPC_BACKEND_CPUBACKEND_H
