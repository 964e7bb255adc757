//===- Session.cpp - Input validation, tracked allocator, model calls -----===//

#include "disc/runtime/Runtime.h"
#include "disc/runtime/abi.h"

#include "../cpu/LibraryCalls.h"
#include "../cpu/ParallelFor.h"
#include "../cuda/Device.h"
#include "../cuda/LibraryCalls.h"
#include "Prediction.h"
#include "RematPlanner.h"

#include <algorithm>
#include <chrono>
#include <csetjmp>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_map>
#include <unordered_set>

namespace disc {

namespace {

/// Why the allocator aborted a run through longjmp.
struct AbortInfo {
  int64_t requestedBytes = 0;
  int64_t liveBytes = 0;
  int64_t limitBytes = 0;
  bool outOfHostMemory = false;
  /// Set when the CUDA driver refused the allocation.
  bool outOfDeviceMemory = false;
  std::string deviceError;
};

} // namespace

/// Per-session state; `ctx.self` points here, so it never moves. Hidden:
/// Runtime.h declares it, but it is no part of the library's API.
struct __attribute__((visibility("hidden"))) Session::Impl {
  std::shared_ptr<const Executable> exe;
  SessionOptions options;
  SessionStats stats;
  disc_ral_context ctx{};

  // Allocator bookkeeping. `mutex` guards `live`, `currentBytes`,
  // `peakBytes` and `numAllocs` (compiled code may allocate from worker
  // threads).
  std::mutex mutex;
  std::unordered_map<void *, int64_t> live;
  /// Nodes of `live` and `blockCache` taken out for reuse (C++17 node
  /// handles), so that allocations and frees of a run at shapes seen
  /// before allocate no bookkeeping memory.
  std::vector<std::unordered_map<void *, int64_t>::node_type> spareLive;
  std::vector<std::multimap<int64_t, void *>::node_type> spareCached;
  /// Inserts (key, value) into `map`, in a node of `spare` when one is left.
  template <typename Map, typename K, typename V>
  static void insertReusing(Map &map,
                            std::vector<typename Map::node_type> &spare, K key,
                            V value) {
    if (spare.empty()) {
      map.emplace(key, value);
      return;
    }
    auto node = std::move(spare.back());
    spare.pop_back();
    node.key() = key;
    node.mapped() = value;
    map.insert(std::move(node));
  }
  void addLive(void *p, int64_t bytes) {
    insertReusing(live, spareLive, p, bytes);
  }
  void eraseLive(std::unordered_map<void *, int64_t>::iterator it) {
    spareLive.push_back(live.extract(it));
  }
  int64_t currentBytes = 0;
  int64_t peakBytes = 0;
  int64_t numAllocs = 0;

  // Freed host blocks kept for later allocations (`blockCache`, by the
  // block's size), so that a model run again reuses the previous run's
  // blocks instead of taking fresh pages from the OS: glibc returns large
  // freed blocks to the OS (munmap, heap trim) and the next run
  // page-faults every byte in again, which costs more than the model's
  // loops. An allocation takes the smallest cached block of at least its
  // size and at most twice it. Cached blocks are not live: the tracked
  // bytes (peak, limit) do not change. Cached plus live bytes stay below
  // twice the highest peak of any run so far (`maxPeakBytes`). Off on
  // device, under a memory limit and under AddressSanitizer. Guarded by
  // `mutex`.
  std::multimap<int64_t, void *> blockCache;
  void addCachedBlock(int64_t size, void *p) {
    insertReusing(blockCache, spareCached, size, p);
  }
  /// The size each host block was allocated with.
  std::unordered_map<void *, int64_t> blockBytes;
  int64_t cachedBytes = 0;
  /// Bytes of the blocks behind `live` (a block's size when it has one in
  /// `blockBytes`, else the request), and the peak of `heldBytes +
  /// cachedBytes` in the current run: what the session holds from the OS.
  int64_t heldBytes = 0;
  int64_t reservedPeakBytes = 0;
  int64_t blockSize(void *p, int64_t requested) const {
    auto it = blockBytes.find(p);
    return it == blockBytes.end() ? requested : it->second;
  }
  void noteHeld(int64_t delta) {
    heldBytes += delta;
    reservedPeakBytes = std::max(reservedPeakBytes, heldBytes + cachedBytes);
  }
  int64_t maxPeakBytes = 0;
  bool useBlockCache() const;
  /// A cached block of [bytes, 2 * bytes] bytes (alignment 64), or null.
  void *takeCachedBlock(int64_t bytes);
  /// Frees cached blocks, largest first, until `cachedBytes + currentBytes
  /// + bytes` fits under `2 * maxPeakBytes`.
  void trimBlockCache(int64_t bytes);
  void releaseBlockCache();

  // Abort machinery: valid only while `armed`.
  std::jmp_buf jmp;
  bool armed = false;
  std::thread::id runThread;
  AbortInfo abort;

  // What the model reported through `ctx.error` during the current run.
  int32_t errorStatus = 0;
  std::string errorMessage;

  static void *allocCallback(void *self, int64_t bytes, int64_t alignment);
  static void freeCallback(void *self, void *ptr);
  static void errorCallback(void *self, int32_t status, const char *message);
  static int32_t libraryCallback(void *self, int32_t callId,
                                 int32_t numOperands, void *const *operands,
                                 const int32_t *ranks, int32_t numAttrs,
                                 const int64_t *attrs);
  static int32_t deviceLaunchCallback(void *self, const void *image,
                                      const char *kernel, const int64_t *grid,
                                      const int64_t *block, int32_t sharedBytes,
                                      void **params);
  static int32_t deviceCopyCallback(void *self, void *dst, const void *src,
                                    int64_t bytes);
  static int32_t deviceSyncCallback(void *self);
  static int32_t deviceCheckCallback(void *self, const void *image,
                                     int64_t *words);
  static int32_t deviceConstantCallback(void *self, const void *host,
                                        int64_t bytes, void **device);
  static int32_t deviceScratchCallback(void *self, int64_t site, int64_t bytes,
                                       void **device);
  void *tryAllocate(int64_t bytes, int64_t alignment, bool *refused);
  /// Frees a buffer of the tracked allocator (host or device memory).
  void releaseBuffer(void *ptr);

  // CUDA models (docs/cuda.md): the device, opened on the first run; the
  // device copies of the current run's inputs (not tracked: like host
  // inputs they belong to the caller's side of the ledger).
  bool onDevice = false;
  std::unique_ptr<runtime::cuda::Device> device;
  std::vector<void *> deviceInputs;
  void releaseDeviceInputs();
  // cuBLAS/cuDNN calls of a CUDA model (declared after `device`, so they
  // are destroyed before it).
  std::unique_ptr<runtime::cuda::LibraryCalls> deviceLibrary;
  int32_t deviceLibraryCall(int32_t callId, int32_t numOperands,
                            void *const *operands, const int32_t *ranks,
                            int32_t numAttrs, const int64_t *attrs);

  // Rematerialization (docs/memory.md): the planner of the current run,
  // the blocks kept at evict points (by candidate id; `retainedPtrs` makes
  // the model's free of a kept block a no-op), the block to hand back at
  // the next allocation after a regenerate point, and the recompute timer.
  runtime::RematPlanner *remat = nullptr;
  std::unordered_map<int32_t, std::pair<void *, int64_t>> retained;
  std::unordered_set<void *> retainedPtrs;
  void *handback = nullptr;
  int64_t handbackBytes = 0;
  std::chrono::steady_clock::time_point recomputeStart;
  // CUDA: host copies of the candidates offloaded at their evict points
  // (by id: host pointer and bytes), copied back at the regenerate point.
  std::unordered_map<int32_t, std::pair<void *, int64_t>> offloaded;
  void releaseOffloaded();
  /// CUDA: whether an evicted candidate is offloaded rather than recomputed.
  bool shouldOffload(int32_t id) const;
  static int32_t rematEvictCallback(void *self, int32_t id, void *ptr);
  static int32_t rematRegenerateCallback(void *self, int32_t id);
  static void rematRegeneratedCallback(void *self, int32_t id);
  /// Plans the run: the feasibility check against the memory limit.
  Status planRemat(const std::vector<Tensor> &inputs);

  /// The memory prediction at one set of input shapes (docs/memory.md):
  /// the peak with nothing evicted, the lowest peak reachable by
  /// rematerialization, and the planner of the runs (reset before each;
  /// null without candidates). Kept per shapes, so a run at shapes seen
  /// before evaluates no expression and creates no primitive for it.
  struct Prediction {
    std::vector<std::vector<int64_t>> shapes;
    int64_t predicted = -1;
    int64_t minimum = -1;
    std::unique_ptr<runtime::RematPlanner> planner;
  };
  /// Most recently used first; at most kMaxPredictions.
  static constexpr size_t kMaxPredictions = 32;
  std::vector<std::unique_ptr<Prediction>> predictions;
  /// The prediction at the shapes of `inputs` (validated), computed on
  /// the first run at these shapes. Errors as Executable::predictPeakBytes.
  Status predict(const std::vector<Tensor> &inputs, Prediction **out);
  /// The session's library-call module (oneDNN), made on first use.
  runtime::cpu::LibraryCalls &cpuLibrary();

  // oneDNN primitives of this session, created on the first library call.
  std::unique_ptr<runtime::cpu::LibraryCalls> library;

  /// Frees every live allocation; returns how many there were.
  int64_t releaseAll();
  Status runImpl(const std::vector<Tensor> &inputs,
                 std::vector<Tensor> *outputs);
};

namespace {

/// Calls the model with a setjmp guard. No object with a non-trivial
/// destructor lives in this frame, so the longjmp from `allocCallback` is
/// well defined. Returns the model status, or -1 when the allocator aborted.
__attribute__((noinline)) int32_t callModelGuarded(Session::Impl *impl,
                                                   disc_model_run_fn fn,
                                                   void **inputs,
                                                   void **outputs) {
  if (setjmp(impl->jmp) != 0) {
    impl->armed = false;
    return -1;
  }
  impl->armed = true;
  int32_t rc = fn(&impl->ctx, inputs, outputs);
  impl->armed = false;
  return rc;
}

bool isPowerOfTwo(int64_t x) { return x > 0 && (x & (x - 1)) == 0; }

/// Alignment of every host block, so any cached block serves any request
/// up to it.
constexpr int64_t kCacheAlign = 64;

/// A host block of `bytes` bytes aligned to `align` (a power of two >= 16),
/// or null: malloc'ed with room to align, the malloc'ed pointer kept just
/// before the returned one (hostFree). Not posix_memalign: glibc serves it
/// by taking size + alignment + a header and giving the surplus back to
/// the heap, where the next small allocation lands, so a freed block (an
/// output the caller released) is a little short of the next identical
/// request and a run does not reuse the previous run's output block: the
/// heap grows and its fresh pages fault in again.
void *hostAlloc(int64_t bytes, int64_t align) {
  size_t total =
      static_cast<size_t>(bytes) + static_cast<size_t>(align) + sizeof(void *);
  char *raw = static_cast<char *>(std::malloc(total));
  if (!raw)
    return nullptr;
  uintptr_t at = (reinterpret_cast<uintptr_t>(raw) + sizeof(void *) +
                  static_cast<uintptr_t>(align) - 1) &
                 ~(static_cast<uintptr_t>(align) - 1);
  reinterpret_cast<void **>(at)[-1] = raw;
  return reinterpret_cast<void *>(at);
}

/// Frees a block of hostAlloc.
void hostFree(void *p) {
  if (p)
    std::free(static_cast<void **>(p)[-1]);
}

} // namespace

/// Allocates `bytes` through the session's bookkeeping; NULL with `abort`
/// filled when over the memory limit or out of host memory.
void *Session::Impl::tryAllocate(int64_t bytes, int64_t alignment,
                                 bool *refused) {
  *refused = false;
  if (bytes < 0)
    return nullptr;
  int64_t align = alignment < 16 ? 16 : alignment;
  if (!isPowerOfTwo(align))
    return nullptr;
  bool overLimit = false;
  bool hostOom = false;
  void *p = nullptr;
  std::lock_guard<std::mutex> lock(mutex);
  int64_t limit = options.memory_limit_bytes;
  bool deviceOom = false;
  std::string deviceError;
  if (limit > 0 && bytes > limit - currentBytes) {
    overLimit = true;
  } else if (device) {
    p = device->allocate(bytes, &deviceOom, &deviceError);
    if (p) {
      addLive(p, bytes);
      noteHeld(bytes);
      currentBytes += bytes;
      if (currentBytes > peakBytes)
        peakBytes = currentBytes;
      ++numAllocs;
    } else {
      hostOom = true;
    }
  } else if (align <= kCacheAlign && (p = takeCachedBlock(bytes))) {
    addLive(p, bytes);
    noteHeld(blockSize(p, bytes));
    currentBytes += bytes;
    if (currentBytes > peakBytes)
      peakBytes = currentBytes;
    ++numAllocs;
  } else if ((trimBlockCache(bytes),
              p = hostAlloc(bytes, std::max(align, kCacheAlign))) == nullptr) {
    hostOom = true;
  } else {
    if (useBlockCache())
      blockBytes[p] = bytes;
    addLive(p, bytes);
    noteHeld(bytes);
    currentBytes += bytes;
    if (currentBytes > peakBytes)
      peakBytes = currentBytes;
    ++numAllocs;
  }
  maxPeakBytes = std::max(maxPeakBytes, peakBytes);
  if (overLimit || hostOom) {
    abort.requestedBytes = bytes;
    abort.liveBytes = currentBytes;
    abort.limitBytes = limit;
    abort.outOfHostMemory = hostOom && !device;
    abort.outOfDeviceMemory = hostOom && device;
    abort.deviceError = deviceError;
    *refused = true;
  }
  return p;
}

// Only trivially destructible objects live in this frame when it longjmps.
void *Session::Impl::allocCallback(void *self, int64_t bytes,
                                   int64_t alignment) {
  Impl *impl = static_cast<Impl *>(self);
  if (!impl)
    return nullptr;
  if (impl->handback && std::this_thread::get_id() == impl->runThread) {
    // The regenerated buffer of a kept candidate: the same block, still
    // counted as live, with its data.
    void *p = impl->handback;
    impl->handback = nullptr;
    if (bytes == impl->handbackBytes)
      return p;
    errorCallback(self, 4,
                  ("rematerialization: regenerated buffer of " +
                   std::to_string(bytes) + " bytes, kept block has " +
                   std::to_string(impl->handbackBytes))
                      .c_str());
    return nullptr;
  }
  bool refused = false;
  void *p = impl->tryAllocate(bytes, alignment, &refused);
  if (!refused)
    return p;
  // Abort the run when we are on the thread that called the model; from a
  // worker thread we can only report failure and let the model return.
  if (impl->armed && std::this_thread::get_id() == impl->runThread)
    std::longjmp(impl->jmp, 1);
  return nullptr;
}

int32_t Session::Impl::libraryCallback(void *self, int32_t callId,
                                       int32_t numOperands,
                                       void *const *operands,
                                       const int32_t *ranks, int32_t numAttrs,
                                       const int64_t *attrs) {
  Impl *impl = static_cast<Impl *>(self);
  if (!impl)
    return 4;
  if (impl->device)
    return impl->deviceLibraryCall(callId, numOperands, operands, ranks,
                                   numAttrs, attrs);
  // Temporaries go through the tracked allocator without unwinding: the
  // library reports a refusal as status 2.
  runtime::cpu::ScratchAllocator scratch;
  scratch.self = impl;
  scratch.alloc = [](void *s, int64_t bytes, int64_t alignment) -> void * {
    bool refused = false;
    return static_cast<Impl *>(s)->tryAllocate(bytes, alignment, &refused);
  };
  scratch.free = &Impl::freeCallback;
  std::string message;
  int32_t status = impl->cpuLibrary().call(callId, numOperands, operands, ranks,
                                           numAttrs, attrs, scratch, message);
  if (status != 0)
    errorCallback(self, status, message.c_str());
  return status;
}

/// A library call of a CUDA model: cuBLAS/cuDNN on the session's device and
/// stream, workspaces from the tracked allocator (docs/cuda.md).
int32_t Session::Impl::deviceLibraryCall(int32_t callId, int32_t numOperands,
                                         void *const *operands,
                                         const int32_t *ranks, int32_t numAttrs,
                                         const int64_t *attrs) {
  if (!deviceLibrary)
    deviceLibrary = std::make_unique<runtime::cuda::LibraryCalls>(*device);
  runtime::cuda::DeviceScratch scratch;
  scratch.self = this;
  scratch.alloc = [](void *s, int64_t bytes, int64_t alignment) -> void * {
    bool refused = false;
    return static_cast<Impl *>(s)->tryAllocate(bytes, alignment, &refused);
  };
  scratch.free = &Impl::freeCallback;
  std::string message;
  int32_t status = deviceLibrary->call(callId, numOperands, operands, ranks,
                                       numAttrs, attrs, scratch, message);
  if (status != 0)
    errorCallback(this, status, message.c_str());
  return status;
}

bool Session::Impl::useBlockCache() const {
#if defined(__SANITIZE_ADDRESS__)
  return false; // Reused blocks would hide use-after-free from ASan.
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
  return false;
#endif
#endif
  return !device && !onDevice && options.memory_limit_bytes <= 0;
}

void *Session::Impl::takeCachedBlock(int64_t bytes) {
  auto it = blockCache.lower_bound(bytes);
  if (it == blockCache.end() || it->first > 2 * std::max<int64_t>(bytes, 64))
    return nullptr;
  void *p = it->second;
  cachedBytes -= it->first;
  spareCached.push_back(blockCache.extract(it));
  return p;
}

void Session::Impl::trimBlockCache(int64_t bytes) {
  while (!blockCache.empty() &&
         cachedBytes + currentBytes + bytes > 2 * maxPeakBytes) {
    auto it = std::prev(blockCache.end());
    cachedBytes -= it->first;
    blockBytes.erase(it->second);
    hostFree(it->second);
    blockCache.erase(it);
  }
}

void Session::Impl::releaseBlockCache() {
  std::lock_guard<std::mutex> lock(mutex);
  for (auto &entry : blockCache) {
    blockBytes.erase(entry.second);
    hostFree(entry.second);
  }
  blockCache.clear();
  cachedBytes = 0;
}

void Session::Impl::releaseBuffer(void *ptr) {
  blockBytes.erase(ptr);
  if (device)
    device->release(ptr);
  else
    hostFree(ptr);
}

void Session::Impl::freeCallback(void *self, void *ptr) {
  Impl *impl = static_cast<Impl *>(self);
  if (!impl || !ptr)
    return;
  std::lock_guard<std::mutex> lock(impl->mutex);
  if (impl->retainedPtrs.count(ptr))
    return; // Kept at an evict point: lives on until its regenerate point.
  auto it = impl->live.find(ptr);
  if (it == impl->live.end())
    return; // Not ours (or already freed): ignore rather than crash.
  int64_t bytes = it->second;
  impl->currentBytes -= bytes;
  impl->eraseLive(it);
  auto block = impl->blockBytes.find(ptr);
  int64_t size = block == impl->blockBytes.end() ? bytes : block->second;
  impl->heldBytes -= size;
  if (impl->useBlockCache() && block != impl->blockBytes.end() &&
      impl->cachedBytes + impl->currentBytes + size <= 2 * impl->maxPeakBytes) {
    impl->addCachedBlock(size, ptr);
    impl->cachedBytes += size;
    return;
  }
  impl->releaseBuffer(ptr);
}

int32_t Session::Impl::deviceLaunchCallback(
    void *self, const void *image, const char *kernel, const int64_t *grid,
    const int64_t *block, int32_t sharedBytes, void **params) {
  Impl *impl = static_cast<Impl *>(self);
  if (!impl || !impl->device || !grid || !block)
    return 4;
  std::string message;
  int32_t status = impl->device->launch(image, kernel, grid, block, sharedBytes,
                                        params, &message);
  if (status != 0)
    errorCallback(self, status, message.c_str());
  return status;
}

int32_t Session::Impl::deviceCopyCallback(void *self, void *dst,
                                          const void *src, int64_t bytes) {
  Impl *impl = static_cast<Impl *>(self);
  if (!impl || !impl->device)
    return 4;
  std::string message;
  int32_t status = impl->device->copy(dst, src, bytes, &message);
  if (status != 0)
    errorCallback(self, status, message.c_str());
  return status;
}

int32_t Session::Impl::deviceSyncCallback(void *self) {
  Impl *impl = static_cast<Impl *>(self);
  if (!impl || !impl->device)
    return 4;
  std::string message;
  int32_t status = impl->device->synchronize(&message);
  if (status != 0)
    errorCallback(self, status, message.c_str());
  return status;
}

int32_t Session::Impl::deviceCheckCallback(void *self, const void *image,
                                           int64_t *words) {
  Impl *impl = static_cast<Impl *>(self);
  if (!impl || !impl->device || !words)
    return -4;
  std::string message;
  int32_t status = impl->device->readCheckWord(image, words, &message);
  if (status == 4) {
    errorCallback(self, status, message.c_str());
    return -4;
  }
  return status;
}

int32_t Session::Impl::deviceConstantCallback(void *self, const void *host,
                                              int64_t bytes, void **device) {
  Impl *impl = static_cast<Impl *>(self);
  if (!impl || !impl->device || !device)
    return 4;
  std::string message;
  int32_t status = impl->device->constant(host, bytes, device, &message);
  if (status != 0)
    errorCallback(self, status, message.c_str());
  return status;
}

int32_t Session::Impl::deviceScratchCallback(void *self, int64_t site,
                                             int64_t bytes, void **device) {
  Impl *impl = static_cast<Impl *>(self);
  if (!impl || !impl->device || !device)
    return 4;
  std::string message;
  int32_t status = impl->device->scratch(site, bytes, device, &message);
  if (status != 0)
    errorCallback(self, status, message.c_str());
  return status;
}

void Session::Impl::releaseDeviceInputs() {
  if (device)
    for (void *p : deviceInputs)
      device->release(p);
  deviceInputs.clear();
}

void Session::Impl::errorCallback(void *self, int32_t status,
                                  const char *message) {
  Impl *impl = static_cast<Impl *>(self);
  if (!impl)
    return;
  std::lock_guard<std::mutex> lock(impl->mutex);
  // The first report wins: it names the check that stopped the run.
  if (impl->errorStatus != 0)
    return;
  impl->errorStatus = status > 0 ? status : 4;
  impl->errorMessage = message ? message : "model reported an error";
}

int32_t Session::Impl::rematEvictCallback(void *self, int32_t id, void *ptr) {
  Impl *impl = static_cast<Impl *>(self);
  if (!impl || !impl->remat)
    return 0; // No plan: keep nothing; the model frees the block.
  std::lock_guard<std::mutex> lock(impl->mutex);
  bool evict = impl->remat->decideEvict(id, impl->currentBytes);
  auto it = impl->live.find(ptr);
  if (evict || it == impl->live.end()) {
    ++impl->stats.remat_evictions;
    if (it != impl->live.end() && impl->device && impl->shouldOffload(id)) {
      // Offload: copy the buffer to host memory before the model frees it.
      auto start = std::chrono::steady_clock::now();
      int64_t bytes = it->second;
      void *host = impl->device->allocateHost(bytes);
      std::string why;
      if (host && (impl->device->copy(host, ptr, bytes, &why) != 0 ||
                   impl->device->synchronize(&why) != 0)) {
        impl->device->releaseHost(host);
        impl->errorStatus = impl->errorStatus ? impl->errorStatus : 4;
        impl->errorMessage = "offload of rematerialization candidate " +
                             std::to_string(id) + ": " + why;
        return 4;
      }
      if (host) { // Out of host memory: recompute instead.
        impl->offloaded[id] = {host, bytes};
        ++impl->stats.remat_offloads;
        impl->stats.remat_bytes_offloaded += bytes;
        std::chrono::duration<double, std::milli> ms =
            std::chrono::steady_clock::now() - start;
        impl->stats.remat_offload_ms += ms.count();
      }
    }
    return 0;
  }
  impl->retained[id] = {ptr, it->second};
  impl->retainedPtrs.insert(ptr);
  return 0;
}

int32_t Session::Impl::rematRegenerateCallback(void *self, int32_t id) {
  Impl *impl = static_cast<Impl *>(self);
  if (!impl)
    return -4;
  std::pair<void *, int64_t> host{nullptr, 0};
  {
    std::lock_guard<std::mutex> lock(impl->mutex);
    auto it = impl->offloaded.find(id);
    if (it != impl->offloaded.end()) {
      host = it->second;
      impl->offloaded.erase(it);
    }
  }
  if (host.first) {
    // Offloaded: a fresh device buffer (tracked like the model's own
    // allocation at this point), filled from the host copy and handed to
    // the model's next alloc, as for a kept candidate.
    auto start = std::chrono::steady_clock::now();
    bool refused = false;
    void *p = impl->tryAllocate(host.second, 64, &refused);
    if (refused || !p) {
      impl->device->releaseHost(host.first);
      if (impl->armed && std::this_thread::get_id() == impl->runThread)
        std::longjmp(impl->jmp, 1);
      return -3;
    }
    std::string why;
    if (impl->device->copy(p, host.first, host.second, &why) != 0 ||
        impl->device->synchronize(&why) != 0) {
      impl->device->releaseHost(host.first);
      errorCallback(self, 4,
                    ("offload of rematerialization candidate " +
                     std::to_string(id) + ": " + why)
                        .c_str());
      return -4;
    }
    impl->device->releaseHost(host.first);
    std::lock_guard<std::mutex> lock(impl->mutex);
    impl->handback = p;
    impl->handbackBytes = host.second;
    std::chrono::duration<double, std::milli> ms =
        std::chrono::steady_clock::now() - start;
    impl->stats.remat_offload_ms += ms.count();
    return 1;
  }
  {
    std::lock_guard<std::mutex> lock(impl->mutex);
    auto it = impl->retained.find(id);
    if (it != impl->retained.end()) {
      impl->handback = it->second.first;
      impl->handbackBytes = it->second.second;
      impl->retainedPtrs.erase(it->second.first);
      impl->retained.erase(it);
      return 1;
    }
    ++impl->stats.remat_regenerations;
    if (impl->remat && id >= 0 &&
        id < static_cast<int32_t>(impl->remat->profile().candidates.size()))
      impl->stats.remat_bytes_recomputed +=
          impl->remat->profile().candidates[id].bytes;
  }
  impl->recomputeStart = std::chrono::steady_clock::now();
  return 0;
}

void Session::Impl::rematRegeneratedCallback(void *self, int32_t) {
  Impl *impl = static_cast<Impl *>(self);
  if (!impl)
    return;
  std::chrono::duration<double, std::milli> elapsed =
      std::chrono::steady_clock::now() - impl->recomputeStart;
  impl->stats.remat_recompute_ms += elapsed.count();
}

runtime::cpu::LibraryCalls &Session::Impl::cpuLibrary() {
  if (!library)
    library = std::make_unique<runtime::cpu::LibraryCalls>(
        /*maxPrimitives=*/512, options.num_threads);
  return *library;
}

Status Session::Impl::predict(const std::vector<Tensor> &inputs,
                              Prediction **out) {
  auto same = [&](const Prediction &p) {
    for (size_t i = 0; i < inputs.size(); ++i)
      if (p.shapes[i] != inputs[i].shape())
        return false;
    return true;
  };
  for (size_t i = 0; i < predictions.size(); ++i) {
    if (!same(*predictions[i]))
      continue;
    std::rotate(predictions.begin(), predictions.begin() + i,
                predictions.begin() + i + 1);
    *out = predictions.front().get();
    return Status::ok();
  }
  const Signature &sig = exe->signature();
  auto p = std::make_unique<Prediction>();
  for (const Tensor &t : inputs)
    p->shapes.push_back(t.shape());
  std::map<std::string, int64_t> dims;
  if (Status s = sig.bindDims(p->shapes, &dims); !s)
    return s;
  // Library-call temporaries from the session's own module, on its
  // threads: the primitives made here serve the runs.
  if (Status s = runtime::predictPeakAt(
          sig, dims,
          [this]() -> runtime::cpu::LibraryCalls & { return cpuLibrary(); },
          &p->predicted);
      !s)
    return s;
  p->minimum = p->predicted;
  if (sig.remat.present && p->predicted >= 0) {
    runtime::RematProfile profile;
    std::string error;
    if (!runtime::evaluateRematProfile(sig.remat, dims, &profile, &error))
      return Status::internal("remat: " + error);
    p->planner = std::make_unique<runtime::RematPlanner>(
        std::move(profile), options.memory_limit_bytes,
        options.remat_policy == RematPolicy::LargestFirst
            ? runtime::RematPolicyKind::LargestFirst
            : runtime::RematPolicyKind::DtrScore);
    p->minimum = std::min(p->predicted, p->planner->minimumPeak());
  }
  if (predictions.size() >= kMaxPredictions)
    predictions.pop_back();
  predictions.insert(predictions.begin(), std::move(p));
  *out = predictions.front().get();
  return Status::ok();
}

Status Session::Impl::planRemat(const std::vector<Tensor> &inputs) {
  remat = nullptr;
  releaseOffloaded();
  retained.clear();
  retainedPtrs.clear();
  handback = nullptr;
  Prediction *p = nullptr;
  if (Status s = predict(inputs, &p); !s)
    return s;
  stats.predicted_peak_bytes = p->predicted;
  stats.remat_minimum_peak_bytes = p->minimum;
  if (p->planner) {
    p->planner->reset();
    remat = p->planner.get();
  }
  int64_t limit = options.memory_limit_bytes;
  if (limit > 0 && p->minimum >= 0 && limit < p->minimum)
    return Status::resourceExhausted(
        "memory limit " + std::to_string(limit) +
        " bytes is below the minimum peak " + std::to_string(p->minimum) +
        " bytes these input shapes can reach by rematerialization (" +
        std::to_string(p->predicted) +
        " bytes with nothing evicted); nothing ran");
  return Status::ok();
}

int64_t Session::Impl::releaseAll() {
  std::lock_guard<std::mutex> lock(mutex);
  int64_t n = static_cast<int64_t>(live.size());
  for (auto &entry : live)
    releaseBuffer(entry.first);
  live.clear();
  heldBytes = 0;
  retained.clear();
  retainedPtrs.clear();
  handback = nullptr;
  releaseDeviceInputs();
  for (auto &entry : offloaded)
    device->releaseHost(entry.second.first);
  offloaded.clear();
  currentBytes = 0;
  return n;
}

void Session::Impl::releaseOffloaded() {
  std::lock_guard<std::mutex> lock(mutex);
  for (auto &entry : offloaded)
    device->releaseHost(entry.second.first);
  offloaded.clear();
}

bool Session::Impl::shouldOffload(int32_t id) const {
  switch (options.device_eviction) {
  case DeviceEviction::Recompute:
    return false;
  case DeviceEviction::Offload:
    return true;
  case DeviceEviction::Auto:
    break;
  }
  // Recompute at an assumed 1e12 FLOP/s (generated kernels, far below the
  // device's peak) against the bytes copied out and back at an assumed
  // 2.5e10 B/s over PCIe: offload when the candidate costs more than 80
  // FLOPs per byte to recompute.
  const auto &candidates = remat->profile().candidates;
  if (id < 0 || id >= static_cast<int32_t>(candidates.size()))
    return false;
  const auto &c = candidates[id];
  return c.flops / 1e12 > 2.0 * static_cast<double>(c.bytes) / 2.5e10;
}

//===----------------------------------------------------------------------===//
// Input validation
//===----------------------------------------------------------------------===//

namespace {

std::string rangeToString(const SymbolSpec &sym) {
  return "[" + std::to_string(sym.min) + ", " +
         (sym.max ? std::to_string(*sym.max) + "]" : std::string("inf)"));
}

Status validate(const Signature &sig, const std::vector<Tensor> &inputs) {
  if (inputs.size() != sig.inputs.size())
    return Status::invalidArgument(
        "expected " + std::to_string(sig.inputs.size()) + " inputs but got " +
        std::to_string(inputs.size()));
  // The symbols bound so far (few: a linear search); messages are built
  // only when a check fails.
  struct Binding {
    const std::string *symbol;
    int64_t size;
    size_t input;
    size_t dim;
  };
  std::vector<Binding> bound;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const TensorSpec &spec = sig.inputs[i];
    const Tensor &t = inputs[i];
    auto who = [&] { return "input '" + spec.name + "'"; };
    if (!t.isValid())
      return Status::invalidArgument(who() + ": tensor is empty (no buffer)");
    if (t.dtype() != spec.dtype)
      return Status::invalidArgument(who() + ": expected dtype " +
                                     dtypeName(spec.dtype) + " but got " +
                                     dtypeName(t.dtype()));
    if (t.rank() != spec.rank())
      return Status::invalidArgument(
          who() + ": expected rank " + std::to_string(spec.rank()) +
          " but got rank " + std::to_string(t.rank()) + " (shape " +
          shapeToString(t.shape()) + ")");
    for (size_t d = 0; d < spec.shape.size(); ++d) {
      const DimSpec &dim = spec.shape[d];
      int64_t got = t.shape()[d];
      auto where = [&] {
        std::string w = who() + " dim " + std::to_string(d);
        if (dim.isSymbolic())
          w += " ('" + dim.symbol + "')";
        return w;
      };
      if (got < 0)
        return Status::invalidArgument(where() + ": negative size " +
                                       std::to_string(got));
      if (dim.isStatic()) {
        if (got != dim.size)
          return Status::invalidArgument(where() + ": expected " +
                                         std::to_string(dim.size) +
                                         " but got " + std::to_string(got));
        continue;
      }
      if (!dim.isSymbolic())
        continue;
      auto it = std::find_if(bound.begin(), bound.end(), [&](const Binding &b) {
        return *b.symbol == dim.symbol;
      });
      if (it != bound.end()) {
        if (it->size != got)
          return Status::invalidArgument(
              where() + ": got " + std::to_string(got) + " but input '" +
              sig.inputs[it->input].name + "' dim " + std::to_string(it->dim) +
              " has '" + dim.symbol + "' = " + std::to_string(it->size));
        continue;
      }
      if (const SymbolSpec *sym = sig.findSymbol(dim.symbol)) {
        if (got < sym->min || (sym->max && got > *sym->max))
          return Status::invalidArgument(
              where() + ": got " + std::to_string(got) +
              ", outside the range " + rangeToString(*sym) + " of '" +
              dim.symbol + "'");
      }
      bound.push_back(Binding{&dim.symbol, got, i, d});
    }
    if (t.numElements() < 0)
      return Status::invalidArgument(who() + ": too many elements");
    if (t.numElements() > 0 && !t.data())
      return Status::invalidArgument(who() + ": no data");
  }
  return Status::ok();
}

/// Row-major strides of `sizes`, in elements.
std::vector<int64_t> rowMajorStrides(const std::vector<int64_t> &sizes) {
  std::vector<int64_t> strides(sizes.size(), 1);
  for (int64_t i = static_cast<int64_t>(sizes.size()) - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * sizes[i + 1];
  return strides;
}

/// True when a view with `sizes`/`strides` is dense row-major (dims of size
/// 1 may have any stride).
bool isContiguous(const std::vector<int64_t> &sizes,
                  const std::vector<int64_t> &strides) {
  if (numElementsOf(sizes) == 0)
    return true;
  std::vector<int64_t> expected = rowMajorStrides(sizes);
  for (size_t i = 0; i < sizes.size(); ++i)
    if (sizes[i] != 1 && strides[i] != expected[i])
      return false;
  return true;
}

/// Gathers a strided view into dense row-major `dst`.
void copyStrided(const char *base, const std::vector<int64_t> &sizes,
                 const std::vector<int64_t> &strides, int64_t elemSize,
                 char *dst) {
  int64_t n = numElementsOf(sizes);
  if (n <= 0)
    return;
  size_t rank = sizes.size();
  std::vector<int64_t> idx(rank, 0);
  int64_t srcOffset = 0;
  for (int64_t k = 0; k < n; ++k) {
    std::memcpy(dst + k * elemSize, base + srcOffset * elemSize,
                static_cast<size_t>(elemSize));
    for (int64_t d = static_cast<int64_t>(rank) - 1; d >= 0; --d) {
      if (++idx[d] < sizes[d]) {
        srcOffset += strides[d];
        break;
      }
      srcOffset -= strides[d] * (sizes[d] - 1);
      idx[d] = 0;
    }
  }
}

} // namespace

//===----------------------------------------------------------------------===//
// Session
//===----------------------------------------------------------------------===//

Session::Session(std::shared_ptr<const Executable> executable,
                 SessionOptions options)
    : impl_(std::make_unique<Impl>()) {
  impl_->exe = std::move(executable);
  impl_->options = options;
  impl_->ctx.self = impl_.get();
  impl_->ctx.alloc = &Impl::allocCallback;
  impl_->ctx.free = &Impl::freeCallback;
  impl_->ctx.error = &Impl::errorCallback;
  impl_->ctx.library_call = &Impl::libraryCallback;
  impl_->ctx.remat_evict = &Impl::rematEvictCallback;
  impl_->ctx.remat_regenerate = &Impl::rematRegenerateCallback;
  impl_->ctx.remat_regenerated = &Impl::rematRegeneratedCallback;
  impl_->ctx.parallel_for = [](void *self, runtime::cpu::ParallelBody body,
                               void *env, int64_t n, int64_t minChunk) {
    runtime::cpu::parallelFor(static_cast<Impl *>(self)->options.num_threads,
                              body, env, n, minChunk);
  };
  if (impl_->exe && impl_->exe->signature().target == "cuda") {
    impl_->onDevice = true;
    impl_->ctx.device_launch = &Impl::deviceLaunchCallback;
    impl_->ctx.device_copy = &Impl::deviceCopyCallback;
    impl_->ctx.device_sync = &Impl::deviceSyncCallback;
    impl_->ctx.device_check = &Impl::deviceCheckCallback;
    impl_->ctx.device_constant = &Impl::deviceConstantCallback;
    impl_->ctx.device_scratch = &Impl::deviceScratchCallback;
  }
}

Session::~Session() {
  if (impl_) {
    impl_->releaseAll();
    impl_->releaseBlockCache();
  }
}

Session::Session(Session &&) noexcept = default;
Session &Session::operator=(Session &&other) noexcept {
  if (this != &other) {
    if (impl_) {
      impl_->releaseAll();
      impl_->releaseBlockCache();
    }
    impl_ = std::move(other.impl_);
  }
  return *this;
}

const SessionStats &Session::stats() const { return impl_->stats; }
const SessionOptions &Session::options() const { return impl_->options; }
const Executable &Session::executable() const { return *impl_->exe; }

Status Session::validateInputs(const std::vector<Tensor> &inputs) const {
  if (!impl_ || !impl_->exe)
    return Status::internal("session has no executable");
  return validate(impl_->exe->signature(), inputs);
}

Status Session::run(const std::vector<Tensor> &inputs,
                    std::vector<Tensor> *outputs) {
  if (!outputs)
    return Status::invalidArgument("outputs must not be null");
  outputs->clear();
  if (!impl_ || !impl_->exe)
    return Status::internal("session has no executable");
  auto start = std::chrono::steady_clock::now();
  Status status;
  try {
    status = impl_->runImpl(inputs, outputs);
  } catch (const std::bad_alloc &) {
    status = Status::resourceExhausted("host out of memory in the runtime");
  } catch (const std::exception &e) {
    status = Status::internal(std::string("runtime exception: ") + e.what());
  }
  if (!status)
    outputs->clear();
  std::chrono::duration<double, std::milli> elapsed =
      std::chrono::steady_clock::now() - start;
  impl_->stats.last_latency_ms = elapsed.count();
  return status;
}

Status Session::run(const std::map<std::string, Tensor> &inputs,
                    std::vector<Tensor> *outputs) {
  if (!outputs)
    return Status::invalidArgument("outputs must not be null");
  outputs->clear();
  if (!impl_ || !impl_->exe)
    return Status::internal("session has no executable");
  const Signature &sig = impl_->exe->signature();
  for (const auto &entry : inputs) {
    if (sig.findInput(entry.first) < 0) {
      std::string names;
      for (const TensorSpec &spec : sig.inputs)
        names += (names.empty() ? "" : ", ") + spec.name;
      return Status::invalidArgument("unknown input '" + entry.first +
                                     "' (model inputs: " + names + ")");
    }
  }
  std::vector<Tensor> ordered;
  ordered.reserve(sig.inputs.size());
  for (const TensorSpec &spec : sig.inputs) {
    auto it = inputs.find(spec.name);
    if (it == inputs.end())
      return Status::invalidArgument("missing input '" + spec.name + "'");
    ordered.push_back(it->second);
  }
  return run(ordered, outputs);
}

Status Session::Impl::runImpl(const std::vector<Tensor> &inputs,
                              std::vector<Tensor> *outputs) {
  const Signature &sig = exe->signature();
  stats = SessionStats();
  if (Status s = validate(sig, inputs); !s)
    return s;
  // Feasibility first: a limit below the lowest reachable peak fails here,
  // before anything is allocated or run.
  if (Status s = planRemat(inputs); !s)
    return s;

  if (onDevice && !device) {
    std::string why;
    device = runtime::cuda::Device::open(/*ordinal=*/0, &why);
    if (!device)
      return Status::loadFailed(why);
  }
  {
    std::lock_guard<std::mutex> lock(mutex);
    for (auto &entry : live)
      releaseBuffer(entry.first);
    live.clear();
    heldBytes = 0;
    releaseDeviceInputs();
  }
  // Input descriptors: contiguous row-major, allocated = aligned = data (a
  // device copy of the data for a CUDA model).
  std::vector<std::vector<int64_t>> inDescs(inputs.size());
  std::vector<void *> inPtrs(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Tensor &t = inputs[i];
    std::vector<int64_t> &d = inDescs[i];
    int64_t r = t.rank();
    d.assign(3 + 2 * r, 0);
    auto data = reinterpret_cast<intptr_t>(t.data());
    if (device) {
      bool oom = false;
      std::string why;
      void *p = device->allocate(t.byteSize(), &oom, &why);
      if (!p)
        return oom ? Status::resourceExhausted(
                         "input '" + sig.inputs[i].name +
                         "': device out of memory: " + why)
                   : Status::internal("input '" + sig.inputs[i].name +
                                      "': " + why);
      deviceInputs.push_back(p);
      if (device->copy(p, t.data(), t.byteSize(), &why) != 0)
        return Status::internal("input '" + sig.inputs[i].name + "': " + why);
      data = reinterpret_cast<intptr_t>(p);
    }
    d[0] = data;
    d[1] = data;
    d[2] = 0;
    std::vector<int64_t> strides = rowMajorStrides(t.shape());
    for (int64_t k = 0; k < r; ++k) {
      d[3 + k] = t.shape()[k];
      d[3 + r + k] = strides[k];
    }
    inPtrs[i] = d.data();
  }
  // Output descriptors: zeroed, filled by the model.
  std::vector<std::vector<int64_t>> outDescs(sig.outputs.size());
  std::vector<void *> outPtrs(sig.outputs.size());
  for (size_t i = 0; i < sig.outputs.size(); ++i) {
    outDescs[i].assign(3 + 2 * sig.outputs[i].rank(), 0);
    outPtrs[i] = outDescs[i].data();
  }

  {
    std::lock_guard<std::mutex> lock(mutex);
    currentBytes = 0;
    peakBytes = 0;
    numAllocs = 0;
    reservedPeakBytes = heldBytes + cachedBytes;
  }
  abort = AbortInfo();
  errorStatus = 0;
  errorMessage.clear();
  runThread = std::this_thread::get_id();
  auto fn = reinterpret_cast<disc_model_run_fn>(exe->runFunction());
  int32_t rc = callModelGuarded(this, fn, inPtrs.data(), outPtrs.data());

  auto finishStats = [&](int64_t leaked) {
    std::lock_guard<std::mutex> lock(mutex);
    stats.peak_bytes = peakBytes;
    stats.reserved_peak_bytes = reservedPeakBytes;
    stats.current_bytes = currentBytes;
    stats.num_allocs = numAllocs;
    stats.leaked_allocs = leaked;
  };

  if (rc == -1) {
    AbortInfo info = abort;
    releaseAll();
    finishStats(0);
    if (info.outOfDeviceMemory)
      return Status::resourceExhausted(
          "device out of memory: requested " +
          std::to_string(info.requestedBytes) + " bytes with " +
          std::to_string(info.liveBytes) + " bytes live (" + info.deviceError +
          ")");
    if (info.outOfHostMemory)
      return Status::resourceExhausted(
          "host out of memory: requested " +
          std::to_string(info.requestedBytes) + " bytes with " +
          std::to_string(info.liveBytes) + " bytes live");
    return Status::resourceExhausted(
        "memory limit exceeded: requested " +
        std::to_string(info.requestedBytes) + " bytes with " +
        std::to_string(info.liveBytes) + " bytes live, limit " +
        std::to_string(info.limitBytes) + " bytes");
  }
  if (rc != 0 && errorStatus != 0) {
    // A run-time contract check failed: every buffer the model still holds
    // goes back, and the session stays usable.
    releaseAll();
    finishStats(0);
    StatusCode code = (errorStatus >= 1 && errorStatus <= 4)
                          ? static_cast<StatusCode>(errorStatus)
                          : StatusCode::Internal;
    return Status(code, errorMessage);
  }
  if (rc != 0) {
    releaseAll();
    finishStats(0);
    StatusCode code = (rc >= 1 && rc <= 4) ? static_cast<StatusCode>(rc)
                                           : StatusCode::Internal;
    return Status(code, "model '" +
                            (sig.model.empty() ? exe->path() : sig.model) +
                            "' returned status " + std::to_string(rc));
  }

  // Adopt or copy the outputs.
  std::vector<Tensor> results;
  results.reserve(sig.outputs.size());
  Status status;
  for (size_t i = 0; i < sig.outputs.size() && status; ++i) {
    const TensorSpec &spec = sig.outputs[i];
    const std::vector<int64_t> &d = outDescs[i];
    int64_t r = spec.rank();
    char *allocated = reinterpret_cast<char *>(static_cast<intptr_t>(d[0]));
    char *aligned = reinterpret_cast<char *>(static_cast<intptr_t>(d[1]));
    int64_t offset = d[2];
    std::vector<int64_t> sizes(d.begin() + 3, d.begin() + 3 + r);
    std::vector<int64_t> strides(d.begin() + 3 + r, d.begin() + 3 + 2 * r);
    auto who = [&] { return "output '" + spec.name + "'"; };
    int64_t n = numElementsOf(sizes);
    if (n < 0) {
      status =
          Status::internal(who() + ": invalid sizes " + shapeToString(sizes));
      break;
    }
    for (int64_t k = 0; k < r; ++k) {
      if (spec.shape[k].isStatic() && spec.shape[k].size != sizes[k]) {
        status = Status::internal(
            who() + " dim " + std::to_string(k) + ": signature says " +
            std::to_string(spec.shape[k].size) + " but the model produced " +
            std::to_string(sizes[k]));
        break;
      }
    }
    if (!status)
      break;
    int64_t elem = dtypeSize(spec.dtype);
    int64_t bytes = n * elem;
    if (n > 0 && !aligned) {
      status = Status::internal(who() + ": model returned a null buffer");
      break;
    }
    char *start = aligned ? aligned + offset * elem : nullptr;

    // Adopt when the data is a dense run inside a live tracked allocation.
    bool adopted = false;
    if (device) {
      // Device memory: copy the view's span to the host, then gather.
      Tensor copy = Tensor::zeros(spec.dtype, sizes);
      if (!copy.isValid()) {
        status = Status::resourceExhausted(who() + ": cannot allocate " +
                                           std::to_string(bytes) + " bytes");
        break;
      }
      if (n > 0) {
        int64_t span = 1;
        for (int64_t k = 0; k < r; ++k)
          span += (sizes[k] - 1) * strides[k];
        bool dense = isContiguous(sizes, strides);
        std::vector<char> staging;
        char *dst = static_cast<char *>(copy.data());
        if (!dense) {
          staging.resize(static_cast<size_t>(span * elem));
          dst = staging.data();
        }
        std::string why;
        if (device->copy(dst, start, dense ? bytes : span * elem, &why) != 0 ||
            device->synchronize(&why) != 0) {
          status = Status::internal(who() + ": " + why);
          break;
        }
        if (!dense)
          copyStrided(staging.data(), sizes, strides, elem,
                      static_cast<char *>(copy.data()));
      }
      results.push_back(std::move(copy));
      continue;
    }
    if (allocated && isContiguous(sizes, strides)) {
      std::lock_guard<std::mutex> lock(mutex);
      auto it = live.find(allocated);
      if (it != live.end() && start >= allocated &&
          start + bytes <= allocated + it->second) {
        currentBytes -= it->second;
        heldBytes -= blockSize(allocated, it->second);
        live.erase(it);
        blockBytes.erase(allocated); // The tensor owns (and frees) it now.
        std::shared_ptr<void> owner(allocated, [](void *p) { hostFree(p); });
        results.push_back(
            Tensor::adopt(spec.dtype, sizes, start, std::move(owner)));
        adopted = true;
      }
    }
    if (adopted)
      continue;
    Tensor copy = Tensor::zeros(spec.dtype, sizes);
    if (!copy.isValid()) {
      status = Status::resourceExhausted(who() + ": cannot allocate " +
                                         std::to_string(bytes) + " bytes");
      break;
    }
    if (n > 0)
      copyStrided(start, sizes, strides, elem,
                  static_cast<char *>(copy.data()));
    results.push_back(std::move(copy));
  }
  // Whatever is still live was leaked by the model, or backs an output we
  // copied (e.g. a strided view of a temporary): free it now, counting only
  // the former as leaks.
  int64_t leaked = 0;
  {
    std::lock_guard<std::mutex> lock(mutex);
    for (auto &entry : live) {
      bool referenced = false;
      for (const std::vector<int64_t> &d : outDescs)
        referenced |= reinterpret_cast<void *>(static_cast<intptr_t>(d[0])) ==
                      entry.first;
      if (!referenced)
        ++leaked;
    }
  }
  releaseAll();
  finishStats(leaked);
  if (!status)
    return status;
  *outputs = std::move(results);
  return Status::ok();
}

} // namespace disc
