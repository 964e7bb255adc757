//===- Device.h - Where a session's model runs: host or CUDA ----*- C++ -*-===//
//
// A session runs its model on one Device, chosen by the signature's target
// (docs/runtime-abi.md): the host for a "cpu" model, a CUDA device for a
// "cuda" one (docs/cuda.md). The device supplies what differs between the
// two: the memory behind the tracked allocator (TrackedAllocator.h), where
// the model finds its inputs and how its outputs come back to host
// Tensors, the library calls (oneDNN or cuBLAS/cuDNN), the host staging of
// an offloaded rematerialization candidate and, for CUDA, the driver-level
// device behind the kernel entries of the context (RalContext.h).
//
// Thread safety: as the session, one thread at a time, except `allocate`,
// `release` and the library calls, which compiled code may call from worker
// threads (the allocator serializes the former, the library modules take
// their own mutex).
//
// Internal to libdisc_runtime (hidden).
//
//===----------------------------------------------------------------------===//
#ifndef DISC_RUNTIME_LIB_CORE_DEVICE_H
#define DISC_RUNTIME_LIB_CORE_DEVICE_H

#include "disc/runtime/Signature.h"
#include "disc/runtime/Status.h"
#include "disc/runtime/Tensor.h"

#include "CallOperands.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#pragma GCC visibility push(hidden)
namespace disc::runtime {

namespace cpu {
class LibraryCalls;
} // namespace cpu
namespace cuda {
class Device;
} // namespace cuda

class TrackedAllocator;
struct OutputView;

class Device {
public:
  virtual ~Device() = default;

  /// Makes the device ready; a no-op once it is. Called before each run
  /// (the CUDA device opens on the session's first run). Errors:
  /// LoadFailed, "no CUDA device: <reason>".
  virtual Status open() = 0;

  /// Memory for the tracked allocator: `bytes` bytes aligned to at least
  /// `alignment` (a power of two >= 16), or null with `*error` set when
  /// the device refuses (out of memory, a driver error).
  virtual void *allocate(int64_t bytes, int64_t alignment,
                         std::string *error) = 0;
  /// Frees memory of `allocate`.
  virtual void release(void *ptr) = 0;
  /// Whether the allocator may keep freed blocks for later allocations
  /// (host memory only; docs/runtime-api.md, "Freed host blocks").
  virtual bool reusesBlocks() const = 0;
  /// The arena of the allocator's buffer plans (TrackedAllocator.h):
  /// `bytes` bytes aligned to 64, its pages already mapped so that the
  /// runs served from it fault none in, or null (no memory, or a device
  /// without buffer plans: the default). Free with `releaseArena`.
  virtual void *allocateArena(int64_t /*bytes*/) { return nullptr; }
  virtual void releaseArena(void * /*ptr*/) {}
  /// The message of a run the allocator aborted because `allocate` refused
  /// `requested` bytes with `live` bytes live (`error` as it said).
  virtual std::string outOfMemoryMessage(int64_t requested, int64_t live,
                                         const std::string &error) const = 0;

  /// The address the model reads input `t` (named `name`) from, dense
  /// row-major: the host tensor's own buffer, or a device copy kept until
  /// `releaseInputs`. Errors: ResourceExhausted (device out of memory),
  /// Internal (a driver error), both naming the input.
  virtual Status stageInput(const Tensor &t, const std::string &name,
                            void **data) = 0;
  /// Frees what `stageInput` made.
  virtual void releaseInputs() = 0;
  /// CUDA graph replay: with `buffers` set, the next `stageInput` calls
  /// copy input k (of this run, in order) into `buffers[k]` (device memory
  /// of at least its bytes, owned by the caller) instead of a fresh copy,
  /// so that a graph finds its inputs at the addresses it captured;
  /// `releaseInputs` leaves them. Null: fresh copies again.
  virtual void pinInputs(const std::vector<void *> * /*buffers*/) {}
  /// The host tensor of output `spec` (named in errors by `who`) from the
  /// model's descriptor `view`: the buffer itself when the allocator hands
  /// a live host block over, else a dense copy. Errors: ResourceExhausted
  /// (no host memory for the copy), Internal (a driver error).
  virtual Status fetchOutput(const TensorSpec &spec, const std::string &who,
                             const OutputView &view,
                             TrackedAllocator &allocator, Tensor *out) = 0;
  /// Completes the `fetchOutput` calls of a run: a CUDA device queues their
  /// copies and waits here once for all of them. Called after the last
  /// `fetchOutput` of a run, also when one failed. Errors: Internal (a
  /// driver error).
  virtual Status finishOutputs() { return Status::ok(); }

  /// The module of the library calls on this device, made on first use.
  virtual LibraryModule &libraryModule() = 0;

  /// Whether an evicted rematerialization candidate may be offloaded to
  /// host memory (an open CUDA device) rather than recomputed.
  virtual bool offloads() const { return false; }
  /// `bytes` of host memory to offload a buffer to (page-locked where the
  /// driver has it), or null; free with `releaseStaging`.
  virtual void *allocateStaging(int64_t /*bytes*/) { return nullptr; }
  virtual void releaseStaging(void * /*ptr*/) {}
  /// Copies `bytes` bytes between device and host memory and waits for the
  /// copy. Returns 0 or 4 with `*error`.
  virtual int32_t copyAndWait(void * /*dst*/, const void * /*src*/,
                              int64_t /*bytes*/, std::string * /*error*/) {
    return 4;
  }

  /// The CUDA device behind the kernel entries of the context (launch,
  /// copy, sync, check, constant, scratch); null on the host and before a
  /// CUDA device is open.
  virtual cuda::Device *kernelDevice() { return nullptr; }
};

/// The host: malloc'ed memory (aligned to 64 bytes), inputs read in place,
/// outputs adopted from the allocator when they are dense live blocks,
/// library calls on `library()` (the session's oneDNN module, made on first
/// use).
std::unique_ptr<Device>
makeHostDevice(std::function<cpu::LibraryCalls &()> library);

/// A CUDA device (device 0, opened by `open`): device memory, inputs and
/// outputs copied on the session stream, cuBLAS/cuDNN library calls,
/// page-locked staging for offloads (cuda/SessionDevice.cpp).
std::unique_ptr<Device> makeCudaDevice();

} // namespace disc::runtime
#pragma GCC visibility pop

#endif // DISC_RUNTIME_LIB_CORE_DEVICE_H
