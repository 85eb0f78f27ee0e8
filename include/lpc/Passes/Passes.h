//===- Passes.h - lpc passes ------------------------------------*- C++ -*-===//
#ifndef LPC_PASSES_PASSES_H
#define LPC_PASSES_PASSES_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir {
namespace lpc {

#define GEN_PASS_DECL
#include "lpc/Passes/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "lpc/Passes/Passes.h.inc"

} // namespace lpc
} // namespace mlir

#endif // LPC_PASSES_PASSES_H
