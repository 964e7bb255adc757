//===- DiscShapeDialect.h - disc_shape dialect ------------------*- C++ -*-===//
#ifndef DISC_DIALECT_DISCSHAPE_IR_DISCSHAPEDIALECT_H
#define DISC_DIALECT_DISCSHAPE_IR_DISCSHAPEDIALECT_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/AffineExpr.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/SymbolTable.h"

#include "disc/Dialect/DiscShape/IR/DiscShapeOpsDialect.h.inc"
#define GET_ATTRDEF_CLASSES
#include "disc/Dialect/DiscShape/IR/DiscShapeAttrs.h.inc"
#define GET_OP_CLASSES
#include "disc/Dialect/DiscShape/IR/DiscShapeOps.h.inc"

namespace mlir::disc_shape {

/// Builds a dim entry for `expr`, whose affine symbol i stands for
/// `symbols[i]`: an IntegerAttr for a constant, the FlatSymbolRefAttr for a
/// lone symbol, else an ExprAttr over the symbols it uses.
Attribute buildDimEntry(MLIRContext *ctx, AffineExpr expr,
                        ArrayRef<FlatSymbolRefAttr> symbols);

/// Decodes a dim entry into an affine expression; `symbolIndex` maps a
/// symbol name to the affine symbol position to use (returning -1 for an
/// unknown name makes the decode fail).
FailureOr<AffineExpr>
decodeDimEntry(Attribute entry, llvm::function_ref<int(StringRef)> symbolIndex);

/// Checks that `entry` is a well-formed dim entry whose symbol refs name
/// `disc_shape.symbolic_dim` ops visible from `from`; `staticSize` (if not
/// dynamic) must agree with a constant entry.
LogicalResult
verifyDimEntry(Operation *from, Attribute entry, int64_t staticSize,
               llvm::function_ref<InFlightDiagnostic()> emitError);

} // namespace mlir::disc_shape

#endif // DISC_DIALECT_DISCSHAPE_IR_DISCSHAPEDIALECT_H
