//===- GemmToCalls.cpp - --lpc-gemm-to-calls ------------------------------===//
//
// After bufferization, the GEMMs of lpc-to-linalg (linalg.generic marked
// `lpc_gemm`) become calls to the CPU GEMM library (runtime/gemm), whose C
// interface takes rank-3 [batch, rows, cols] memref descriptors.
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"
#include "KernelBuffers.h"
#include "lpc/Conversion/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir {
namespace lpc {
#define GEN_PASS_DEF_LPCGEMMTOCALLS
#include "lpc/Conversion/Passes.h.inc"
} // namespace lpc
} // namespace mlir

using namespace mlir;
using mlir::lpc::lowering::rootBuffer;

namespace {

/// A [batch, rows, cols] view of a row-major contiguous memref, or null.
/// With `flatten`, every dimension but the last counts as rows: [1, rows,
/// cols].
Value view3d(OpBuilder &b, Location loc, Value v, bool flatten = false) {
  auto t = dyn_cast<MemRefType>(v.getType());
  if (!t || !t.getLayout().isIdentity() || !t.hasStaticShape() ||
      t.getRank() < 2)
    return {};
  int64_t rank = t.getRank();
  Value r = v;
  if (flatten && rank > 2) {
    ReassociationIndices lead;
    for (int64_t i = 0; i < rank - 1; ++i)
      lead.push_back(i);
    r = memref::CollapseShapeOp::create(
        b, loc, v, ArrayRef<ReassociationIndices>{lead, {rank - 1}});
    t = cast<MemRefType>(r.getType());
    rank = 2;
  }
  if (rank == 2) {
    auto to = MemRefType::get({1, t.getDimSize(0), t.getDimSize(1)},
                              t.getElementType());
    r = memref::ExpandShapeOp::create(
        b, loc, to, r, ArrayRef<ReassociationIndices>{{0, 1}, {2}});
  } else if (rank > 3) {
    ReassociationIndices lead;
    for (int64_t i = 0; i < rank - 2; ++i)
      lead.push_back(i);
    r = memref::CollapseShapeOp::create(
        b, loc, v,
        ArrayRef<ReassociationIndices>{lead, {rank - 2}, {rank - 1}});
  }
  auto dyn = MemRefType::get({ShapedType::kDynamic, ShapedType::kDynamic,
                              ShapedType::kDynamic},
                             t.getElementType());
  return memref::CastOp::create(b, loc, dyn, r);
}


/// Whether `op` or an op nested in it has an operand viewing `root`.
bool touches(Operation *op, Value root) {
  bool hit = false;
  op->walk([&](Operation *inner) {
    for (Value v : inner->getOperands())
      if (isa<MemRefType>(v.getType()) && rootBuffer(v) == root)
        hit = true;
  });
  return hit;
}

/// The zero-initialization of a GEMM's accumulator `c` before the GEMM
/// (with nothing in between touching c): a linalg.fill of `c`, or a copy
/// into `c` (bufferization copies a zero tensor that CSE shared). The
/// library overwrites C, so it is dead.
Operation *deadInit(linalg::GenericOp g, Value c) {
  Value root = rootBuffer(c);
  for (Operation *op = g->getPrevNode(); op; op = op->getPrevNode()) {
    if (auto fill = dyn_cast<linalg::FillOp>(op);
        fill && fill.getDpsInits()[0] == c)
      return op;
    if (auto copy = dyn_cast<memref::CopyOp>(op); copy && copy.getTarget() == c)
      return op;
    if (op->getNumResults() == 1 && op->getResult(0) == root)
      return nullptr; // c's allocation: nothing initialized it
    if (touches(op, root))
      return nullptr;
  }
  return nullptr;
}

/// Buffers that are only ever filled (their zero-init copies are gone).
void eraseWriteOnlyBuffers(ModuleOp module) {
  SmallVector<memref::AllocOp> allocs;
  module.walk([&](memref::AllocOp a) { allocs.push_back(a); });
  for (memref::AllocOp a : allocs) {
    bool writeOnly = llvm::all_of(a->getUsers(), [&](Operation *u) {
      auto fill = dyn_cast<linalg::FillOp>(u);
      return isa<memref::DeallocOp>(u) ||
             (fill && fill.getDpsInits()[0] == a.getResult());
    });
    if (!writeOnly)
      continue;
    for (Operation *u : llvm::make_early_inc_range(a->getUsers()))
      u->erase();
    a->erase();
  }
}

/// The one consumer of a bf16 GEMM's f32 accumulator `c` that only rounds
/// it to bf16: a linalg.generic reading `c` as an input whose body uses that
/// element only through `arith.truncf` to bf16, with nothing else touching
/// c's buffer but the GEMM, its dead initialization and deallocation.
/// Null when there is none.
linalg::GenericOp bf16OnlyConsumer(linalg::GenericOp gemm, Value c,
                                   Operation *init) {
  auto alloc = c.getDefiningOp<memref::AllocOp>();
  if (!alloc || !cast<MemRefType>(c.getType()).getLayout().isIdentity())
    return {};
  linalg::GenericOp consumer;
  for (Operation *user : c.getUsers()) {
    if (user == gemm.getOperation() || user == init ||
        isa<memref::DeallocOp>(user))
      continue;
    auto g = dyn_cast<linalg::GenericOp>(user);
    if (!g || consumer || !g.hasPureBufferSemantics() ||
        g->getBlock() != gemm->getBlock() || !gemm->isBeforeInBlock(g))
      return {};
    consumer = g;
  }
  if (!consumer)
    return {};
  for (OpOperand &in : consumer->getOpOperands()) {
    bool isInput = consumer.isDpsInput(&in);
    if (in.get() != c)
      continue;
    if (!isInput)
      return {};
    for (Operation *u : consumer.getMatchingBlockArgument(&in).getUsers()) {
      auto t = dyn_cast<arith::TruncFOp>(u);
      if (!t || !t.getType().isBF16() || t.getRoundingmodeAttr())
        return {};
    }
  }
  return consumer;
}

/// Gives `consumer` the bf16 buffer `cb` instead of the f32 `c` it rounded:
/// its block arguments become bf16 and the roundings go.
void readRoundedInstead(linalg::GenericOp consumer, Value c, Value cb) {
  for (OpOperand &in : consumer->getOpOperands()) {
    if (in.get() != c)
      continue;
    BlockArgument arg = consumer.getMatchingBlockArgument(&in);
    in.set(cb);
    arg.setType(cast<MemRefType>(cb.getType()).getElementType());
    for (Operation *u : llvm::make_early_inc_range(arg.getUsers())) {
      u->getResult(0).replaceAllUsesWith(arg);
      u->erase();
    }
  }
}

/// Whether the buffer `m` exists where `op` is: an argument of op's block or
/// made before op in it.
bool availableAt(Value m, Operation *op) {
  if (auto arg = dyn_cast<BlockArgument>(m))
    return arg.getOwner() == op->getBlock();
  Operation *def = m.getDefiningOp();
  return def->getBlock() == op->getBlock() && def->isBeforeInBlock(op);
}

/// Whether every use of `v` is `call` (through views), `reader` or a
/// deallocation: C's buffer then holds nothing anyone else needs.
bool onlyFeeds(Value v, func::CallOp call, Operation *reader) {
  return llvm::all_of(v.getUsers(), [&](Operation *u) {
    if (u == call.getOperation() || u == reader || isa<memref::DeallocOp>(u))
      return true;
    return isa<memref::ExpandShapeOp, memref::CollapseShapeOp, memref::CastOp>(
               u) &&
           onlyFeeds(u->getResult(0), call, nullptr);
  });
}

/// Whether `g` copies its one input into its one output element by element
/// (identity maps, a body that yields the input).
bool isPlainCopy(linalg::GenericOp g) {
  Block &body = g.getRegion().front();
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  return g.getNumDpsInputs() == 1 && g.getNumDpsInits() == 1 &&
         body.getOperations().size() == 1 &&
         yield.getValues()[0] == body.getArgument(0) &&
         llvm::all_of(g.getIndexingMapsArray(),
                      [](AffineMap m) { return m.isIdentity(); });
}

/// When `copy` just copies the GEMM's C (`cb`, a buffer made for it that
/// nothing but the call, the copy and its deallocation uses) into another
/// contiguous buffer of the same shape that nothing touches between the
/// call and the copy, the GEMM writes that buffer itself and the copy and
/// C's own buffer go.
void storeIntoCopyTarget(func::CallOp call, unsigned cIndex,
                         linalg::GenericOp copy, Value cb, bool flatten) {
  if (!isPlainCopy(copy) || copy.getDpsInputs()[0] != cb ||
      !cb.getDefiningOp<memref::AllocOp>() || !onlyFeeds(cb, call, copy))
    return;
  Value out = copy.getDpsInits()[0];
  auto outType = dyn_cast<MemRefType>(out.getType());
  if (!outType || outType != cb.getType() || !availableAt(out, call))
    return;
  Value root = rootBuffer(out);
  if (touches(call, root)) // the target holds A or B (a reused buffer)
    return;
  for (Operation *op = call->getNextNode(); op && op != copy.getOperation();
       op = op->getNextNode())
    if (touches(op, root))
      return;
  if (copy->getBlock() != call->getBlock())
    return;
  OpBuilder b(call);
  Value out3 = view3d(b, call.getLoc(), out, flatten);
  if (!out3)
    return;
  Value old3 = call.getOperand(cIndex);
  call.setOperand(cIndex, out3);
  copy.erase();
  // C's own buffer: now only its old views and deallocation use it.
  for (Value v = old3; v && v != cb;) {
    Operation *view = v.getDefiningOp();
    v = view->getOperand(0);
    if (view->use_empty())
      view->erase();
  }
  for (Operation *u : llvm::make_early_inc_range(cb.getUsers()))
    if (isa<memref::DeallocOp>(u))
      u->erase();
  if (cb.use_empty())
    cb.getDefiningOp()->erase();
}

/// Whether `op` (between a GEMM and its consumer) may write the buffer
/// `root`: loads and linalg ops that only read it do not.
bool mayWrite(Operation *op, Value root) {
  if (!touches(op, root) || isa<memref::LoadOp>(op))
    return false;
  auto l = dyn_cast<linalg::LinalgOp>(op);
  if (!l || !l.hasPureBufferSemantics())
    return true;
  return llvm::any_of(l.getDpsInits(),
                      [&](Value v) { return rootBuffer(v) == root; });
}

/// The dequantization of an FP8 GEMM's f32 accumulator `c` in its one
/// consumer (lpc-to-linalg's scaled_matmul epilogue, maybe fused with what
/// follows): the consumer's element of c is used once, by `c * (x * y)`,
/// x and y loaded from rank-0 f32 buffers (lhs and rhs scale inverses).
/// cuBLASLt then applies them itself (A/B scale pointers), reading the
/// buffers when the GEMM runs: where one is written between its load and
/// the GEMM (bufferization reuses 0-d buffers for values of different
/// times), the value loaded is stored into a buffer of its own first.
struct Dequantization {
  arith::MulFOp mul;           // c * s, in the consumer's body
  BlockArgument element;       // c's element there
  Value scales[2];             // memref<f32>: lhs, rhs
  memref::LoadOp loads[2];     // where the consumer got them
  bool ownBuffer[2] = {false, false};
  explicit operator bool() const { return bool(mul); }
};

/// The op that reads a GEMM's result `c` (a buffer of its own or a result)
/// and its element of c there, where the GEMM may fold what that op does to
/// the element into C itself: the first op after the GEMM to touch C's
/// buffer, a linalg.generic reading C as one input and maybe overwriting it
/// in place (its old value unread); nothing else reads C until something
/// overwrites it whole (or frees it), as that would see the changed C.
struct Reader {
  linalg::GenericOp op;
  BlockArgument element;
  explicit operator bool() const { return bool(op); }
};

Reader soleReader(linalg::GenericOp gemm, Value c) {
  Value root = rootBuffer(c);
  linalg::GenericOp consumer;
  for (Operation *op = gemm->getNextNode(); op && !consumer;
       op = op->getNextNode()) {
    if (!touches(op, root))
      continue;
    consumer = dyn_cast<linalg::GenericOp>(op);
    if (!consumer || !consumer.hasPureBufferSemantics())
      return {};
  }
  if (!consumer)
    return {};
  BlockArgument element;
  bool overwrites = false;
  for (OpOperand &in : consumer->getOpOperands()) {
    if (rootBuffer(in.get()) != root)
      continue;
    if (in.get() != c)
      return {}; // another view of C's buffer
    BlockArgument arg = consumer.getMatchingBlockArgument(&in);
    if (!consumer.isDpsInput(&in)) {
      if (!arg.use_empty())
        return {};
      overwrites = consumer.getMatchingIndexingMap(&in).isIdentity() &&
                   consumer.getNumReductionLoops() == 0;
      continue;
    }
    if (element)
      return {};
    element = arg;
  }
  // Until something overwrites C (or frees it), nothing may read it; and
  // what is left in a buffer that outlives the function (an argument, a
  // result) is read by the caller.
  bool freed = false;
  for (Operation *op = consumer->getNextNode(); op && !overwrites && !freed;
       op = op->getNextNode()) {
    if (!touches(op, root))
      continue;
    if ((freed = isa<memref::DeallocOp>(op)))
      break;
    auto g = dyn_cast<linalg::GenericOp>(op);
    if (!g || !g.hasPureBufferSemantics() || g.getNumReductionLoops() != 0)
      return {};
    for (OpOperand &o : g->getOpOperands())
      if (rootBuffer(o.get()) == root &&
          (g.isDpsInput(&o) || o.get() != c ||
           !g.getMatchingIndexingMap(&o).isIdentity() ||
           !g.getMatchingBlockArgument(&o).use_empty()))
        return {};
    overwrites = true;
  }
  if (!element || (!overwrites && !freed && !root.getDefiningOp<memref::AllocOp>()))
    return {};
  return {consumer, element};
}

Dequantization matchDequantization(linalg::GenericOp gemm, Value c) {
  Reader reader = soleReader(gemm, c);
  if (!reader || !reader.element.hasOneUse())
    return {};
  BlockArgument element = reader.element;
  auto mul = dyn_cast<arith::MulFOp>(*element.getUsers().begin());
  if (!mul || mul.getFastmathAttr().getValue() != arith::FastMathFlags::none)
    return {};
  Value other = mul.getLhs() == element ? mul.getRhs() : mul.getLhs();
  auto scales = other.getDefiningOp<arith::MulFOp>();
  if (!scales)
    return {};
  Dequantization d;
  d.mul = mul;
  d.element = element;
  Value src[] = {scales.getLhs(), scales.getRhs()};
  for (int i = 0; i < 2; ++i) {
    auto load = src[i].getDefiningOp<memref::LoadOp>();
    if (!load)
      return {};
    Value m = load.getMemRef();
    auto t = cast<MemRefType>(m.getType());
    if (t.getRank() != 0 || !t.getElementType().isF32() ||
        !t.getLayout().isIdentity())
      return {};
    if (!availableAt(m, gemm)) // the GEMM call reads it there
      return {};
    // Does it hold at the GEMM what the consumer got from it?
    if (load->getBlock() != gemm->getBlock())
      return {};
    bool before = load->isBeforeInBlock(gemm);
    Operation *from = before ? load : gemm, *to = before ? gemm : load;
    Value root = rootBuffer(m);
    for (Operation *op = from->getNextNode(); op != to; op = op->getNextNode())
      if (mayWrite(op, root)) {
        if (!before)
          return {}; // a value written after the GEMM
        d.ownBuffer[i] = true;
        break;
      }
    d.scales[i] = m;
    d.loads[i] = load;
  }
  return d;
}

/// A bias added to a GEMM's f32 result in f32 by its reader: the element
/// of c used once, by `c + b`, b the element of a rank-1 f32 input indexed
/// by the last dimension (one value per output column) that nothing writes
/// between the GEMM and the reader. That is cuBLASLt's bias epilogue to the
/// bit (it adds in f32 before storing C); in bf16 and FP8 graphs lpc rounds
/// the product before adding the bias, which the epilogue would not, so
/// only f32 results qualify.
struct Bias {
  Reader reader;
  arith::AddFOp add;
  OpOperand *input = nullptr; // the bias operand of the reader
  explicit operator bool() const { return bool(add); }
};

Bias matchBias(linalg::GenericOp gemm, Value c) {
  if (!cast<MemRefType>(c.getType()).getElementType().isF32())
    return {};
  Reader reader = soleReader(gemm, c);
  if (!reader || !reader.element.hasOneUse())
    return {};
  auto add = dyn_cast<arith::AddFOp>(*reader.element.getUsers().begin());
  if (!add || add.getFastmathAttr().getValue() != arith::FastMathFlags::none)
    return {};
  auto other = dyn_cast<BlockArgument>(
      add.getLhs() == reader.element ? add.getRhs() : add.getLhs());
  if (!other || other.getOwner() != reader.op.getBody() ||
      !other.hasOneUse())
    return {};
  // c read at its own indices, so the last loop is C's column.
  if (!reader.op.getMatchingIndexingMap(
              reader.op.getMatchingOpOperand(reader.element))
           .isIdentity())
    return {};
  OpOperand *input = reader.op.getMatchingOpOperand(other);
  auto t = dyn_cast<MemRefType>(input->get().getType());
  AffineMap map = reader.op.getMatchingIndexingMap(input);
  unsigned rank = map.getNumDims();
  if (!reader.op.isDpsInput(input) || !t || t.getRank() != 1 ||
      !t.getElementType().isF32() || !t.getLayout().isIdentity() ||
      map.getNumResults() != 1 ||
      map.getResult(0) != getAffineDimExpr(rank - 1, map.getContext()) ||
      t.getDimSize(0) != cast<MemRefType>(c.getType()).getDimSize(rank - 1))
    return {};
  Value m = input->get();
  if (!availableAt(m, gemm)) // the GEMM call reads the bias there
    return {};
  Value root = rootBuffer(m);
  for (Operation *op = gemm->getNextNode(); op != reader.op.getOperation();
       op = op->getNextNode())
    if (mayWrite(op, root))
      return {};
  return {reader, add, input};
}

/// Drops the bias from the reader (the GEMM adds it now): the addition, and
/// the bias input with its indexing map (the generic is rebuilt without
/// it). A reader that then copies C onto itself goes. Returns the reader
/// (new or old), or null when it went.
linalg::GenericOp dropBias(Bias &bias) {
  linalg::GenericOp g = bias.reader.op;
  bias.add.getResult().replaceAllUsesWith(bias.reader.element);
  bias.add.erase();
  unsigned drop = bias.input->getOperandNumber();
  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  for (OpOperand *in : g.getDpsInputOperands())
    if (in->getOperandNumber() != drop) {
      inputs.push_back(in->get());
      maps.push_back(g.getMatchingIndexingMap(in));
    }
  for (OpOperand &out : g.getDpsInitsMutable())
    maps.push_back(g.getMatchingIndexingMap(&out));
  OpBuilder b(g);
  auto rebuilt = linalg::GenericOp::create(
      b, g.getLoc(), TypeRange{}, inputs, g.getDpsInits(), maps,
      g.getIteratorTypesArray());
  rebuilt->setDiscardableAttrs(g->getDiscardableAttrDictionary());
  rebuilt.getRegion().takeBody(g.getRegion());
  rebuilt.getBody()->eraseArgument(drop);
  g.erase();
  // C copied onto itself.
  if (isPlainCopy(rebuilt) &&
      rebuilt.getDpsInputs()[0] == rebuilt.getDpsInits()[0]) {
    rebuilt.erase();
    return {};
  }
  return rebuilt;
}

/// The scale buffers for the GEMM call: those written since their load
/// copied into new buffers right after it (freed after `call`).
void materializeScales(Dequantization &d, OpBuilder &b) {
  for (int i = 0; i < 2; ++i) {
    if (!d.ownBuffer[i])
      continue;
    if (i == 1 && d.loads[1] == d.loads[0]) { // x * x: one buffer
      d.scales[1] = d.scales[0];
      d.ownBuffer[1] = false;
      continue;
    }
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointAfter(d.loads[i]);
    Location loc = d.loads[i].getLoc();
    Value own = memref::AllocOp::create(
        b, loc, MemRefType::get({}, b.getF32Type()), b.getI64IntegerAttr(64));
    memref::StoreOp::create(b, loc, d.loads[i].getResult(), own);
    d.scales[i] = own;
  }
}

void freeOwnScales(const Dequantization &d, func::CallOp call) {
  OpBuilder b(call->getContext());
  b.setInsertionPointAfter(call);
  for (int i = 0; i < 2; ++i)
    if (d.ownBuffer[i])
      memref::DeallocOp::create(b, call.getLoc(), d.scales[i]);
}

/// Drops the dequantization from the consumer's body (the GEMM does it now)
/// and whatever only it used.
void dropDequantization(Dequantization &d) {
  auto scales = d.mul.getLhs() == d.element
                    ? d.mul.getRhs().getDefiningOp<arith::MulFOp>()
                    : d.mul.getLhs().getDefiningOp<arith::MulFOp>();
  d.mul.getResult().replaceAllUsesWith(d.element);
  d.mul.erase();
  if (!scales.getResult().use_empty())
    return;
  Operation *loads[] = {scales.getLhs().getDefiningOp(),
                        scales.getRhs().getDefiningOp()};
  if (loads[1] == loads[0]) // x * x
    loads[1] = nullptr;
  scales.erase();
  for (Operation *l : loads)
    if (l && l->use_empty())
      l->erase();
}

/// The FP8 GEMM entry point for element types `a` x `b`, or "".
StringRef fp8Callee(Type a, Type b) {
  bool a4 = isa<Float8E4M3FNType>(a), a5 = isa<Float8E5M2Type>(a);
  bool b4 = isa<Float8E4M3FNType>(b), b5 = isa<Float8E5M2Type>(b);
  if (a4 && b4)
    return "lpc_rt_gemm_f8e4m3_f8e4m3";
  if (a4 && b5)
    return "lpc_rt_gemm_f8e4m3_f8e5m2";
  if (a5 && b4)
    return "lpc_rt_gemm_f8e5m2_f8e4m3";
  return "";
}

/// A new buffer holding `v` (static, rank >= 2) with its last two
/// dimensions swapped, filled by a linalg.transpose at `b`'s insertion
/// point, and freed after `after`.
Value transposedCopy(OpBuilder &b, Location loc, Value v, Operation *after) {
  auto t = cast<MemRefType>(v.getType());
  int64_t rank = t.getRank();
  SmallVector<int64_t> shape(t.getShape());
  std::swap(shape[rank - 1], shape[rank - 2]);
  SmallVector<int64_t> perm;
  for (int64_t i = 0; i < rank; ++i)
    perm.push_back(i);
  std::swap(perm[rank - 1], perm[rank - 2]);
  Value out = memref::AllocOp::create(
      b, loc, MemRefType::get(shape, t.getElementType()),
      b.getI64IntegerAttr(64));
  linalg::TransposeOp::create(b, loc, v, out, perm);
  OpBuilder after_(after->getContext());
  after_.setInsertionPointAfter(after);
  memref::DeallocOp::create(after_, loc, out);
  return out;
}

/// A new row-major buffer holding `v` (a static view of a constant global,
/// host memory to a GPU), filled by an identity linalg.generic at `b`'s
/// insertion point, which the GPU pipeline makes a kernel reading the table
/// from its PTX module (lpc-sink-constant-globals); freed after `after`.
Value deviceCopy(OpBuilder &b, Location loc, Value v, Operation *after) {
  auto t = cast<MemRefType>(v.getType());
  Value out = memref::AllocOp::create(
      b, loc, MemRefType::get(t.getShape(), t.getElementType()),
      b.getI64IntegerAttr(64));
  AffineMap id = b.getMultiDimIdentityMap(t.getRank());
  SmallVector<utils::IteratorType> par(t.getRank(),
                                       utils::IteratorType::parallel);
  linalg::GenericOp::create(
      b, loc, ValueRange{v}, ValueRange{out}, ArrayRef<AffineMap>{id, id}, par,
      [](OpBuilder &nb, Location nl, ValueRange args) {
        linalg::YieldOp::create(nb, nl, args[0]);
      });
  OpBuilder after_(after->getContext());
  after_.setInsertionPointAfter(after);
  memref::DeallocOp::create(after_, loc, out);
  return out;
}

struct LpcGemmToCallsPass
    : ::mlir::lpc::impl::LpcGemmToCallsBase<LpcGemmToCallsPass> {
  using LpcGemmToCallsBase::LpcGemmToCallsBase;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<linalg::GenericOp> gemms;
    module.walk([&](linalg::GenericOp g) {
      if (g->hasAttr("lpc_gemm") && g.hasPureBufferSemantics())
        gemms.push_back(g);
    });
    OpBuilder b(module.getContext());
    SymbolTableCollection symbols;
    for (linalg::GenericOp g : gemms) {
      auto flags = g->getAttrOfType<DenseBoolArrayAttr>("lpc_gemm");
      Value a = g.getDpsInputs()[0], w = g.getDpsInputs()[1];
      Value c = g.getDpsInits()[0];
      Type at = cast<MemRefType>(a.getType()).getElementType();
      Type wt = cast<MemRefType>(w.getType()).getElementType();
      Type ct = cast<MemRefType>(c.getType()).getElementType();
      StringRef callee;
      if (at.isF32() && wt.isF32() && ct.isF32())
        callee = "lpc_rt_gemm_f32";
      else if (at.isBF16() && wt.isBF16() && ct.isF32())
        callee = "lpc_rt_gemm_bf16";
      else if (at.isF16() && wt.isF16() && ct.isF32())
        callee = "lpc_rt_gemm_f16";
      else if (fp8 && ct.isF32() && !fp8Callee(at, wt).empty())
        callee = fp8Callee(at, wt);
      else
        continue; // stays a loop nest
      Operation *init = deadInit(g, c); // before the call goes in
      b.setInsertionPoint(g);
      Location loc = g.getLoc();
      // A GPU GEMM reads device memory: a constant table (host memory) goes
      // through a kernel's copy first.
      if (deviceOperands)
        for (Value *v : {&a, &w}) {
          SmallVector<Operation *> chain;
          if (cast<MemRefType>(v->getType()).hasStaticShape() &&
              mlir::lpc::constantGlobalChain(*v, symbols, chain))
            *v = deviceCopy(b, loc, *v, g);
        }
      int64_t aRank = cast<MemRefType>(a.getType()).getRank();
      int64_t wRank = cast<MemRefType>(w.getType()).getRank();
      auto contiguous = [](Value v) {
        auto t = cast<MemRefType>(v.getType());
        return t.hasStaticShape() && t.getLayout().isIdentity();
      };
      // cuBLASLt's FP8 GEMMs take A [M, K] and B as [N, K] only.
      bool isFP8 = callee.starts_with("lpc_rt_gemm_f8");
      bool transA = flags[0], transB = flags[1];
      if (isFP8) {
        if (!contiguous(a) || !contiguous(w))
          continue;
        if (transA) {
          a = transposedCopy(b, loc, a, g);
          transA = false;
        }
        if (!transB) {
          w = transposedCopy(b, loc, w, g);
          transB = true;
        }
      }
      // A GEMM of a batch of row blocks against one weight (a Linear layer
      // on [batch, seq, features]) is one GEMM of all the rows: the same
      // products, and the libraries run one large GEMM faster than a
      // batch of smaller ones.
      bool broadcastB = wRank == 2 && aRank > 2;
      bool flatten = broadcastB && !transA && contiguous(a) && contiguous(c);
      if (flatten)
        broadcastB = false;
      Value a3 = view3d(b, loc, a, flatten), w3 = view3d(b, loc, w);
      if (!a3 || !w3)
        continue; // non-contiguous operand: the loop nest is still right
      if (!contiguous(c) || cast<MemRefType>(c.getType()).getRank() < 2)
        continue; // C not contiguous: nothing has changed yet
      std::string name = callee.str();
      // An FP8 GEMM applies the dequantization (the operands' scale
      // inverses) itself, as cuBLASLt's A/B scale pointers.
      Dequantization deq;
      if (isFP8 && (deq = matchDequantization(g, c))) {
        materializeScales(deq, b);
        dropDequantization(deq);
        name += "_scaled";
      }
      // An f32 result the reader adds a bias to: the GEMM adds it (cuBLASLt's
      // bias epilogue), and a reader left copying C gives C's place to its
      // output (storeIntoCopyTarget).
      Bias bias;
      Value biasBuffer;
      linalg::GenericOp biasReader;
      if (!isFP8 && (bias = matchBias(g, c))) {
        biasBuffer = bias.input->get();
        biasReader = dropBias(bias);
        name += "_bias";
      }
      // A bf16 GEMM (or a dequantized FP8 one) whose f32 result is only
      // rounded to bf16 stores bf16 itself: the library rounds the same
      // way (to nearest even; only cuBLASLt's subnormal results, below
      // 2^-126, flush to zero), and C takes half the bytes to write and
      // to read back.
      linalg::GenericOp roundOnly;
      Value cf32 = c;
      if ((name == "lpc_rt_gemm_bf16" || deq) &&
          (roundOnly = bf16OnlyConsumer(g, c, init))) {
        name = deq ? name + "_bf16" : "lpc_rt_gemm_bf16_bf16";
        auto alloc = c.getDefiningOp<memref::AllocOp>();
        OpBuilder ab(alloc);
        auto bt = cast<MemRefType>(cast<MemRefType>(c.getType()).clone(
            ab.getBF16Type()));
        c = memref::AllocOp::create(ab, alloc.getLoc(), bt,
                                    alloc.getAlignmentAttr());
      }
      Value c3 = view3d(b, loc, c, flatten); // (contiguous, checked above)
      SmallVector<Value> operands{a3, w3, c3};
      if (deq)
        operands.append({deq.scales[0], deq.scales[1]});
      if (bias)
        operands.push_back(memref::CastOp::create(
            b, loc, MemRefType::get({ShapedType::kDynamic}, b.getF32Type()),
            biasBuffer));
      auto i64 = [&](int64_t v) -> Value {
        return arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(v));
      };
      operands.append({i64(transA), i64(transB), i64(broadcastB)});
      auto fn = module.lookupSymbol<func::FuncOp>(name);
      if (!fn) {
        OpBuilder mb(module.getBodyRegion());
        fn = func::FuncOp::create(
            mb, module.getLoc(), name,
            mb.getFunctionType(ValueRange(operands).getTypes(), {}));
        fn.setPrivate();
        fn->setAttr("llvm.emit_c_interface", mb.getUnitAttr());
      }
      auto call = func::CallOp::create(b, loc, fn, operands);
      // The call writes C and only reads its other buffers: the loop
      // stage's passes may move kernels that only read A or B past it
      // (lib/Conversion/KernelBuffers.h).
      call->setAttr(lpc::kWrittenOperandsAttr, b.getDenseI64ArrayAttr({2}));
      if (deq)
        freeOwnScales(deq, call);
      if (g->hasAttr("lpc_fast_accum"))
        call->setAttr("lpc_fast_accum", b.getUnitAttr());
      if (init)
        init->erase();
      g.erase();
      if (roundOnly) {
        readRoundedInstead(roundOnly, cf32, c);
        for (Operation *u : llvm::make_early_inc_range(cf32.getUsers())) {
          auto dealloc = cast<memref::DeallocOp>(u); // nothing else is left
          b.setInsertionPoint(dealloc);
          memref::DeallocOp::create(b, dealloc.getLoc(), c);
          dealloc.erase();
        }
        cf32.getDefiningOp()->erase();
        storeIntoCopyTarget(call, 2, roundOnly, c, flatten);
      }
      if (biasReader)
        storeIntoCopyTarget(call, 2, biasReader, c, flatten);
    }
    eraseWriteOnlyBuffers(module);
  }
};

} // namespace
