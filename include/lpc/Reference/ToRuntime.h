//===- ToRuntime.h - reference types in runtime terms ----------*- C++ -*-===//
//
// The runtime (no MLIR) has its own element types (lpc/Runtime/Tensor.h)
// and the one implementation of parameter initialization
// (lpc/Runtime/Init.h); these map the reference's onto them. A separate
// header: including the runtime's `::lpc` namespace next to `using
// namespace mlir` makes `lpc::` ambiguous.
//
//===----------------------------------------------------------------------===//

#ifndef LPC_REFERENCE_TORUNTIME_H
#define LPC_REFERENCE_TORUNTIME_H

#include "lpc/Reference/Evaluator.h"
#include "lpc/Runtime/Init.h"
#include "lpc/Runtime/Tensor.h"

namespace mlir {
namespace lpc {
namespace ref {

::lpc::rt::InitSpec toRuntimeInit(const InitSpec &spec);
::lpc::rt::DType toRuntimeDType(DType dtype);

} // namespace ref
} // namespace lpc
} // namespace mlir

#endif // LPC_REFERENCE_TORUNTIME_H
