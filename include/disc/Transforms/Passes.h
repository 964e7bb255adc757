//===- Passes.h - DISC transformation passes --------------------*- C++ -*-===//
#ifndef DISC_TRANSFORMS_PASSES_H
#define DISC_TRANSFORMS_PASSES_H

#include "disc/Dialect/DiscShape/IR/DiscShapeDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Pass/Pass.h"

namespace mlir::disc {
#define GEN_PASS_DECL
#include "disc/Transforms/Passes.h.inc"
#define GEN_PASS_REGISTRATION
#include "disc/Transforms/Passes.h.inc"
} // namespace mlir::disc

#endif // DISC_TRANSFORMS_PASSES_H
