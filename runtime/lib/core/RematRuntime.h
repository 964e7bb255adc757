//===- RematRuntime.h - Rematerialization steps of a session's run -*- C++
//-*-===//
//
// The run-time side of rematerialization (docs/memory.md,
// "Rematerialization"; the context entries `remat_evict`,
// `remat_regenerate`, `remat_regenerated` of docs/runtime-abi.md). Before a
// run the session hands it the planner of the run's shapes (RematPlanner.h,
// null without candidates); at each evict point the planner decides
// whether the candidate goes:
//
//   - kept: its block stays live (the model's free of it is a no-op, see
//     TrackedAllocator::keepLocked) and is handed back, with its data, to
//     the model's next allocation after the regenerate point;
//   - evicted: the model frees it and recomputes it before its next use;
//     on a device that offloads (CUDA, SessionOptions::device_eviction) it
//     is first copied to host memory and copied back into a fresh device
//     buffer at the regenerate point instead.
//
// The counters (evictions, regenerations, bytes recomputed and offloaded,
// milliseconds) go to the session's SessionStats.
//
// Thread safety: the steps run on the model's thread; they take the
// allocator's mutex for what worker threads may touch.
//
// Internal to libdisc_runtime (hidden).
//
//===----------------------------------------------------------------------===//
#ifndef DISC_RUNTIME_LIB_CORE_REMATRUNTIME_H
#define DISC_RUNTIME_LIB_CORE_REMATRUNTIME_H

#include "disc/runtime/Session.h"

#include <chrono>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#pragma GCC visibility push(hidden)
namespace disc::runtime {

class Device;
class RematPlanner;
class RunErrors;
class TraceRecorder;
class TrackedAllocator;

class RematRuntime {
public:
  RematRuntime(TrackedAllocator &allocator, Device &device,
               const SessionOptions &options, SessionStats &stats,
               RunErrors &errors);
  RematRuntime(const RematRuntime &) = delete;
  RematRuntime &operator=(const RematRuntime &) = delete;

  /// Forgets the last run (its kept and offloaded buffers are dropped
  /// without freeing the kept ones, which the allocator frees) and starts
  /// one planned by `planner` (reset by the caller; null: nothing kept).
  void begin(RematPlanner *planner);

  /// Evict point of candidate `id`, whose buffer is `ptr`. Returns 0 (the
  /// model frees the buffer unless it is kept) or 4 when an offload copy
  /// failed (the error is reported). The planner decides at the first
  /// evict of a run; at a later one (after a nested regeneration brought
  /// the candidate back for a recompute that read it) the block is kept
  /// until its own regenerate point.
  int32_t evict(int32_t id, void *ptr);
  /// Regenerate point of candidate `id`: 1 when its buffer comes back to
  /// the model's next allocation (kept or offloaded), 0 when the model
  /// must recompute it, -3 when the allocator refused the buffer of an
  /// offloaded one (the run is to abort), -4 when copying it back failed
  /// (the error is reported).
  int32_t regenerate(int32_t id);
  /// Regenerate may be called several times per run for one candidate
  /// (nested regenerations, then its own).
  /// End of the recompute of candidate `id`: its time goes to the stats
  /// (a nested recompute's counts within its reader's).
  void regenerated(int32_t id);

  /// Whether a buffer is waiting for the model's next allocation.
  bool hasHandback() const { return handback_ != nullptr; }
  /// That buffer, for an allocation of `bytes` bytes; null, with an error
  /// reported, when the sizes differ.
  void *takeHandback(int64_t bytes);

  /// Drops the kept buffers (the allocator frees them as live) and frees
  /// the offloaded host copies.
  void releaseAll();
  /// Reports evictions, offloads and regenerations to `recorder` (null:
  /// none).
  void setRecorder(TraceRecorder *recorder) { recorder_ = recorder; }

private:
  /// Whether evicted candidate `id` is offloaded rather than recomputed.
  bool shouldOffload(int32_t id) const;
  void releaseOffloaded();

  TrackedAllocator &allocator_;
  Device &device_;
  const SessionOptions &options_;
  SessionStats &stats_;
  RunErrors &errors_;
  RematPlanner *planner_ = nullptr;
  TraceRecorder *recorder_ = nullptr;
  /// For the recorder: candidate `id`'s evict_after / regenerate_before
  /// (-1 without a plan).
  int64_t pointOf(int32_t id, bool regenerate) const;
  /// The blocks kept at evict points, by candidate id: pointer and bytes.
  std::unordered_map<int32_t, std::pair<void *, int64_t>> retained_;
  /// Host copies of the offloaded candidates, by id: pointer and bytes.
  std::unordered_map<int32_t, std::pair<void *, int64_t>> offloaded_;
  /// The candidates whose evict point has been reached in this run.
  std::unordered_set<int32_t> decided_;
  void *handback_ = nullptr;
  int64_t handbackBytes_ = 0;
  /// Start of each recompute in progress (nested ones run inside their
  /// reader's), by candidate id.
  std::unordered_map<int32_t, std::chrono::steady_clock::time_point>
      recomputeStart_;
};

} // namespace disc::runtime
#pragma GCC visibility pop

#endif // DISC_RUNTIME_LIB_CORE_REMATRUNTIME_H
