//===- Utils.h - Helpers shared by the CPU passes (internal) ----*- C++ -*-===//
#ifndef DISC_LIB_TRANSFORMS_CPU_UTILS_H
#define DISC_LIB_TRANSFORMS_CPU_UTILS_H

#include "mlir/IR/Value.h"
#include "llvm/ADT/StringRef.h"

namespace mlir::disc {

/// Unit attribute of an outlined kernel that runs in chunks of its outer
/// loop: set by disc-parallelize-kernels, read by disc-lower-parallel-calls.
inline constexpr llvm::StringLiteral kParallelAttr = "disc.parallel";

/// Unit attribute of the `scf.for` over the rows that disc-stitch-rows
/// makes (from 0, step 1, rows independent): disc-parallelize-kernels runs
/// it in chunks.
inline constexpr llvm::StringLiteral kRowLoopAttr = "disc.row_loop";

/// Unit attribute of the `scf.if` of disc-stitch-rows that chooses, by the
/// row length at run time, between its row loop and the separate nests:
/// disc-outline-kernels outlines the loop nests of each branch.
inline constexpr llvm::StringLiteral kRowVersionsAttr = "disc.row_versions";

/// The buffer a memref value views on the CPU path: its allocation, global
/// or block argument, through views, casts and reshapes; null when it comes
/// from anything else (a loop result, a call). Used for the kernels'
/// `noalias` parameters (disc-outline-kernels) and to keep kernels whose
/// inputs view their output serial (disc-parallelize-kernels).
Value bufferRoot(Value v);

} // namespace mlir::disc

#endif // DISC_LIB_TRANSFORMS_CPU_UTILS_H
