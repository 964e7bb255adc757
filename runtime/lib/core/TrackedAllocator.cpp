//===- TrackedAllocator.cpp - Live buffers, peak, limit, block cache ------===//

#include "TrackedAllocator.h"

#include "Device.h"
#include "TraceRecorder.h"

#include <algorithm>
#include <iterator>

namespace disc::runtime {

namespace {

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

void TrackedAllocator::addLive(void *p, int64_t bytes) {
  insertReusing(live_, spareLive_, p, bytes);
}

int64_t TrackedAllocator::blockSize(void *p, int64_t requested) const {
  auto it = blockBytes_.find(p);
  return it == blockBytes_.end() ? requested : it->second;
}

void TrackedAllocator::noteHeld(int64_t delta) {
  heldBytes_ += delta;
  reservedPeakBytes_ = std::max(reservedPeakBytes_, heldBytes_ + cachedBytes_);
}

bool TrackedAllocator::useBlockCache() const {
#if defined(__SANITIZE_ADDRESS__)
  return false; // Reused blocks would hide use-after-free from ASan.
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
  return false;
#endif
#endif
  return device_.reusesBlocks();
}

bool TrackedAllocator::overCacheBound(int64_t bytes) const {
  return cachedBytes_ + currentBytes_ + bytes > 2 * maxPeakBytes_ ||
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
  if (it == live_.end() || start < base || start + bytes > base + it->second)
    return false;
  currentBytes_ -= it->second;
  if (recorder_)
    recorder_->freed(block, currentBytes_);
  heldBytes_ -= blockSize(block, it->second);
  live_.erase(it);
  blockBytes_.erase(block); // The caller owns (and frees) it now.
  return true;
}

void TrackedAllocator::beginRun() {
  std::lock_guard<std::mutex> lock(mutex_);
  currentBytes_ = 0;
  peakBytes_ = 0;
  numAllocs_ = 0;
  reservedPeakBytes_ = heldBytes_ + cachedBytes_;
  refusal_ = AllocRefusal();
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
    releaseBuffer(entry.first);
  live_.clear();
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
  for (auto &entry : blockCache_) {
    blockBytes_.erase(entry.second);
    device_.release(entry.second);
  }
  blockCache_.clear();
  cachedBytes_ = 0;
}

} // namespace disc::runtime
