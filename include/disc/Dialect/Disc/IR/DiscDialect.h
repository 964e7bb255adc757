//===- DiscDialect.h - disc dialect declarations ----------------*- C++ -*-===//
#ifndef DISC_DIALECT_DISC_IR_DISCDIALECT_H
#define DISC_DIALECT_DISC_IR_DISCDIALECT_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "disc/Dialect/Disc/IR/DiscEnums.h.inc"
#include "disc/Dialect/Disc/IR/DiscOpsDialect.h.inc"
#define GET_ATTRDEF_CLASSES
#include "disc/Dialect/Disc/IR/DiscAttrs.h.inc"
#define GET_OP_CLASSES
#include "disc/Dialect/Disc/IR/DiscOps.h.inc"

namespace mlir::disc {
/// Discardable attributes of `disc.slice` for bounds that an op's contract
/// fixes (TopK `k`, Split sizes; see the op's description): message
/// templates of the run-time checks, `{0}` start, `{1}` end, `{2}` dim,
/// `{3}` end - start.
inline constexpr llvm::StringLiteral kSliceBoundsMessageAttr =
    "disc.bounds_message";
inline constexpr llvm::StringLiteral kSliceEndMessageAttr = "disc.end_message";
} // namespace mlir::disc

#endif // DISC_DIALECT_DISC_IR_DISCDIALECT_H
