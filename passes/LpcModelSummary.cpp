//===- LpcModelSummary.cpp - --lpc-model-summary --------------------------===//
//
// Lists each model's parameters and data inputs with element counts and
// FP32 bytes. Analysis only: the IR is not changed.
//
//===----------------------------------------------------------------------===//

#include "lpc/Dialect/LpcOps.h"
#include "lpc/Passes/Passes.h"
#include "lpc/Passes/PrecisionUtils.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdio>

namespace mlir {
namespace lpc {
#define GEN_PASS_DEF_LPCMODELSUMMARY
#include "lpc/Passes/Passes.h.inc"
} // namespace lpc
} // namespace mlir


using namespace mlir;
using namespace mlir::lpc;

namespace {

std::string shapeString(RankedTensorType t) {
  std::string s;
  llvm::raw_string_ostream os(s);
  for (int64_t d : t.getShape())
    os << d << "x";
  os << t.getElementType();
  return s;
}

struct Row {
  std::string what, name, shape, detail;
  uint64_t elements = 0, bytes = 0;
};

struct LpcModelSummaryPass
    : ::mlir::lpc::impl::LpcModelSummaryBase<LpcModelSummaryPass> {
  using Base::Base;

  void runOnOperation() override {
    std::string text;
    llvm::raw_string_ostream os(text);
    llvm::json::Array models;

    getOperation().walk([&](func::FuncOp fn) {
      SmallVector<Row> rows;
      uint64_t paramElems = 0, paramBytes = 0, inputBytes = 0, bufferBytes = 0;
      fn.walk([&](Operation *op) {
        Row row;
        RankedTensorType type;
        if (auto p = dyn_cast<ParamOp>(op)) {
          type = p.getType();
          row.what = "param";
          row.name = p.getName().str();
          row.detail = stringifyInitKind(p.getInit()).str();
        } else if (auto buf = dyn_cast<BufferOp>(op)) {
          // State that is not trained (BatchNorm's running statistics).
          type = buf.getType();
          row.what = "buffer";
          row.name = buf.getName().str();
          char value[32];
          std::snprintf(value, sizeof value, "value %g",
                        buf.getValue().convertToDouble());
          row.detail = value;
        } else if (auto in = dyn_cast<InputOp>(op)) {
          type = in.getType();
          row.what = "input";
          row.name = in.getName().str();
          row.detail = stringifyInputKind(in.getKind()).str();
        } else {
          return;
        }
        row.shape = shapeString(type);
        row.elements = type.getNumElements();
        row.bytes = row.elements *
                    ((type.getElementTypeBitWidth() + 7) / 8);
        if (row.what == "param") {
          paramElems += row.elements;
          paramBytes += row.bytes;
        } else if (row.what == "buffer") {
          bufferBytes += row.bytes;
        } else {
          inputBytes += row.bytes;
        }
        rows.push_back(std::move(row));
      });
      if (rows.empty())
        return;

      if (json) {
        llvm::json::Array entries;
        for (const Row &r : rows)
          entries.push_back(llvm::json::Object{{"kind", r.what},
                                               {"name", r.name},
                                               {"shape", r.shape},
                                               {"detail", r.detail},
                                               {"elements", r.elements},
                                               {"bytes", r.bytes}});
        llvm::json::Object model{{"model", fn.getSymName().str()},
                                 {"entries", std::move(entries)},
                                 {"param_elements", paramElems},
                                 {"param_bytes", paramBytes},
                                 {"input_bytes", inputBytes}};
        if (bufferBytes)
          model["buffer_bytes"] = bufferBytes;
        models.push_back(std::move(model));
        return;
      }

      size_t wKind = 5, wName = 4, wShape = 5, wDetail = 9;
      for (const Row &r : rows) {
        wKind = std::max(wKind, r.what.size());
        wName = std::max(wName, r.name.size());
        wShape = std::max(wShape, r.shape.size());
        wDetail = std::max(wDetail, r.detail.size());
      }
      os << "model @" << fn.getSymName() << "\n";
      os << llvm::formatv("  {0}  {1}  {2}  {3}  {4,12}  {5,10}\n",
                          padRight("kind", wKind),
                          padRight("name", wName),
                          padRight("shape", wShape),
                          padRight("init/kind", wDetail),
                          "elements", "bytes");
      for (const Row &r : rows)
        os << llvm::formatv(
            "  {0}  {1}  {2}  {3}  {4,12}  {5,10}\n", padRight(r.what, wKind),
            padRight(r.name, wName),
            padRight(r.shape, wShape),
            padRight(r.detail, wDetail),
            r.elements, humanBytes(r.bytes));
      os << llvm::formatv("  total: {0} parameters ({1} as FP32 masters), "
                          "{2}{3} of inputs per batch\n",
                          paramElems, humanBytes(paramBytes),
                          bufferBytes ? humanBytes(bufferBytes) + " of buffers, "
                                      : std::string(),
                          humanBytes(inputBytes));
    });

    if (json) {
      os << llvm::formatv("{0:2}", llvm::json::Value(std::move(models)));
      os << "\n";
    }

    if (failed(writeReport(text, outputFile, "lpc-model-summary")))
      signalPassFailure();
  }
};

} // namespace
