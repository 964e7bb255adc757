//===- Utils.h - Helpers shared by the CUDA passes (internal) ---*- C++ -*-===//
//
// The device error word of the run-time checks in kernels, view chains,
// copies on the stream, and the buffer classification and replacement of
// the host placement passes (disc-gpu-place-host-buffers,
// disc-gpu-mirror-host-buffers, disc-gpu-small-device-buffers;
// docs/cuda.md).
//
//===----------------------------------------------------------------------===//
#ifndef DISC_LIB_TRANSFORMS_GPU_UTILS_H
#define DISC_LIB_TRANSFORMS_GPU_UTILS_H

#include "disc/Target/RuntimeSymbols.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Operation.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

namespace mlir::disc::cuda {

/// kCheckErrorGlobal (disc/Target/RuntimeSymbols.h), the device error word
/// of kernels with run-time checks: a public
/// `memref.global @disc_check_error : memref<5xi64>` (cloned into each
/// kernel module by outlining). Word 0 is 0, or 1 + the id of the first
/// failed check; words 1..4 its values. The runtime reads and clears it
/// after a launch (`disc_ral_context.device_check`).
using ::mlir::disc::kCheckErrorGlobal;

/// The buffer a view is taken of (through subview, reshape, cast ...); with
/// `chain`, the view ops from it to `v` are appended (outermost last).
Value viewRoot(Value v, SmallVectorImpl<Operation *> *chain = nullptr);

/// The memref.get_global that `v` views (through view ops); null when `v`
/// is not a memref or its buffer is not a constant.
memref::GetGlobalOp viewedConstant(Value v);

/// Clones the view chain from `root` to `v` onto `replacement` at `b`;
/// returns the clone of `v` (`replacement` itself when `v` is `root`).
Value retakeViews(OpBuilder &b, Value v, Value root, Value replacement);

/// Every gpu.launch nested in `root`, in walk order (to rewrite them
/// without invalidating the walk).
SmallVector<gpu::LaunchOp> collectLaunches(Operation *root);

/// Copies `src` to `dst` with a gpu.memcpy on the session stream; with
/// `wait` (the host reads `dst` next: a device-to-host copy) the host then
/// waits for the stream. Without it the copy is only queued: kernels and
/// copies after it on the stream see its result (docs/cuda.md,
/// "Synchronization").
void copyOnStream(OpBuilder &b, Location loc, Value dst, Value src, bool wait);

/// Replaces the buffer of `alloc` by `replacement` (a stack buffer, a device
/// slot): its deallocations are erased, then `alloc` itself.
void replaceAllocation(memref::AllocOp alloc, Value replacement);

/// Whether `op` is device code: inside an scf.parallel (to be mapped) or a
/// gpu.launch.
bool inDeviceCode(Operation *op);

/// Bytes of one element of `t`; -1 for a type that is neither an integer,
/// a float nor index.
int64_t elementBytes(Type t);

/// `func.func private @disc_device_constant_<rank>_<k>(memref<T>, i64 bytes)
/// -> memref<T>` for `type` in `module` (a C-interface function of the model
/// wrapper over `disc_ral_context.device_constant`: the session's device
/// copy of a constant, uploaded on the first request): the existing one of
/// that type, or a new one with the next free `k`.
func::FuncOp getOrCreateConstantUploadFn(ModuleOp module, MemRefType type);

/// Ops that may move above a kernel that precedes them (to bring two loop
/// nests together): pure ops without regions, allocations, and allocation
/// size checks (an scf.if holding pure ops and calls of
/// `disc_check_failed`).
bool isHoistableBetweenKernels(Operation *op);

/// Ops that may move below a kernel that follows them: a deallocation or a
/// rematerialization eviction (no results). Moving one frees a buffer later;
/// the peak stays when no allocation moves above it.
bool isSinkableBetweenKernels(Operation *op);

/// A static buffer of at most kMaxStackBufferBytes with the identity layout.
bool isSmallStatic(MemRefType type);

/// Every use of `root` through views: host accesses, linalg ops, and
/// whether some other use (a kernel, a call, a return, a yield) exists.
struct BufferUses {
  SmallVector<OpOperand *> host;
  SmallVector<linalg::LinalgOp> linalg;
  SmallVector<gpu::LaunchOp> launches;
  /// func.return ops that return the buffer (or a view): also in `other`.
  SmallVector<Operation *> returns;
  bool other = false;
};

BufferUses collectUses(Value root);

} // namespace mlir::disc::cuda

#endif // DISC_LIB_TRANSFORMS_GPU_UTILS_H
