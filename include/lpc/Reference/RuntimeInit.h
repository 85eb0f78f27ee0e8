//===- RuntimeInit.h - reference initializers, runtime terms --*- C++ -*-===//
//
// The runtime (no MLIR) has the one implementation of parameter
// initialization (lpc/Runtime/Init.h); this maps the reference's InitSpec
// onto it. A separate header: including the runtime's `::lpc` namespace
// next to `using namespace mlir` makes `lpc::` ambiguous.
//
//===----------------------------------------------------------------------===//

#ifndef LPC_REFERENCE_RUNTIMEINIT_H
#define LPC_REFERENCE_RUNTIMEINIT_H

#include "lpc/Reference/Evaluator.h"
#include "lpc/Runtime/Init.h"

namespace mlir {
namespace lpc {
namespace ref {

::lpc::rt::InitSpec toRuntimeInit(const InitSpec &spec);

} // namespace ref
} // namespace lpc
} // namespace mlir

#endif // LPC_REFERENCE_RUNTIMEINIT_H
