//===- Passes.h - DISC CUDA passes ------------------------------*- C++ -*-===//
#ifndef DISC_TRANSFORMS_GPU_PASSES_H
#define DISC_TRANSFORMS_GPU_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::disc {
#define GEN_PASS_DECL
#include "disc/Transforms/GPU/Passes.h.inc"
#define GEN_PASS_REGISTRATION
#include "disc/Transforms/GPU/Passes.h.inc"
} // namespace mlir::disc

#endif // DISC_TRANSFORMS_GPU_PASSES_H
