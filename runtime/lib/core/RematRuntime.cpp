//===- RematRuntime.cpp - Evict, offload and regenerate candidates --------===//

#include "RematRuntime.h"

#include "Device.h"
#include "RematPlanner.h"
#include "RunErrors.h"
#include "TraceRecorder.h"
#include "TrackedAllocator.h"

namespace disc::runtime {

namespace {

/// Milliseconds since `start`.
double msSince(std::chrono::steady_clock::time_point start) {
  std::chrono::duration<double, std::milli> ms =
      std::chrono::steady_clock::now() - start;
  return ms.count();
}

} // namespace

RematRuntime::RematRuntime(TrackedAllocator &allocator, Device &device,
                           const SessionOptions &options, SessionStats &stats,
                           RunErrors &errors)
    : allocator_(allocator), device_(device), options_(options), stats_(stats),
      errors_(errors) {}

void RematRuntime::begin(RematPlanner *planner) {
  planner_ = nullptr;
  releaseOffloaded();
  retained_.clear();
  decided_.clear();
  recomputeStart_.clear();
  allocator_.clearKept();
  handback_ = nullptr;
  planner_ = planner;
}

int32_t RematRuntime::evict(int32_t id, void *ptr) {
  if (!planner_)
    return 0; // No plan: keep nothing; the model frees the block.
  std::lock_guard<std::mutex> lock(allocator_.mutex());
  int64_t bytes = allocator_.liveBytesLocked(ptr);
  // A candidate regenerated for a recompute that reads it (nested
  // regeneration) comes back here after that recompute: kept until its
  // own regenerate point, or given up again, as planned.
  if (!decided_.insert(id).second) {
    if (bytes >= 0 && !planner_->givesBackAfterNested(id)) {
      retained_[id] = {ptr, bytes};
      allocator_.keepLocked(ptr);
    }
    return 0;
  }
  bool evict = planner_->decideEvict(id, allocator_.currentBytesLocked());
  if (!evict && bytes >= 0) {
    retained_[id] = {ptr, bytes};
    allocator_.keepLocked(ptr);
    return 0;
  }
  ++stats_.remat_evictions;
  if (recorder_)
    recorder_->instant("evict", id, bytes, pointOf(id, false));
  if (bytes < 0 || !device_.offloads() || !shouldOffload(id))
    return 0;
  // Offload: copy the buffer to host memory before the model frees it.
  auto start = std::chrono::steady_clock::now();
  void *host = device_.allocateStaging(bytes);
  if (!host)
    return 0; // Out of host memory: recompute instead.
  std::string why;
  if (device_.copyAndWait(host, ptr, bytes, &why) != 0) {
    device_.releaseStaging(host);
    errors_.replaceLocked("offload of rematerialization candidate " +
                          std::to_string(id) + ": " + why);
    return 4;
  }
  offloaded_[id] = {host, bytes};
  if (recorder_)
    recorder_->instant("offload", id, bytes, pointOf(id, false));
  ++stats_.remat_offloads;
  stats_.remat_bytes_offloaded += bytes;
  stats_.remat_offload_ms += msSince(start);
  return 0;
}

int32_t RematRuntime::regenerate(int32_t id) {
  std::pair<void *, int64_t> host{nullptr, 0};
  {
    std::lock_guard<std::mutex> lock(allocator_.mutex());
    // Kept (at its evict point, or after a nested regeneration brought it
    // back): the same block goes to the model's next allocation.
    auto kept = retained_.find(id);
    if (kept != retained_.end()) {
      handback_ = kept->second.first;
      handbackBytes_ = kept->second.second;
      allocator_.unkeepLocked(kept->second.first);
      retained_.erase(kept);
      return 1;
    }
    auto it = offloaded_.find(id);
    if (it != offloaded_.end()) {
      host = it->second;
      offloaded_.erase(it);
    }
  }
  if (host.first) {
    // Offloaded: a fresh device buffer (tracked like the model's own
    // allocation at this point), filled from the host copy and handed to
    // the model's next alloc, as for a kept candidate.
    auto start = std::chrono::steady_clock::now();
    bool refused = false;
    void *p = allocator_.allocate(host.second, 64, &refused);
    if (refused || !p) {
      device_.releaseStaging(host.first);
      return -3;
    }
    std::string why;
    if (device_.copyAndWait(p, host.first, host.second, &why) != 0) {
      device_.releaseStaging(host.first);
      errors_.report(4, ("offload of rematerialization candidate " +
                         std::to_string(id) + ": " + why)
                            .c_str());
      return -4;
    }
    device_.releaseStaging(host.first);
    std::lock_guard<std::mutex> lock(allocator_.mutex());
    handback_ = p;
    handbackBytes_ = host.second;
    stats_.remat_offload_ms += msSince(start);
    if (recorder_)
      recorder_->instant("regenerate", id, host.second, pointOf(id, true));
    return 1;
  }
  {
    std::lock_guard<std::mutex> lock(allocator_.mutex());
    ++stats_.remat_regenerations;
    if (planner_ && id >= 0 &&
        id < static_cast<int32_t>(planner_->profile().candidates.size()))
      stats_.remat_bytes_recomputed += planner_->profile().candidates[id].bytes;
  }
  if (recorder_)
    recorder_->instant(
        "regenerate", id,
        planner_ && id >= 0 &&
                id < static_cast<int32_t>(planner_->profile().candidates.size())
            ? planner_->profile().candidates[id].bytes
            : -1,
        pointOf(id, true));
  recomputeStart_[id] = std::chrono::steady_clock::now();
  return 0;
}

void RematRuntime::regenerated(int32_t id) {
  // A nested recompute's time is inside its reader's: count the outermost.
  auto it = recomputeStart_.find(id);
  if (it == recomputeStart_.end())
    return;
  double ms = msSince(it->second);
  recomputeStart_.erase(it);
  if (recomputeStart_.empty())
    stats_.remat_recompute_ms += ms;
}

void *RematRuntime::takeHandback(int64_t bytes) {
  // The regenerated buffer of a kept candidate: the same block, still
  // counted as live, with its data.
  void *p = handback_;
  handback_ = nullptr;
  if (bytes == handbackBytes_)
    return p;
  errors_.report(4, ("rematerialization: regenerated buffer of " +
                     std::to_string(bytes) + " bytes, kept block has " +
                     std::to_string(handbackBytes_))
                        .c_str());
  return nullptr;
}

void RematRuntime::releaseAll() {
  {
    std::lock_guard<std::mutex> lock(allocator_.mutex());
    retained_.clear();
    handback_ = nullptr;
  }
  releaseOffloaded();
}

void RematRuntime::releaseOffloaded() {
  std::lock_guard<std::mutex> lock(allocator_.mutex());
  for (auto &entry : offloaded_)
    device_.releaseStaging(entry.second.first);
  offloaded_.clear();
}

int64_t RematRuntime::pointOf(int32_t id, bool regenerate) const {
  if (!planner_ || id < 0 ||
      id >= static_cast<int32_t>(planner_->profile().candidates.size()))
    return -1;
  const auto &c = planner_->profile().candidates[id];
  return regenerate ? c.regenerateBefore : c.evictAfter;
}

bool RematRuntime::shouldOffload(int32_t id) const {
  switch (options_.device_eviction) {
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
  const auto &candidates = planner_->profile().candidates;
  if (id < 0 || id >= static_cast<int32_t>(candidates.size()))
    return false;
  const auto &c = candidates[id];
  return c.flops / 1e12 > 2.0 * static_cast<double>(c.bytes) / 2.5e10;
}

} // namespace disc::runtime
