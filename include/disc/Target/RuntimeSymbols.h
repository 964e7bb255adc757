//===- RuntimeSymbols.h - symbols the code and wrapper share ----*- C++ -*-===//
//
// Symbols that the lowering declares and calls and that model.so's C
// wrapper (ModelEmitter.cpp) defines, or that the wrapper looks for in the
// lowered module (docs/runtime-abi.md). One spelling for the compiler.
//
//===----------------------------------------------------------------------===//
#ifndef DISC_TARGET_RUNTIMESYMBOLS_H
#define DISC_TARGET_RUNTIMESYMBOLS_H

#include "llvm/ADT/StringRef.h"

namespace mlir::disc {

/// `disc_check_failed(id, v0, v1, v2, v3)`: a run-time check failed; the
/// wrapper formats message `id` of `disc.check_messages` with the values.
inline constexpr llvm::StringLiteral kCheckFailedFn = "disc_check_failed";
/// `disc_remat_evict_<id>(id, memref)`: one per remat candidate.
inline constexpr llvm::StringLiteral kRematEvictPrefix = "disc_remat_evict_";
/// `disc_remat_regenerate(id)`, `disc_remat_regenerated(id)`.
inline constexpr llvm::StringLiteral kRematRegenerateFn =
    "disc_remat_regenerate";
inline constexpr llvm::StringLiteral kRematRegeneratedFn =
    "disc_remat_regenerated";
/// `disc_device_constant_<rank>_<k>(memref, bytes)`: the session's device
/// copy of a constant (CUDA).
inline constexpr llvm::StringLiteral kDeviceConstantPrefix =
    "disc_device_constant_";
/// Outlined loop-nest kernels `disc_kernel_<n>` (disc-outline-kernels).
inline constexpr llvm::StringLiteral kKernelPrefix = "disc_kernel_";
/// `disc_parallel_for(body, env, n, min_chunk)` (disc-lower-parallel-calls).
inline constexpr llvm::StringLiteral kParallelForFn = "disc_parallel_for";

/// Module attributes of the run-time checks (RuntimeChecks.h): the message
/// templates indexed by check id, and the count proven at compile time.
inline constexpr llvm::StringLiteral kCheckMessagesAttr = "disc.check_messages";
inline constexpr llvm::StringLiteral kChecksDroppedAttr = "disc.checks_dropped";

} // namespace mlir::disc

#endif // DISC_TARGET_RUNTIMESYMBOLS_H
