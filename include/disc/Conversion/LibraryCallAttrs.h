//===- LibraryCallAttrs.h - marks of library-call ops ---------*- C++ -*-===//
//
// The attributes `markLibraryCalls` (lib/Conversion/DiscToLinalg/
// LibraryCalls.h) sets on the scheduled function, for the passes that must
// treat a library call and the post-ops fused into it as one unit (the
// memory model, rematerialization).
//
//===----------------------------------------------------------------------===//
#ifndef DISC_CONVERSION_LIBRARYCALLATTRS_H
#define DISC_CONVERSION_LIBRARYCALLATTRS_H

#include "mlir/IR/Operation.h"
#include "llvm/ADT/StringRef.h"

namespace mlir::disc {

/// Unit attribute of an op lowered to a runtime library call.
inline constexpr llvm::StringLiteral kLibraryCallAttr = "disc.library_call";
/// On such a call: the post-ops fused into it (["bias", "add", "relu"], a
/// subset in that order).
inline constexpr llvm::StringLiteral kPostOpsAttr = "disc.post_ops";
/// On a fused post-op: the index of its operand that carries the chain.
inline constexpr llvm::StringLiteral kFusedIntoCallAttr =
    "disc.fused_into_call";

/// True when `op` runs as (part of) a library call: the call itself, a call
/// with post-ops, or a post-op fused into one. Such ops lower as one unit
/// with the call and cannot be cloned on their own.
inline bool isLibraryCallUnit(Operation *op) {
  return op->hasAttr(kLibraryCallAttr) || op->hasAttr(kPostOpsAttr) ||
         op->hasAttr(kFusedIntoCallAttr);
}

} // namespace mlir::disc

#endif // DISC_CONVERSION_LIBRARYCALLATTRS_H
