//===- CudaPasses.h - Passes of the CUDA pipeline (internal) --------------===//
//
// Host placement of shape tensors, host/device copies of buffers both sides
// touch, device-side run-time checks, and the CPU emulation of mapped
// kernels (docs/cuda.md). Used by CudaPipeline.cpp only.
//
//===----------------------------------------------------------------------===//
#ifndef DISC_LIB_PIPELINES_CUDAPASSES_H
#define DISC_LIB_PIPELINES_CUDAPASSES_H

#include "mlir/IR/Operation.h"
#include "mlir/IR/Value.h"
#include "mlir/Pass/Pass.h"

#include <memory>
#include <string>

namespace mlir::disc::cuda {

/// Name of the device error word of kernels with run-time checks: a public
/// `memref.global @disc_check_error : memref<5xi64>` (cloned into each
/// kernel module by outlining). Word 0 is 0, or 1 + the id of the first
/// failed check; words 1..4 its values. The runtime reads and clears it
/// after a launch (`disc_ral_context.device_check`).
inline constexpr llvm::StringLiteral kCheckErrorGlobal = "disc_check_error";

/// disc-gpu-place-host-buffers: small static buffers that only the host and
/// host-side linalg ops touch (shape tensors) move to the host stack; linalg
/// ops whose operands are all host buffers or constants become host loops.
std::unique_ptr<Pass> createPlaceHostBuffersPass();
/// disc-gpu-mirror-host-buffers: a small static device buffer the host also
/// reads or writes gets a host copy; kernels and host code stay coherent
/// through copies around each launch that uses the buffer.
std::unique_ptr<Pass> createMirrorHostBuffersPass();
/// disc-gpu-small-device-buffers: the remaining small static buffers that do
/// not escape (the memory model's stack buffers, kMaxStackBufferBytes) get
/// a per-session device slot from the runtime (`disc_device_scratch`),
/// outside the tracked peak like the CPU's stack; with `emulate`, the host
/// stack.
std::unique_ptr<Pass> createSmallDeviceBuffersPass(bool emulate = false);
/// disc-gpu-device-checks: a run-time check inside a kernel records the
/// failure in the device error word and skips the rest of its block.
std::unique_ptr<Pass> createDeviceChecksPass();
/// disc-gpu-emulate-launches: every gpu.launch becomes host loops over the
/// grid and block ids (CPU emulation of the mapped kernels); the device
/// error word is read after each launch.
std::unique_ptr<Pass> createEmulateLaunchesPass();

/// The buffer a view is taken of (through subview, reshape, cast ...); with
/// `chain`, the view ops from it to `v` are appended (outermost last).
Value viewRoot(Value v, SmallVectorImpl<Operation *> *chain = nullptr);

} // namespace mlir::disc::cuda

#endif // DISC_LIB_PIPELINES_CUDAPASSES_H
