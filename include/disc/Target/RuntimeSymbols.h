//===- RuntimeSymbols.h - symbols the code and wrapper share ----*- C++ -*-===//
//
// Symbols that the lowering declares and calls and that model.so's C
// wrapper (lib/Target/ModelWrapper.c, ModelWrapperCuda.c and the part
// ModelEmitter.cpp generates) defines, or that the wrapper looks for in the
// lowered module (docs/runtime-abi.md). One spelling for the compiler; the
// names the runtime also uses come from abi.h.
//
//===----------------------------------------------------------------------===//
#ifndef DISC_TARGET_RUNTIMESYMBOLS_H
#define DISC_TARGET_RUNTIMESYMBOLS_H

#include "disc/runtime/abi.h"
#include "llvm/ADT/StringRef.h"

namespace mlir::disc {

/// `disc_check_failed(id, v0, v1, v2, v3)`: a run-time check failed; the
/// wrapper formats message `id` of `disc.check_messages` with the values.
inline constexpr llvm::StringLiteral kCheckFailedFn = "disc_check_failed";
/// Prefix of every remat entry (`disc_remat_regenerate`, `_regenerated`,
/// `_evict_<id>`), all defined by the wrapper.
inline constexpr llvm::StringLiteral kRematPrefix = "disc_remat_";
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
/// `disc_device_scratch(bytes) -> memref`: the session's device scratch
/// buffer (CUDA); the wrapper's `_mlir_ciface_disc_device_scratch`.
inline constexpr llvm::StringLiteral kDeviceScratchFn = "disc_device_scratch";
/// Prefix of the library calls `disc_lib_matmul`, `disc_lib_conv<k>d`, ...:
/// the wrapper's `_mlir_ciface_disc_lib_*` forward to the context
/// (disc_ral_context in runtime/include/disc/runtime/abi.h).
inline constexpr llvm::StringLiteral kLibraryCallPrefix = "disc_lib_";
/// The library calls of abi.h: `disc_lib_matmul`, and
/// `disc_lib_conv<k>d` / `disc_lib_conv_transpose<k>d` for k spatial dims
/// (the post-op variants add `_post<flags & 3>[c]`).
inline constexpr llvm::StringLiteral kLibMatmulFn = DISC_LIB_MATMUL_SYMBOL;
inline constexpr llvm::StringLiteral kLibConvPrefix = DISC_LIB_CONV_SYMBOL;
inline constexpr llvm::StringLiteral kLibConvTransposePrefix =
    DISC_LIB_CONV_TRANSPOSE_SYMBOL;
inline constexpr llvm::StringLiteral kLibConvBackwardFilterPrefix =
    DISC_LIB_CONV_BACKWARD_FILTER_SYMBOL;
/// `disc_lib_conv_int<k>d`: the int32 Conv of centered 8-bit data.
inline constexpr llvm::StringLiteral kLibConvIntPrefix =
    DISC_LIB_CONV_INT_SYMBOL;
/// `disc_lib_pool<k>d`: MaxPool / AveragePool (DISC_LIB_POOL).
inline constexpr llvm::StringLiteral kLibPoolPrefix = DISC_LIB_POOL_SYMBOL;
/// The device error word `memref.global @disc_check_error` of kernels with
/// checks; read by `disc_ral_context.device_check` (abi.h).
inline constexpr llvm::StringLiteral kCheckErrorGlobal =
    DISC_CHECK_ERROR_SYMBOL;
/// Outlined loop-nest kernels `disc_kernel_<n>` (disc-outline-kernels).
inline constexpr llvm::StringLiteral kKernelPrefix = "disc_kernel_";
/// `disc_parallel_for(body, env, n, min_chunk)` (disc-lower-parallel-calls).
inline constexpr llvm::StringLiteral kParallelForFn = "disc_parallel_for";
/// `disc_trace_op(id, phase)` around every kernel and library call
/// (disc-insert-trace-points); forwards to `disc_ral_context.trace_op`.
inline constexpr llvm::StringLiteral kTraceOpFn = "disc_trace_op";

/// Module attribute of disc-insert-trace-points: per trace point id, a
/// dictionary {name, op_type, kind, op} (the signature's "trace_points").
inline constexpr llvm::StringLiteral kTracePointsAttr = "disc.trace_points";
/// Location metadata of disc-attach-memory-model: a dictionary with
/// `disc.op` = the op's index in the memory model's order (its program
/// point), kept through the lowering in the ops' locations.
inline constexpr llvm::StringLiteral kOpIndexLocKey = "disc.op";

/// Module attributes of the run-time checks (RuntimeChecks.h): the message
/// templates indexed by check id, and the count proven at compile time.
inline constexpr llvm::StringLiteral kCheckMessagesAttr = "disc.check_messages";
inline constexpr llvm::StringLiteral kChecksDroppedAttr = "disc.checks_dropped";

} // namespace mlir::disc

#endif // DISC_TARGET_RUNTIMESYMBOLS_H
