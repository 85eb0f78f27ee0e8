//===- TileTransposes.cpp - --lpc-tile-transposes --------------------------===//
//
// FP8 GEMMs run in cuBLASLt's TN layout, so lpc-gemm-to-calls{fp8=true}
// copies an FP8 operand transposed (the last two dimensions swapped) into a
// new buffer. Lowered element by element, each GPU thread of that copy
// writes one byte and gathers the bytes of 16 different rows with one-byte
// loads: every load a 32-byte sector for one byte.
//
// This pass gives each iteration a T x T tile instead, T = `bytes` / the
// element size (16 x 16 for FP8): T rows of T consecutive elements loaded,
// then T rows of T consecutive elements stored, each row `bytes` bytes at a
// multiple of `bytes` from the buffer's start. The column tiles are the
// innermost dimension of the scf.parallel, so that neighbouring GPU threads
// (lpc-collapse-parallel-loops keeps the innermost dimension fastest) read
// neighbouring `bytes`-byte pieces of the same source rows. The scalar
// accesses of a row sit next to each other, with explicit index arithmetic
// that shows they are consecutive and tile-aligned; LLVM's load/store
// vectorizer (NVPTX's O3 pipeline) merges them into 16-byte vector loads and
// stores given the kernels' 16-byte-aligned pointers (lpc-align-kernel-args).
// On the CPU (lpc-jit --gpu-loop-passes) it is an ordinary loop nest.
//
// Loading the whole tile before storing any of it is what the parallel loop
// of the element-wise lowering already assumes: the input and output do not
// overlap (different buffers; the pass checks they are not the same value).
//
//===----------------------------------------------------------------------===//

#include "LoopStageUtils.h"
#include "lpc/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/bit.h"

namespace mlir {
namespace lpc {
#define GEN_PASS_DEF_LPCTILETRANSPOSES
#include "lpc/Conversion/Passes.h.inc"
} // namespace lpc
} // namespace mlir

using namespace mlir;

namespace {

/// Bytes of one element of `t` (ints and floats of whole bytes), or 0.
int64_t elementBytes(MemRefType t) {
  Type e = t.getElementType();
  if (!e.isIntOrFloat() || e.getIntOrFloatBitWidth() % 8 != 0)
    return 0;
  return e.getIntOrFloatBitWidth() / 8;
}

} // namespace

int64_t mlir::lpc::transposeTile(linalg::TransposeOp op, int64_t bytes) {
  if (!op.hasPureBufferSemantics())
    return 0;
  Value in = op.getInput(), out = op.getInit();
  if (in == out)
    return 0;
  auto inT = dyn_cast<MemRefType>(in.getType());
  auto outT = dyn_cast<MemRefType>(out.getType());
  if (!inT || !outT || !inT.hasStaticShape() || !outT.hasStaticShape() ||
      !inT.getLayout().isIdentity() || !outT.getLayout().isIdentity() ||
      inT.getElementType() != outT.getElementType())
    return 0;
  int64_t rank = inT.getRank();
  if (rank < 2)
    return 0;
  ArrayRef<int64_t> perm = op.getPermutation();
  for (int64_t d = 0; d < rank - 2; ++d)
    if (perm[d] != d)
      return 0;
  if (perm[rank - 2] != rank - 1 || perm[rank - 1] != rank - 2)
    return 0;
  int64_t e = elementBytes(inT);
  if (e == 0 || !llvm::has_single_bit(uint64_t(e)) || bytes % e != 0)
    return 0;
  int64_t t = bytes / e;
  if (t < 2)
    return 0;
  ArrayRef<int64_t> shape = inT.getShape();
  if (shape[rank - 2] % t != 0 || shape[rank - 1] % t != 0)
    return 0;
  return t;
}

namespace {

/// Replaces `op` with the tiled loop (see the file comment).
void tile(linalg::TransposeOp op, int64_t t) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  Value in = op.getInput(), out = op.getInit();
  auto inT = cast<MemRefType>(in.getType());
  int64_t rank = inT.getRank();
  ArrayRef<int64_t> shape = inT.getShape();
  // Index constants, each once per block.
  llvm::SmallDenseMap<int64_t, Value> constants;
  auto cst = [&](int64_t v) -> Value {
    Value &c = constants[v];
    if (!c)
      c = arith::ConstantIndexOp::create(b, loc, v);
    return c;
  };
  // (leading dims..., row tiles, column tiles), column tiles innermost.
  SmallVector<Value> lbs(rank, cst(0)), steps(rank, cst(1)), ubs;
  for (int64_t d = 0; d < rank; ++d)
    ubs.push_back(cst(d < rank - 2 ? shape[d] : shape[d] / t));
  auto loop = scf::ParallelOp::create(b, loc, lbs, ubs, steps);
  b.setInsertionPointToStart(loop.getBody());
  constants.clear();
  SmallVector<Value> ivs(loop.getInductionVars());
  Value tile = cst(t);
  Value row0 = arith::MulIOp::create(b, loc, ivs[rank - 2], tile);
  Value col0 = arith::MulIOp::create(b, loc, ivs[rank - 1], tile);
  // Source row i and column k of the tile: row0 + i, col0 + k.
  SmallVector<Value> rows, cols;
  for (int64_t i = 0; i < t; ++i) {
    rows.push_back(i == 0 ? row0
                          : arith::AddIOp::create(b, loc, row0, cst(i))
                                .getResult());
    cols.push_back(i == 0 ? col0
                          : arith::AddIOp::create(b, loc, col0, cst(i))
                                .getResult());
  }
  SmallVector<Value> idx(ivs.begin(), ivs.begin() + (rank - 2));
  idx.append({Value(), Value()});
  // All loads, source row by source row, consecutive elements.
  SmallVector<Value> v(t * t);
  for (int64_t i = 0; i < t; ++i)
    for (int64_t k = 0; k < t; ++k) {
      idx[rank - 2] = rows[i];
      idx[rank - 1] = cols[k];
      v[i * t + k] = memref::LoadOp::create(b, loc, in, idx);
    }
  // Then all stores: destination row k (source column k) holds source
  // rows 0..t-1 of it, consecutive elements.
  for (int64_t k = 0; k < t; ++k)
    for (int64_t i = 0; i < t; ++i) {
      idx[rank - 2] = cols[k];
      idx[rank - 1] = rows[i];
      memref::StoreOp::create(b, loc, v[i * t + k], out, idx);
    }
  op.erase();
}

struct LpcTileTransposesPass
    : ::mlir::lpc::impl::LpcTileTransposesBase<LpcTileTransposesPass> {
  using LpcTileTransposesBase::LpcTileTransposesBase;
  void runOnOperation() override {
    if (bytes < 2 || !llvm::has_single_bit(uint64_t(bytes))) {
      getOperation()->emitError("lpc-tile-transposes: bytes must be a power "
                                "of two of at least 2, got ")
          << int64_t(bytes);
      return signalPassFailure();
    }
    SmallVector<std::pair<linalg::TransposeOp, int64_t>> ops;
    getOperation()->walk([&](linalg::TransposeOp op) {
      if (int64_t t = lpc::transposeTile(op, bytes))
        ops.push_back({op, t});
    });
    for (auto [op, t] : ops)
      tile(op, t);
  }
};

} // namespace
