//===- RalContext.h - The context a session hands its model -----*- C++ -*-===//
//
// `disc_ral_context` (abi.h, docs/runtime-abi.md) of one session: the
// entries compiled code calls back into, each a trampoline to the part of
// the session that serves it:
//
//   alloc, free               TrackedAllocator (alloc: a buffer waiting at
//                             a regenerate point first, RematRuntime)
//   error                     RunErrors
//   library_call              Device::libraryModule, temporaries from the
//                             allocator
//   remat_evict/regenerate/   RematRuntime
//     regenerated
//   parallel_for              cpu::parallelFor on the session's threads
//   device_launch/copy/sync/  the CUDA device (Device::kernelDevice); set
//     check/constant/scratch  for a CUDA model only
//
// A refused allocation on the thread that called the model aborts the run:
// `callModel` returns -1 through a longjmp out of the model, the allocator
// having recorded why (TrackedAllocator::refusal). From a worker thread the
// allocation just fails and the model returns its status.
//
// Thread safety: the model may call alloc, free, error, library_call and
// parallel_for from worker threads.
//
// Internal to libdisc_runtime (hidden).
//
//===----------------------------------------------------------------------===//
#ifndef DISC_RUNTIME_LIB_CORE_RALCONTEXT_H
#define DISC_RUNTIME_LIB_CORE_RALCONTEXT_H

#include "disc/runtime/abi.h"

#include <csetjmp>
#include <cstdint>
#include <thread>

#pragma GCC visibility push(hidden)
namespace disc::runtime {

class Device;
class RematRuntime;
class RunErrors;
class TraceRecorder;
class TrackedAllocator;

class RalContext {
public:
  /// The context of a session whose parts these are; `numThreads` as
  /// SessionOptions::num_threads; `deviceEntries` sets the device_* entries
  /// (a CUDA model). The parts must outlive the context.
  RalContext(TrackedAllocator &allocator, Device &device, RematRuntime &remat,
             RunErrors &errors, int32_t numThreads, bool deviceEntries);
  RalContext(const RalContext &) = delete;
  RalContext &operator=(const RalContext &) = delete;

  /// Calls `fn` on this context and the descriptor arrays on the calling
  /// thread. Returns the model's status, or -1 when the allocator aborted
  /// the run.
  int32_t callModel(disc_model_run_fn fn, void **inputs, void **outputs);
  /// Hands the model's trace points to `recorder` (null: the `trace_op`
  /// entry is NULL and the model calls nothing).
  void setRecorder(TraceRecorder *recorder);

private:
  friend int32_t callGuarded(RalContext *, disc_model_run_fn, void **, void **);
  static RalContext *from(void *self) {
    return static_cast<RalContext *>(self);
  }
  /// Leaves the model through the guard of `callModel` when on its thread
  /// with the guard armed; returns otherwise.
  void abortIfOnRunThread();

  static void *alloc(void *self, int64_t bytes, int64_t alignment);
  static void free(void *self, void *ptr);
  static void error(void *self, int32_t status, const char *message);
  static int32_t libraryCall(void *self, int32_t callId, int32_t numOperands,
                             void *const *operands, const int32_t *ranks,
                             int32_t numAttrs, const int64_t *attrs);
  static int32_t rematRegenerate(void *self, int32_t id);
  /// Runs `op(device, &message)` on the CUDA device of context `self`,
  /// reporting a nonzero status with the message as the run's error.
  /// Returns the status, or 4 (nothing run) without an open device or when
  /// `argsOk` is false.
  template <typename Op>
  static int32_t deviceCall(void *self, bool argsOk, Op op);
  void setDeviceEntries();

  TrackedAllocator &allocator_;
  Device &device_;
  RematRuntime &remat_;
  RunErrors &errors_;
  int32_t numThreads_;
  TraceRecorder *recorder_ = nullptr;
  disc_ral_context ctx_{};
  // Abort machinery: valid only while `armed_`.
  std::jmp_buf jmp_;
  bool armed_ = false;
  std::thread::id runThread_;
};

} // namespace disc::runtime
#pragma GCC visibility pop

#endif // DISC_RUNTIME_LIB_CORE_RALCONTEXT_H
