//===- OutlineParallelLoops.cpp - --lpc-outline-parallel-loops ------------===//
//
// The first half of threading the host code: each large top-level
// scf.parallel nest becomes a function over a range of its (flattened) outer
// iterations, called once over the whole range. lpc-lower-parallel-calls
// later hands that range to the runtime's thread pool. Only nests without
// reductions are taken, so splitting the range cannot change any result.
//
//===----------------------------------------------------------------------===//

#include "Outlining.h"
#include "lpc/Conversion/Passes.h"

#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"

namespace mlir {
namespace lpc {
#define GEN_PASS_DEF_LPCOUTLINEPARALLELLOOPS
#include "lpc/Conversion/Passes.h.inc"
} // namespace lpc
} // namespace mlir

using namespace mlir;
using mlir::lpc::lowering::rootBuffer;

namespace {

/// Iterations of dimension d, or nullopt when not static.
std::optional<int64_t> staticTrip(scf::ParallelOp p, unsigned d) {
  auto lb = getConstantIntValue(p.getLowerBound()[d]);
  auto ub = getConstantIntValue(p.getUpperBound()[d]);
  auto st = getConstantIntValue(p.getStep()[d]);
  if (!lb || !ub || !st || *st <= 0)
    return std::nullopt;
  return *ub <= *lb ? 0 : (*ub - *lb + *st - 1) / *st;
}

/// ceildiv(ub - lb, step) as index arithmetic (folds when static).
Value tripCount(OpBuilder &b, Location l, Value lb, Value ub, Value step) {
  Value span = arith::SubIOp::create(b, l, ub, lb);
  return arith::CeilDivSIOp::create(b, l, span, step);
}

struct LpcOutlineParallelLoopsPass
    : ::mlir::lpc::impl::LpcOutlineParallelLoopsBase<
          LpcOutlineParallelLoopsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    for (func::FuncOp f : lpc::lowering::functionsToOutline(module)) {
      SmallVector<scf::ParallelOp> nests;
      for (Block &block : f.getBody())
        for (auto p : block.getOps<scf::ParallelOp>())
          if (p.getInitVals().empty() && worthOutlining(p))
            nests.push_back(p);
      unsigned n = 0;
      Operation *after = f;
      for (scf::ParallelOp p : nests)
        after = outline(symbols, f, after, p, n++);
    }
  }

  /// Innermost iterations of the whole nest (nested loops counted when
  /// static; dynamic nests are taken: the runtime decides).
  bool worthOutlining(scf::ParallelOp p) {
    int64_t work = 1;
    for (unsigned d = 0; d < p.getNumLoops(); ++d) {
      auto t = staticTrip(p, d);
      if (!t)
        return true;
      work *= *t;
    }
    return work * innerWork(p) >= minWork;
  }

  /// Iterations of the static loops inside one iteration of p (1 if none):
  /// scf.for, and scf.parallel (a column tile of lpc-parallel-columns holds
  /// the columns' scf.parallel inside its row loops).
  static int64_t innerWork(scf::ParallelOp p) {
    int64_t most = 1;
    p.getBody()->walk([&](Operation *inner) {
      if (!isa<scf::ForOp, scf::ParallelOp>(inner))
        return;
      int64_t w = 1;
      for (Operation *o = inner; o && o != p.getOperation();
           o = o->getParentOp()) {
        if (auto ff = dyn_cast<scf::ForOp>(o)) {
          if (std::optional<APInt> n = ff.getStaticTripCount();
              n && n->getSExtValue() > 0)
            w *= n->getSExtValue();
        } else if (auto pp = dyn_cast<scf::ParallelOp>(o)) {
          for (unsigned d = 0; d < pp.getNumLoops(); ++d)
            if (std::optional<int64_t> t = staticTrip(pp, d); t && *t > 0)
              w *= *t;
        }
      }
      most = std::max(most, w);
    });
    return most;
  }

  /// Outlines p into a new function placed after `after`; returns it.
  Operation *outline(SymbolTable &symbols, func::FuncOp f, Operation *after,
                     scf::ParallelOp p, unsigned index) {
    Location loc = p.getLoc();
    MLIRContext *ctx = &getContext();
    unsigned rank = p.getNumLoops();
    // Outer dimensions are flattened and split; the innermost stays a whole
    // loop (its static bounds let LLVM vectorize it) unless it is the only
    // one.
    unsigned outer = rank == 1 ? 1 : rank - 1;

    // Bounds and everything the body reads from outside; lo, hi first.
    Type indexTy = IndexType::get(ctx);
    lpc::lowering::OutlinedNest o = lpc::lowering::outlineNest(
        symbols, f, after, p, "par", index, {indexTy, indexTy});
    func::FuncOp body = o.body;
    SmallVector<Value> &captures = o.captures;
    IRMapping &map = o.map;
    body->setAttr("lpc.parallel_body", UnitAttr::get(ctx));

    // The fewest outer iterations worth handing to a thread.
    int64_t innerIters = innerWork(p);
    if (rank > 1)
      innerIters *= staticTrip(p, rank - 1).value_or(1);
    int64_t grain =
        std::max<int64_t>(1, (minWork + innerIters - 1) / innerIters);
    body->setAttr("lpc.parallel_grain",
                  IntegerAttr::get(IntegerType::get(ctx, 64), grain));

    Block *entry = &body.front();
    OpBuilder b = OpBuilder::atBlockEnd(entry);

    auto mapped = [&](ValueRange vs) {
      SmallVector<Value> r;
      for (Value v : vs)
        r.push_back(map.lookup(v));
      return r;
    };
    SmallVector<Value> lbs = mapped(p.getLowerBound());
    SmallVector<Value> ubs = mapped(p.getUpperBound());
    SmallVector<Value> steps = mapped(p.getStep());
    SmallVector<Value> trips;
    for (unsigned d = 0; d < outer; ++d)
      trips.push_back(tripCount(b, loc, lbs[d], ubs[d], steps[d]));

    Value one = arith::ConstantIndexOp::create(b, loc, 1);
    auto flat = scf::ForOp::create(b, loc, entry->getArgument(0),
                                   entry->getArgument(1), one);
    b.setInsertionPointToStart(flat.getBody());
    // Delinearize the flat outer index (row-major, last outer dim fastest).
    SmallVector<Value> ivs(rank);
    Value rest = flat.getInductionVar();
    for (int d = outer - 1; d >= 0; --d) {
      Value k = d == 0 ? rest : arith::RemUIOp::create(b, loc, rest, trips[d]);
      if (d > 0)
        rest = arith::DivUIOp::create(b, loc, rest, trips[d]);
      ivs[d] = arith::AddIOp::create(
          b, loc, lbs[d], arith::MulIOp::create(b, loc, k, steps[d]));
    }
    Block *src = p.getBody();
    auto cloneBody = [&](OpBuilder &at) {
      for (unsigned d = 0; d < rank; ++d)
        map.map(src->getArgument(d), ivs[d]);
      for (Operation &op : src->without_terminator())
        at.clone(op, map);
    };
    if (rank == 1) {
      cloneBody(b);
    } else {
      auto inner = scf::ForOp::create(b, loc, lbs[rank - 1], ubs[rank - 1],
                                      steps[rank - 1]);
      ivs[rank - 1] = inner.getInductionVar();
      OpBuilder ib = OpBuilder::atBlockBegin(inner.getBody());
      ib.setInsertionPoint(inner.getBody()->getTerminator());
      cloneBody(ib);
    }
    b.setInsertionPointToEnd(entry);
    func::ReturnOp::create(b, loc);

    // The call over the whole range replaces the nest.
    OpBuilder cb(p);
    Value total = arith::ConstantIndexOp::create(cb, loc, 1);
    for (unsigned d = 0; d < outer; ++d)
      total = arith::MulIOp::create(cb, loc, total,
                                    tripCount(cb, loc, p.getLowerBound()[d],
                                              p.getUpperBound()[d],
                                              p.getStep()[d]));
    SmallVector<Value> args{arith::ConstantIndexOp::create(cb, loc, 0), total};
    args.append(captures.begin(), captures.end());
    func::CallOp::create(cb, loc, body, args);
    p.erase();
    return body;
  }
};

} // namespace
