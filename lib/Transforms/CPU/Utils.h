//===- Utils.h - Helpers shared by the CPU passes (internal) ----*- C++ -*-===//
#ifndef DISC_LIB_TRANSFORMS_CPU_UTILS_H
#define DISC_LIB_TRANSFORMS_CPU_UTILS_H

#include "mlir/IR/Value.h"
#include "llvm/ADT/StringRef.h"

namespace mlir::disc {

/// Unit attribute of an outlined kernel that runs in chunks of its outer
/// loop: set by disc-parallelize-kernels, read by disc-lower-parallel-calls.
inline constexpr llvm::StringLiteral kParallelAttr = "disc.parallel";

/// The buffer a memref value views on the CPU path: its allocation, global
/// or block argument, through views, casts and reshapes; null when it comes
/// from anything else (a loop result, a call). Used for the kernels'
/// `noalias` parameters (disc-outline-kernels) and to keep kernels whose
/// inputs view their output serial (disc-parallelize-kernels).
Value bufferRoot(Value v);

} // namespace mlir::disc

#endif // DISC_LIB_TRANSFORMS_CPU_UTILS_H
