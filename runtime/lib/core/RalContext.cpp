//===- RalContext.cpp - Trampolines of disc_ral_context -------------------===//

#include "RalContext.h"

#include "../cpu/ParallelFor.h"
#include "../cuda/Device.h"
#include "Device.h"
#include "RematRuntime.h"
#include "RunErrors.h"
#include "TraceRecorder.h"
#include "TrackedAllocator.h"

#include <string>

namespace disc::runtime {

RalContext::RalContext(TrackedAllocator &allocator, Device &device,
                       RematRuntime &remat, RunErrors &errors,
                       int32_t numThreads, bool deviceEntries)
    : allocator_(allocator), device_(device), remat_(remat), errors_(errors),
      numThreads_(numThreads) {
  ctx_.self = this;
  ctx_.alloc = &RalContext::alloc;
  ctx_.free = &RalContext::free;
  ctx_.error = &RalContext::error;
  ctx_.library_call = &RalContext::libraryCall;
  ctx_.remat_evict = [](void *self, int32_t id, void *ptr) -> int32_t {
    return self ? from(self)->remat_.evict(id, ptr) : 0;
  };
  ctx_.remat_regenerate = &RalContext::rematRegenerate;
  ctx_.remat_regenerated = [](void *self, int32_t id) {
    if (self)
      from(self)->remat_.regenerated(id);
  };
  ctx_.parallel_for = [](void *self, cpu::ParallelBody body, void *env,
                         int64_t n, int64_t minChunk) {
    cpu::parallelFor(from(self)->numThreads_, body, env, n, minChunk);
  };
  if (deviceEntries)
    setDeviceEntries();
}

/// Calls the model with a setjmp guard. No object with a non-trivial
/// destructor lives in this frame, so the longjmp from an allocation is
/// well defined. Returns the model status, or -1 when the allocator aborted.
__attribute__((noinline)) int32_t callGuarded(RalContext *c,
                                              disc_model_run_fn fn,
                                              void **inputs, void **outputs) {
  if (setjmp(c->jmp_) != 0) {
    c->armed_ = false;
    return -1;
  }
  c->armed_ = true;
  int32_t rc = fn(&c->ctx_, inputs, outputs);
  c->armed_ = false;
  return rc;
}

int32_t RalContext::callModel(disc_model_run_fn fn, void **inputs,
                              void **outputs) {
  runThread_ = std::this_thread::get_id();
  return callGuarded(this, fn, inputs, outputs);
}

void RalContext::setRecorder(TraceRecorder *recorder) {
  recorder_ = recorder;
  ctx_.trace_op = nullptr;
  if (recorder)
    ctx_.trace_op = [](void *self, int32_t id, int32_t phase) {
      if (self && from(self)->recorder_)
        from(self)->recorder_->tracePoint(id, phase);
    };
}

// Only trivially destructible objects live in the frames a longjmp leaves.
void RalContext::abortIfOnRunThread() {
  if (armed_ && std::this_thread::get_id() == runThread_)
    std::longjmp(jmp_, 1);
}

void *RalContext::alloc(void *self, int64_t bytes, int64_t alignment) {
  RalContext *c = from(self);
  if (!c)
    return nullptr;
  if (c->remat_.hasHandback() && std::this_thread::get_id() == c->runThread_)
    return c->remat_.takeHandback(bytes);
  bool refused = false;
  void *p = c->allocator_.allocate(bytes, alignment, &refused);
  // Abort the run when we are on the thread that called the model; from a
  // worker thread we can only report failure and let the model return.
  if (refused)
    c->abortIfOnRunThread();
  return p;
}

void RalContext::free(void *self, void *ptr) {
  if (self && ptr)
    from(self)->allocator_.free(ptr);
}

void RalContext::error(void *self, int32_t status, const char *message) {
  if (self)
    from(self)->errors_.report(status, message);
}

int32_t RalContext::libraryCall(void *self, int32_t callId, int32_t numOperands,
                                void *const *operands, const int32_t *ranks,
                                int32_t numAttrs, const int64_t *attrs) {
  RalContext *c = from(self);
  if (!c)
    return 4;
  // Temporaries go through the tracked allocator without unwinding: the
  // library reports a refusal as status 2.
  ScratchAllocator scratch;
  scratch.self = c;
  scratch.alloc = [](void *s, int64_t bytes, int64_t alignment) -> void * {
    bool refused = false;
    return from(s)->allocator_.allocate(bytes, alignment, &refused);
  };
  scratch.free = &RalContext::free;
  std::string message;
  int32_t status = c->device_.libraryModule().call(
      callId, numOperands, operands, ranks, numAttrs, attrs, scratch, message);
  if (status != 0)
    c->errors_.report(status, message.c_str());
  return status;
}

int32_t RalContext::rematRegenerate(void *self, int32_t id) {
  RalContext *c = from(self);
  if (!c)
    return -4;
  int32_t status = c->remat_.regenerate(id);
  if (status == -3) // The allocator refused the buffer: abort the run.
    c->abortIfOnRunThread();
  return status;
}

template <typename Op>
int32_t RalContext::deviceCall(void *self, bool argsOk, Op op) {
  RalContext *c = from(self);
  cuda::Device *device = c ? c->device_.kernelDevice() : nullptr;
  if (!device || !argsOk)
    return 4;
  std::string message;
  int32_t status = op(*device, &message);
  if (status != 0)
    c->errors_.report(status, message.c_str());
  return status;
}

void RalContext::setDeviceEntries() {
  using cuda::Device;
  ctx_.device_launch = [](void *self, const void *image, const char *kernel,
                          const int64_t *grid, const int64_t *block,
                          int32_t sharedBytes, void **params) {
    return deviceCall(self, grid && block, [&](Device &d, std::string *m) {
      return d.launch(image, kernel, grid, block, sharedBytes, params, m);
    });
  };
  ctx_.device_copy = [](void *self, void *dst, const void *src, int64_t bytes) {
    return deviceCall(self, true, [&](Device &d, std::string *m) {
      return d.copy(dst, src, bytes, m);
    });
  };
  ctx_.device_sync = [](void *self) {
    return deviceCall(self, true, [&](Device &d, std::string *m) {
      return d.synchronize(m);
    });
  };
  ctx_.device_check = [](void *self, const void *image, int64_t *words) {
    // A failed check reads 1 (the model reports it); only a driver failure
    // is the run's error, and reads -4 as no device does.
    int32_t read = -4;
    int32_t status =
        deviceCall(self, words != nullptr, [&](Device &d, std::string *m) {
          read = d.readCheckWord(image, words, m);
          return read == 4 ? 4 : 0;
        });
    return status != 0 ? -4 : read;
  };
  ctx_.device_constant = [](void *self, const void *host, int64_t bytes,
                            void **device) {
    return deviceCall(self, device != nullptr, [&](Device &d, std::string *m) {
      return d.constant(host, bytes, device, m);
    });
  };
  ctx_.device_scratch = [](void *self, int64_t site, int64_t bytes,
                           void **device) {
    return deviceCall(self, device != nullptr, [&](Device &d, std::string *m) {
      return d.scratch(site, bytes, device, m);
    });
  };
}

} // namespace disc::runtime
