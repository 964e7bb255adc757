//===- Passes.h - DISC CPU passes -------------------------------*- C++ -*-===//
#ifndef DISC_TRANSFORMS_CPU_PASSES_H
#define DISC_TRANSFORMS_CPU_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::disc {
#define GEN_PASS_DECL
#include "disc/Transforms/CPU/Passes.h.inc"
#define GEN_PASS_REGISTRATION
#include "disc/Transforms/CPU/Passes.h.inc"
} // namespace mlir::disc

#endif // DISC_TRANSFORMS_CPU_PASSES_H
