//===- GraphCache.cpp - CUDA graphs of a session, one per input shapes ----===//

#include "GraphCache.h"

#include "Device.h"

#include <algorithm>

namespace disc::runtime::cuda {

GraphCache::Mode GraphCache::plan(Device &device, const ShapeKey &key,
                                  const std::vector<int64_t> &inputBytes,
                                  GraphEntry **entry) {
  *entry = nullptr;
  if (capacity_ <= 0 || !device.supportsGraphs())
    return Mode::Plain;
  if (device_ != &device) {
    clear();
    device_ = &device;
    generation_ = device.addressGeneration();
  }
  // A constant or a slot moved: every graph points at the old address.
  if (int64_t g = device.addressGeneration(); g != generation_) {
    clear();
    generation_ = g;
  }
  auto it = std::find_if(entries_.begin(), entries_.end(),
                         [&](const auto &e) { return e->key == key; });
  if (it != entries_.end()) {
    entries_.splice(entries_.begin(), entries_, it);
    *entry = entries_.front().get();
    return Mode::Replay;
  }
  auto warm = warm_.find(key);
  if (warm == warm_.end() || uncapturable_.count(key))
    return Mode::Plain;
  auto fresh = std::make_unique<GraphEntry>();
  fresh->key = key;
  for (int64_t bytes : inputBytes) {
    bool outOfMemory = false;
    std::string why;
    void *p = device.allocate(bytes, &outOfMemory, &why);
    if (!p) {
      for (void *q : fresh->inputs)
        device.release(q);
      return Mode::Plain;
    }
    fresh->inputs.push_back(p);
  }
  fresh->stagingBytes = std::max(warm->second, device.stagingHint());
  fresh->staging = device.allocateHost(fresh->stagingBytes);
  if (!fresh->staging) {
    for (void *q : fresh->inputs)
      device.release(q);
    return Mode::Plain;
  }
  pending_.push_back(std::move(fresh));
  *entry = pending_.back().get();
  return Mode::Capture;
}

void GraphCache::ranPlainly(const ShapeKey &key, int64_t hostBytes) {
  if (capacity_ <= 0)
    return;
  if (warm_.size() >= kMaxKeys)
    warm_.clear();
  warm_[key] = hostBytes;
}

void GraphCache::notCapturable(const ShapeKey &key) {
  if (uncapturable_.size() >= kMaxKeys)
    uncapturable_.clear();
  uncapturable_.insert(key);
}

void GraphCache::insert(GraphEntry *entry) {
  auto it = std::find_if(pending_.begin(), pending_.end(),
                         [&](const auto &e) { return e.get() == entry; });
  if (it == pending_.end())
    return;
  entries_.splice(entries_.begin(), pending_, it);
  while (static_cast<int64_t>(entries_.size()) > capacity_) {
    destroy(*entries_.back());
    entries_.pop_back();
  }
}

void GraphCache::discard(GraphEntry *entry) {
  auto it = std::find_if(pending_.begin(), pending_.end(),
                         [&](const auto &e) { return e.get() == entry; });
  if (it == pending_.end())
    return;
  destroy(**it);
  pending_.erase(it);
}

void GraphCache::destroy(GraphEntry &entry) {
  if (!device_)
    return;
  device_->destroyGraph(entry.exec);
  entry.exec = nullptr;
  for (void *p : entry.inputs)
    device_->release(p);
  entry.inputs.clear();
  if (entry.staging) {
    // A launch in flight may still copy from it.
    std::string why;
    device_->synchronize(&why);
    device_->releaseHost(entry.staging);
  }
  entry.staging = nullptr;
}

void GraphCache::clear() {
  for (auto &e : entries_)
    destroy(*e);
  for (auto &e : pending_)
    destroy(*e);
  entries_.clear();
  pending_.clear();
}

} // namespace disc::runtime::cuda
