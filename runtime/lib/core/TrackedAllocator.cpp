//===- TrackedAllocator.cpp - Live buffers, peak, limit, block cache ------===//

#include "TrackedAllocator.h"

#include "Device.h"
#include "TraceRecorder.h"

#include <algorithm>
#include <iterator>

#if defined(__SANITIZE_ADDRESS__)
#define DISC_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define DISC_ASAN 1
#endif
#endif
#ifdef DISC_ASAN
#include <sanitizer/asan_interface.h>
#endif

namespace disc::runtime {

namespace {

/// Under AddressSanitizer a plan gives every buffer its own range,
/// followed by a poisoned redzone of this many bytes, so that a read after
/// free or past the end of a planned buffer is still reported (as the block
/// cache is off there for the same reason); 0 otherwise.
#ifdef DISC_ASAN
constexpr int64_t kPlanRedzone = 64;
#else
constexpr int64_t kPlanRedzone = 0;
#endif
/// A plan that missed the run's sizes this many times is not made again.
constexpr int kMaxPlanMisses = 3;
/// Runs of more allocations are not planned (the packing is quadratic).
constexpr size_t kMaxPlannedBuffers = 8192;

/// Marks [p, p + bytes) of the arena unusable (`poison`) or usable for
/// AddressSanitizer, so that a planned buffer read after its free is
/// reported as the reused blocks of the cache would hide it; no-op in other
/// builds.
void poisonArena(const char *p, int64_t bytes, bool poison) {
#ifdef DISC_ASAN
  if (poison)
    ASAN_POISON_MEMORY_REGION(p, static_cast<size_t>(bytes));
  else
    ASAN_UNPOISON_MEMORY_REGION(p, static_cast<size_t>(bytes));
#else
  (void)p, (void)bytes, (void)poison;
#endif
}

bool isPowerOfTwo(int64_t x) { return x > 0 && (x & (x - 1)) == 0; }

/// Alignment of every host block, so any cached block serves any request
/// up to it.
constexpr int64_t kCacheAlign = 64;

/// Inserts (key, value) into `map`, in a node of `spare` when one is left.
template <typename Map, typename K, typename V>
void insertReusing(Map &map, std::vector<typename Map::node_type> &spare, K key,
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

} // namespace

TrackedAllocator::TrackedAllocator(Device &device, int64_t limitBytes)
    : device_(device), limit_(limitBytes) {}

TrackedAllocator::~TrackedAllocator() {
  releaseBlockCache();
  std::lock_guard<std::mutex> lock(mutex_);
  arenaLive_.clear();
  arenaLiveBytes_ = 0;
  freeArena();
}

void TrackedAllocator::addLive(void *p, int64_t bytes) {
  insertReusing(live_, spareLive_, p, bytes);
}

int64_t TrackedAllocator::blockSize(void *p, int64_t requested) const {
  auto it = blockBytes_.find(p);
  return it == blockBytes_.end() ? requested : it->second;
}

void TrackedAllocator::noteHeld(int64_t delta) {
  heldBytes_ += delta;
  reservedPeakBytes_ =
      std::max(reservedPeakBytes_, heldBytes_ + cachedBytes_ + arenaBytes_);
}

bool TrackedAllocator::useBlockCache() const {
#ifdef DISC_ASAN
  return false; // Reused blocks would hide use-after-free from ASan.
#else
  return device_.reusesBlocks();
#endif
}

bool TrackedAllocator::overCacheBound(int64_t bytes) const {
  // The arena counts whole, for the buffers live in it.
  return cachedBytes_ + (currentBytes_ - arenaLiveBytes_) + arenaBytes_ +
                 bytes >
             2 * maxPeakBytes_ ||
         (limit_ > 0 && cachedBytes_ + heldBytes_ + bytes > limit_);
}

void *TrackedAllocator::takeCachedBlock(int64_t bytes) {
  auto it = blockCache_.lower_bound(bytes);
  // Under a limit only a block of the requested size: what the session
  // holds is then what is live plus the cache, both under the limit.
  int64_t largest = limit_ > 0 ? bytes : 2 * std::max<int64_t>(bytes, 64);
  if (it == blockCache_.end() || it->first > largest)
    return nullptr;
  void *p = it->second;
  cachedBytes_ -= it->first;
  spareCached_.push_back(blockCache_.extract(it));
  return p;
}

void TrackedAllocator::trimBlockCache(int64_t bytes) {
  while (!blockCache_.empty() && overCacheBound(bytes)) {
    auto it = std::prev(blockCache_.end());
    cachedBytes_ -= it->first;
    blockBytes_.erase(it->second);
    device_.release(it->second);
    blockCache_.erase(it);
  }
}

void TrackedAllocator::releaseBuffer(void *ptr) {
  blockBytes_.erase(ptr);
  device_.release(ptr);
}

void *TrackedAllocator::allocate(int64_t bytes, int64_t alignment,
                                 bool *refused) {
  *refused = false;
  if (bytes < 0)
    return nullptr;
  int64_t align = alignment < 16 ? 16 : alignment;
  if (!isPowerOfTwo(align))
    return nullptr;
  bool overLimit = false;
  bool outOfMemory = false;
  std::string error;
  void *p = nullptr;
  std::lock_guard<std::mutex> lock(mutex_);
  // The block cache is empty where blocks are not reused, so a device
  // allocation goes straight to the device.
  if (limit_ > 0 && bytes > limit_ - currentBytes_) {
    overLimit = true;
  } else if ((p = takePlannedBlock(bytes, align))) {
    // In the arena, held already.
  } else if (align <= kCacheAlign && (p = takeCachedBlock(bytes))) {
    noteHeld(blockSize(p, bytes));
  } else if ((trimBlockCache(bytes),
              p = device_.allocate(bytes, align, &error)) == nullptr) {
    outOfMemory = true;
  } else {
    if (useBlockCache())
      blockBytes_[p] = bytes;
    noteHeld(bytes);
  }
  if (p) {
    if (planMode_ == PlanMode::Record)
      recordAllocation(p, bytes, align);
    addLive(p, bytes);
    currentBytes_ += bytes;
    if (currentBytes_ > peakBytes_)
      peakBytes_ = currentBytes_;
    ++numAllocs_;
    if (recorder_)
      recorder_->allocated(p, bytes, currentBytes_);
  }
  maxPeakBytes_ = std::max(maxPeakBytes_, peakBytes_);
  if (overLimit || outOfMemory) {
    refusal_.requestedBytes = bytes;
    refusal_.liveBytes = currentBytes_;
    refusal_.limitBytes = limit_;
    refusal_.outOfMemory = outOfMemory;
    refusal_.error = error;
    *refused = true;
  }
  return p;
}

void TrackedAllocator::free(void *ptr) {
  if (!ptr)
    return;
  std::lock_guard<std::mutex> lock(mutex_);
  if (kept_.count(ptr))
    return; // Kept at an evict point: lives on until its regenerate point.
  auto it = live_.find(ptr);
  if (it == live_.end())
    return; // Not ours (or already freed): ignore rather than crash.
  int64_t bytes = it->second;
  currentBytes_ -= bytes;
  if (recorder_)
    recorder_->freed(ptr, currentBytes_);
  spareLive_.push_back(live_.extract(it));
  if (planMode_ == PlanMode::Record) {
    auto rec = recordedLive_.find(ptr);
    if (rec != recordedLive_.end()) {
      recorded_[rec->second].freedAt = events_++;
      recordedLive_.erase(rec);
    }
  }
  if (inArena(ptr)) {
    auto range = arenaLive_.find(static_cast<char *>(ptr) - arena_);
    if (range != arenaLive_.end()) {
      arenaLiveBytes_ -= bytes;
      poisonArena(arena_ + range->first, range->second - range->first, true);
      arenaLive_.erase(range);
    }
    return;
  }
  auto block = blockBytes_.find(ptr);
  int64_t size = block == blockBytes_.end() ? bytes : block->second;
  heldBytes_ -= size;
  if (useBlockCache() && block != blockBytes_.end() && !overCacheBound(size)) {
    insertReusing(blockCache_, spareCached_, size, ptr);
    cachedBytes_ += size;
    return;
  }
  releaseBuffer(ptr);
}

int64_t TrackedAllocator::liveBytesLocked(void *ptr) const {
  auto it = live_.find(ptr);
  return it == live_.end() ? -1 : it->second;
}

void TrackedAllocator::clearKept() {
  std::lock_guard<std::mutex> lock(mutex_);
  kept_.clear();
}

bool TrackedAllocator::handOver(void *block, const char *start, int64_t bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = live_.find(block);
  const char *base = static_cast<const char *>(block);
  if (it == live_.end() || start < base || start + bytes > base + it->second ||
      inArena(block))
    return false;
  if (planMode_ == PlanMode::Record) {
    auto rec = recordedLive_.find(block);
    if (rec != recordedLive_.end()) {
      recorded_[rec->second].excluded = true;
      recordedLive_.erase(rec);
    }
  }
  currentBytes_ -= it->second;
  if (recorder_)
    recorder_->freed(block, currentBytes_);
  heldBytes_ -= blockSize(block, it->second);
  live_.erase(it);
  blockBytes_.erase(block); // The caller owns (and frees) it now.
  return true;
}

void TrackedAllocator::beginRun(uint64_t shapeKey) {
  std::lock_guard<std::mutex> lock(mutex_);
  currentBytes_ = 0;
  peakBytes_ = 0;
  numAllocs_ = 0;
  reservedPeakBytes_ = heldBytes_ + cachedBytes_ + arenaBytes_;
  refusal_ = AllocRefusal();
  planMode_ = PlanMode::Off;
  plan_ = nullptr;
  nextSlot_ = 0;
  runKey_ = shapeKey;
  recorded_.clear();
  recordedLive_.clear();
  events_ = 0;
  // Under AddressSanitizer too: the arena's free ranges are poisoned.
  if (shapeKey == 0 || limit_ > 0 || !device_.reusesBlocks())
    return;
  auto it = plans_.find(shapeKey);
  if (it == plans_.end()) {
    planMode_ = PlanMode::Record;
    return;
  }
  if (it->second.missed >= kMaxPlanMisses)
    return;
  if (it->second.stale) {
    // Missed once: recorded again (worker threads may have reordered the
    // allocations of that run).
    planMode_ = PlanMode::Record;
    return;
  }
  if (it->second.arenaBytes > arenaBytes_)
    return;
  plan_ = &it->second;
  plan_->lastUse = ++planUses_;
  planMode_ = PlanMode::Replay;
}

void TrackedAllocator::endRun(bool completed) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (planMode_ == PlanMode::Record && completed && !recorded_.empty())
    makePlan();
  planMode_ = PlanMode::Off;
  plan_ = nullptr;
  recorded_.clear();
  recordedLive_.clear();
}

void *TrackedAllocator::takePlannedBlock(int64_t bytes, int64_t align) {
  if (planMode_ != PlanMode::Replay)
    return nullptr;
  size_t i = nextSlot_++;
  if (i >= plan_->bytes.size() || plan_->bytes[i] != bytes) {
    // Not the recorded sequence: the rest of the run goes without it.
    ++plan_->missed;
    plan_->stale = true;
    planMode_ = PlanMode::Off;
    return nullptr;
  }
  int64_t offset = plan_->offsets[i];
  if (offset < 0 || align > kCacheAlign)
    return nullptr;
  int64_t end = offset + std::max<int64_t>(bytes, 1);
  // The planned range must be free now (a buffer freed later than in the
  // recorded run, with worker threads, still holds it).
  auto next = arenaLive_.lower_bound(offset);
  if (next != arenaLive_.end() && next->first < end)
    return nullptr;
  if (next != arenaLive_.begin() && std::prev(next)->second > offset)
    return nullptr;
  arenaLive_.emplace_hint(next, offset, end);
  arenaLiveBytes_ += bytes;
  poisonArena(arena_ + offset, end - offset, false);
  return arena_ + offset;
}

void TrackedAllocator::recordAllocation(void *p, int64_t bytes, int64_t align) {
  recordedLive_[p] = recorded_.size();
  recorded_.push_back({bytes, events_++, -1, align > kCacheAlign});
}

bool TrackedAllocator::makePlan() {
  // Greedy by size (Pisarchyk and Lee 2020, section 4.3): the buffers in
  // decreasing size, each at the smallest gap between the buffers placed
  // so far whose lifetimes overlap its own, else after the last of them.
  BufferPlan plan;
  size_t n = recorded_.size();
  plan.bytes.resize(n);
  plan.offsets.assign(n, -1);
  std::vector<size_t> order;
  for (size_t i = 0; i < n; ++i) {
    plan.bytes[i] = recorded_[i].bytes;
    if (!recorded_[i].excluded && recorded_[i].freedAt >= 0)
      order.push_back(i);
  }
  // No plan possible at these shapes: later runs do not record again.
  auto giveUp = [&] {
    BufferPlan &slot = planSlot(runKey_);
    slot.missed = kMaxPlanMisses;
    slot.lastUse = ++planUses_;
    return false;
  };
  if (order.empty() || order.size() > kMaxPlannedBuffers)
    return giveUp();
  auto rounded = [](int64_t b) {
    return (std::max<int64_t>(b, 1) + kCacheAlign - 1) / kCacheAlign *
               kCacheAlign +
           kPlanRedzone;
  };
  // Largest first, ties in allocation order.
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return recorded_[a].bytes != recorded_[b].bytes
               ? recorded_[a].bytes > recorded_[b].bytes
               : a < b;
  });
  std::vector<size_t> placed;
  std::vector<std::pair<int64_t, int64_t>> overlapping;
  for (size_t i : order) {
    const Recorded &r = recorded_[i];
    int64_t size = rounded(r.bytes);
    overlapping.clear();
    for (size_t j : placed) {
      const Recorded &q = recorded_[j];
      if (kPlanRedzone > 0 ||
          (q.allocatedAt < r.freedAt && r.allocatedAt < q.freedAt))
        overlapping.push_back(
            {plan.offsets[j], plan.offsets[j] + rounded(q.bytes)});
    }
    std::sort(overlapping.begin(), overlapping.end());
    int64_t best = -1, bestGap = 0, end = 0;
    for (auto [begin, stop] : overlapping) {
      int64_t gap = begin - end;
      if (gap >= size && (best < 0 || gap < bestGap)) {
        best = end;
        bestGap = gap;
      }
      end = std::max(end, stop);
    }
    plan.offsets[i] = best >= 0 ? best : end;
    plan.arenaBytes = std::max(plan.arenaBytes, plan.offsets[i] + size);
    placed.push_back(i);
  }
  if (plan.arenaBytes > arenaBytes_) {
    // A larger arena; the plans' offsets stay valid in it.
    if (!arenaLive_.empty())
      return false;
    freeArena();
    // The run's freed blocks go back first: the arena takes their place.
    releaseBlockCacheLocked();
    arena_ = static_cast<char *>(device_.allocateArena(plan.arenaBytes));
    if (!arena_) {
      plans_.clear();
      return false;
    }
    arenaBytes_ = plan.arenaBytes;
    poisonArena(arena_, arenaBytes_, true);
  }
  BufferPlan &slot = planSlot(runKey_);
  plan.lastUse = ++planUses_;
  plan.missed = slot.missed;
  slot = std::move(plan);
  return true;
}

TrackedAllocator::BufferPlan &TrackedAllocator::planSlot(uint64_t key) {
  if (auto it = plans_.find(key); it != plans_.end())
    return it->second;
  if (plans_.size() >= kMaxPlans) {
    auto oldest = plans_.begin();
    for (auto it = plans_.begin(); it != plans_.end(); ++it)
      if (it->second.lastUse < oldest->second.lastUse)
        oldest = it;
    plans_.erase(oldest);
  }
  return plans_[key];
}

int64_t TrackedAllocator::numBufferPlans() {
  std::lock_guard<std::mutex> lock(mutex_);
  return static_cast<int64_t>(plans_.size());
}

bool TrackedAllocator::replaysPlan(uint64_t shapeKey) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = plans_.find(shapeKey);
  return shapeKey != 0 && limit_ <= 0 && device_.reusesBlocks() &&
         it != plans_.end() && !it->second.stale &&
         it->second.missed < kMaxPlanMisses &&
         it->second.arenaBytes <= arenaBytes_;
}

int64_t TrackedAllocator::arenaBytes() {
  std::lock_guard<std::mutex> lock(mutex_);
  return arenaBytes_;
}

void TrackedAllocator::releasePlans() {
  std::lock_guard<std::mutex> lock(mutex_);
  plans_.clear();
  plan_ = nullptr;
  planMode_ = PlanMode::Off;
  if (arenaLive_.empty())
    freeArena();
}

void TrackedAllocator::freeArena() {
  if (!arena_)
    return;
  poisonArena(arena_, arenaBytes_, false);
  device_.releaseArena(arena_);
  arena_ = nullptr;
  arenaBytes_ = 0;
}

AllocCounters TrackedAllocator::counters() {
  std::lock_guard<std::mutex> lock(mutex_);
  AllocCounters c;
  c.peakBytes = peakBytes_;
  c.reservedPeakBytes = reservedPeakBytes_;
  c.currentBytes = currentBytes_;
  c.numAllocs = numAllocs_;
  return c;
}

void TrackedAllocator::releaseLive() {
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto &entry : live_)
    if (!inArena(entry.first))
      releaseBuffer(entry.first);
  live_.clear();
  if (arena_)
    poisonArena(arena_, arenaBytes_, true);
  arenaLive_.clear();
  arenaLiveBytes_ = 0;
  heldBytes_ = 0;
}

void TrackedAllocator::releaseAll() {
  releaseLive();
  std::lock_guard<std::mutex> lock(mutex_);
  kept_.clear();
  currentBytes_ = 0;
}

void TrackedAllocator::abandonAll() {
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto &entry : live_)
    blockBytes_.erase(entry.first);
  live_.clear();
  if (arena_)
    poisonArena(arena_, arenaBytes_, true);
  arenaLive_.clear();
  arenaLiveBytes_ = 0;
  kept_.clear();
  heldBytes_ = 0;
  currentBytes_ = 0;
}

void TrackedAllocator::setRecorder(TraceRecorder *recorder) {
  std::lock_guard<std::mutex> lock(mutex_);
  recorder_ = recorder;
}

void TrackedAllocator::releaseBlockCache() {
  std::lock_guard<std::mutex> lock(mutex_);
  releaseBlockCacheLocked();
}

void TrackedAllocator::releaseBlockCacheLocked() {
  for (auto &entry : blockCache_) {
    blockBytes_.erase(entry.second);
    device_.release(entry.second);
  }
  blockCache_.clear();
  cachedBytes_ = 0;
}

} // namespace disc::runtime
