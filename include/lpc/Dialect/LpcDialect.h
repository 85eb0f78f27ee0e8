//===- LpcDialect.h - the lpc dialect ---------------------------*- C++ -*-===//
#ifndef LPC_DIALECT_LPCDIALECT_H
#define LPC_DIALECT_LPCDIALECT_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Dialect.h"

#include "lpc/Dialect/LpcDialect.h.inc"

#endif // LPC_DIALECT_LPCDIALECT_H
