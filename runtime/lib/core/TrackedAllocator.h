//===- TrackedAllocator.h - A session's allocator bookkeeping ---*- C++ -*-===//
//
// Every buffer a model allocates through `disc_ral_context.alloc` (and
// every library-call temporary) comes from its session's TrackedAllocator,
// on the session's Device (Device.h). It keeps
//
//   - the live buffers and their requested bytes, the bytes live now, the
//     peak of a run and the number of allocations (SessionStats);
//   - the memory limit (SessionOptions::memory_limit_bytes): a request that
//     would take the live bytes over it is refused, and the refusal is
//     recorded for the run's ResourceExhausted message;
//   - the block cache: freed host blocks kept, by size, for later
//     allocations, so that a model run again reuses the previous run's
//     blocks instead of taking fresh pages from the OS (glibc returns large
//     freed blocks to the OS and the next run page-faults every byte in
//     again, which costs more than the model's loops). An allocation takes
//     the smallest cached block of at least its size and at most twice it.
//     Cached blocks are not live: the tracked bytes (peak, limit) do not
//     change. Cached plus live bytes stay below twice the highest peak of
//     any run so far. Under a memory limit an allocation takes only a block
//     of exactly its size, and cached plus held bytes stay at most the
//     limit: the limit bounds what the session holds from the OS too. Off
//     on a device that does not reuse blocks (CUDA) and under
//     AddressSanitizer;
//   - buffer plans, one per input shapes (the `shapeKey` of `beginRun`):
//     the first run at some shapes records the run's allocations in order
//     with their sizes and lifetimes; when it completes, the allocator
//     packs those buffers into one arena (offsets by the greedy-by-size
//     algorithm of Pisarchyk and Lee, "Efficient Memory Management for
//     Deep Neural Net Inference", 2020: largest first, each at the
//     smallest gap among the buffers whose lifetimes overlap it) and maps
//     the arena's pages (Device::allocateArena). Later runs at those
//     shapes take the i-th allocation at its planned offset: no malloc, no
//     free, no page fault from the second run on, whatever the heap did
//     before (the first runs after a shape change used to fault in pages
//     until the heap settled). A request of another size than the plan's
//     i-th (a model whose buffers depend on values), or whose planned range
//     is still in use (a buffer freed later than in the recorded run),
//     leaves the plan: the request, and for a size, the rest of the run,
//     go to the block cache; after a size miss the next run records the
//     plan again, at most kMaxPlanMisses times. Not planned: outputs handed
//     over to the caller, buffers live at the end of the run, alignments
//     above 64, runs of more than kMaxPlannedBuffers allocations. The
//     block cache's bound counts the arena whole. One arena serves every
//     plan (a session runs one shape at a time), sized to the largest
//     plan; at most kMaxPlans plans are kept, the least recently used
//     dropped. Off under a memory limit (evictions change the sequence)
//     and on devices without an arena (CUDA). Under AddressSanitizer every
//     planned buffer gets its own range and a redzone, and the free ranges
//     are poisoned, so that reads after free and past the end are
//     reported;
//   - the blocks kept at rematerialization evict points, whose free by the
//     model is a no-op (RematRuntime.h).
//
// Bytes are requested sizes, not rounded to the alignment; "held" bytes are
// those of the blocks behind the live buffers (a reused block may be larger
// than its request) and, with the cached ones, what the session holds from
// the OS (SessionStats::reserved_peak_bytes).
//
// Thread safety: compiled code may allocate and free from worker threads;
// every member takes `mutex()`, except those named ...Locked, which expect
// the caller to hold it. The other runtime parts of a session that must see
// the allocator's state atomically (remat decisions, reported errors) take
// the same mutex.
//
// Internal to libdisc_runtime (hidden).
//
//===----------------------------------------------------------------------===//
#ifndef DISC_RUNTIME_LIB_CORE_TRACKEDALLOCATOR_H
#define DISC_RUNTIME_LIB_CORE_TRACKEDALLOCATOR_H

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#pragma GCC visibility push(hidden)
namespace disc::runtime {

class Device;
class TraceRecorder;

/// Why the allocator refused a request (the last refusal of a run).
struct AllocRefusal {
  int64_t requestedBytes = 0;
  int64_t liveBytes = 0;
  int64_t limitBytes = 0;
  /// The device refused (out of memory or a driver error, `error`); else
  /// the request was over the memory limit.
  bool outOfMemory = false;
  std::string error;
};

/// The allocator's counters of the current run.
struct AllocCounters {
  int64_t peakBytes = 0;
  int64_t reservedPeakBytes = 0;
  int64_t currentBytes = 0;
  int64_t numAllocs = 0;
};

class TrackedAllocator {
public:
  /// Memory of `device`; `limitBytes` 0 = no limit.
  TrackedAllocator(Device &device, int64_t limitBytes);
  /// Frees the cached blocks and the arena of the buffer plans (the live
  /// buffers are the owner's to free first: releaseLive).
  ~TrackedAllocator();
  TrackedAllocator(const TrackedAllocator &) = delete;
  TrackedAllocator &operator=(const TrackedAllocator &) = delete;

  /// `bytes` bytes aligned to `alignment` (at least 16, a power of two),
  /// tracked as live. Null with `*refused` false for a negative size or a
  /// bad alignment; null with `*refused` true, and the refusal recorded,
  /// over the limit or when the device is out of memory.
  void *allocate(int64_t bytes, int64_t alignment, bool *refused);
  /// Frees a live buffer (into the block cache where it may go). A kept
  /// block, an unknown pointer and null are ignored.
  void free(void *ptr);

  std::mutex &mutex() { return mutex_; }
  /// The requested bytes of live buffer `ptr`, or -1 when it is not live.
  int64_t liveBytesLocked(void *ptr) const;
  int64_t currentBytesLocked() const { return currentBytes_; }
  /// Marks live buffer `ptr` kept (its free is ignored) / no longer kept.
  /// Without a limit every rematerialization candidate is kept, in every
  /// run alike: a buffer plan records its lifetime up to its last free.
  void keepLocked(void *ptr) { kept_.insert(ptr); }
  void unkeepLocked(void *ptr) { kept_.erase(ptr); }
  void clearKept();

  /// Hands live host block `block` over to the caller when [start, start +
  /// bytes) lies inside it: no longer live, tracked or cached; the caller
  /// frees it (Device::release). False, changing nothing, otherwise.
  bool handOver(void *block, const char *start, int64_t bytes);
  /// Calls `f(ptr)` for each live buffer (under the mutex); returns how many
  /// calls returned true.
  template <typename F>
  int64_t countLive(F f) {
    std::lock_guard<std::mutex> lock(mutex_);
    int64_t n = 0;
    for (auto &entry : live_)
      n += f(entry.first) ? 1 : 0;
    return n;
  }

  /// Starts a run's counters (live bytes, peak, allocations; the reserved
  /// peak from what is held now) and forgets the last refusal. `shapeKey`:
  /// the run's input shapes, which select its buffer plan (0: none, no
  /// plan used or recorded).
  void beginRun(uint64_t shapeKey = 0);
  /// Ends a run begun with `beginRun`, after its buffers were freed: a
  /// first run at its shapes that completed (`completed`) leaves a buffer
  /// plan for the next ones.
  void endRun(bool completed);
  /// The number of buffer plans kept, and the bytes of their arena.
  int64_t numBufferPlans();
  /// Whether the next run at `shapeKey` takes its buffers from a plan.
  bool replaysPlan(uint64_t shapeKey);
  int64_t arenaBytes();
  AllocCounters counters();
  const AllocRefusal &refusal() const { return refusal_; }
  /// Frees every live buffer (the held bytes go to 0; the live bytes and
  /// the kept blocks stay as they are).
  void releaseLive();
  /// Frees every live buffer and forgets the kept blocks; the live bytes go
  /// to 0.
  void releaseAll();
  /// Forgets every live buffer and kept block without freeing it (the
  /// buffers a discarded CUDA graph capture recorded, which were never
  /// allocated, or graph allocations the caller frees); the live bytes go
  /// to 0.
  void abandonAll();
  /// Frees the cached blocks.
  void releaseBlockCache();
  /// Drops the buffer plans and frees their arena (when no buffer of the
  /// run lives in it).
  void releasePlans();
  /// Reports every change of the live bytes to `recorder` (null: none,
  /// one test per allocation and free).
  void setRecorder(TraceRecorder *recorder);

private:
  bool useBlockCache() const;
  /// Whether caching (or allocating) `bytes` more would take the cache
  /// over its bound: `cachedBytes_ + currentBytes_` at most twice the
  /// highest peak and, under a limit, `cachedBytes_ + heldBytes_` at most
  /// the limit.
  bool overCacheBound(int64_t bytes) const;
  /// A cached block of [bytes, 2 * bytes] bytes (alignment 64; exactly
  /// `bytes` under a limit), or null.
  void *takeCachedBlock(int64_t bytes);
  /// Frees cached blocks, largest first, until `bytes` more is within the
  /// bound of `overCacheBound`.
  void trimBlockCache(int64_t bytes);
  void releaseBlockCacheLocked();
  /// Frees the arena (no buffer may live in it).
  void freeArena();
  /// Frees a buffer of the device, forgetting its block size.
  void releaseBuffer(void *ptr);
  /// The size of block `p`: its block size when it has one, else
  /// `requested`.
  int64_t blockSize(void *p, int64_t requested) const;
  void noteHeld(int64_t delta);
  void addLive(void *p, int64_t bytes);
  /// Whether `p` lies in the arena of the buffer plans.
  bool inArena(const void *p) const {
    return arena_ && p >= arena_ && p < arena_ + arenaBytes_;
  }
  /// The planned block of the run's next allocation, or null (see the
  /// file comment).
  void *takePlannedBlock(int64_t bytes, int64_t align);
  /// Records allocation `p` of `bytes` (a run recording its plan).
  void recordAllocation(void *p, int64_t bytes, int64_t align);
  /// Makes the plan of the run just recorded; false when it cannot be
  /// used (no arena) or made (nothing to plan, too many buffers: later
  /// runs at these shapes then record nothing).
  bool makePlan();

  /// A buffer plan: the offset in the arena of each allocation of a run,
  /// in allocation order (-1: not planned), with its requested bytes.
  struct BufferPlan {
    std::vector<int64_t> bytes;
    std::vector<int64_t> offsets;
    int64_t arenaBytes = 0;
    uint64_t lastUse = 0;
    /// Runs that missed the plan's sizes; the next run after a miss
    /// (`stale`) records the plan again, up to kMaxPlanMisses.
    int missed = 0;
    bool stale = false;
  };
  /// An allocation of the run recording a plan: requested bytes, the
  /// event count at its allocation and at its free (-1: not freed),
  /// whether it may not be planned.
  struct Recorded {
    int64_t bytes;
    int64_t allocatedAt;
    int64_t freedAt;
    bool excluded;
  };
  /// The plan of `key`, made empty (after dropping the least recently
  /// used one at kMaxPlans) when there is none.
  BufferPlan &planSlot(uint64_t key);
  enum class PlanMode { Off, Record, Replay };
  static constexpr size_t kMaxPlans = 16;

  Device &device_;
  int64_t limit_;
  std::mutex mutex_;
  std::unordered_map<void *, int64_t> live_;
  /// Nodes of `live_` and `blockCache_` taken out for reuse (C++17 node
  /// handles), so that allocations and frees of a run at shapes seen
  /// before allocate no bookkeeping memory.
  std::vector<std::unordered_map<void *, int64_t>::node_type> spareLive_;
  std::vector<std::multimap<int64_t, void *>::node_type> spareCached_;
  int64_t currentBytes_ = 0;
  int64_t peakBytes_ = 0;
  int64_t numAllocs_ = 0;
  /// Freed host blocks by size.
  std::multimap<int64_t, void *> blockCache_;
  /// The size each host block was allocated with.
  std::unordered_map<void *, int64_t> blockBytes_;
  int64_t cachedBytes_ = 0;
  /// Bytes of the blocks behind `live_`, and the peak of `heldBytes_ +
  /// cachedBytes_` in the current run.
  int64_t heldBytes_ = 0;
  int64_t reservedPeakBytes_ = 0;
  /// The highest peak of any run so far.
  int64_t maxPeakBytes_ = 0;
  std::unordered_set<void *> kept_;
  /// Buffer plans by shape key, the run's mode and plan, and the next
  /// allocation's index in it.
  std::unordered_map<uint64_t, BufferPlan> plans_;
  PlanMode planMode_ = PlanMode::Off;
  uint64_t runKey_ = 0;
  BufferPlan *plan_ = nullptr;
  size_t nextSlot_ = 0;
  uint64_t planUses_ = 0;
  /// The run recording a plan: its allocations, the live ones' indices,
  /// the event count.
  std::vector<Recorded> recorded_;
  std::unordered_map<void *, size_t> recordedLive_;
  int64_t events_ = 0;
  /// The arena and the ranges of it in use (offset -> end).
  char *arena_ = nullptr;
  int64_t arenaBytes_ = 0;
  std::map<int64_t, int64_t> arenaLive_;
  /// The requested bytes of the buffers live in the arena.
  int64_t arenaLiveBytes_ = 0;
  AllocRefusal refusal_;
  TraceRecorder *recorder_ = nullptr;
};

} // namespace disc::runtime
#pragma GCC visibility pop

#endif // DISC_RUNTIME_LIB_CORE_TRACKEDALLOCATOR_H
