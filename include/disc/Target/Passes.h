//===- Passes.h - passes that record what a model.so carries ----*- C++ -*-===//
#ifndef DISC_TARGET_PASSES_H
#define DISC_TARGET_PASSES_H

#include "disc/Dialect/DiscShape/IR/DiscShapeDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Pass/Pass.h"

namespace mlir::disc {
#define GEN_PASS_DECL
#include "disc/Target/Passes.h.inc"
#define GEN_PASS_REGISTRATION
#include "disc/Target/Passes.h.inc"
} // namespace mlir::disc

#endif // DISC_TARGET_PASSES_H
