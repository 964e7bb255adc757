//===- GraphCache.h - CUDA graphs of a session, one per input shapes ------===//
//
// Graph replay (docs/cuda.md, "Graph replay"): a CUDA session captures the
// stream work of a run into a CUDA graph once per distinct input shapes and
// replays it with one cuGraphLaunch afterwards, as PyTorch's CUDA graph
// trees record one graph per distinct size. This file holds the bounded
// cache of those graphs and the decision of what a run at given shapes does;
// Session.cpp runs the capture and the replay.
//
// A run at shapes the session has not run before is plain: it loads the
// modules, uploads the constants and sizes the small-buffer slots that the
// shapes need, so that the capture of the next run at the same shapes meets
// no first-time setup (a synchronous allocation would invalidate it). A
// graph keeps the addresses it captured: its input buffers (owned here; a
// replay copies the inputs into them outside the graph), the buffers
// allocated during the run (graph memory nodes, from cuMemAllocAsync and
// cuMemFreeAsync on the capturing stream), the constants and slots of the
// device (a move of one drops every graph, Device::addressGeneration).
//
// Internal to libdisc_runtime (hidden).
//
//===----------------------------------------------------------------------===//
#ifndef DISC_RUNTIME_LIB_CUDA_GRAPHCACHE_H
#define DISC_RUNTIME_LIB_CUDA_GRAPHCACHE_H

#include "Driver.h"

#include <cstdint>
#include <list>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#pragma GCC visibility push(hidden)
namespace disc::runtime::cuda {

class Device;

/// The key of a graph: every input's sizes, in signature order (the dtypes
/// are fixed by the model).
using ShapeKey = std::vector<std::vector<int64_t>>;

/// One captured run.
struct GraphEntry {
  ShapeKey key;
  CUgraphExec exec = nullptr;
  /// Device buffers of the inputs, in order (at least one byte each).
  std::vector<void *> inputs;
  /// Page-locked host memory of the values the host code copied to the
  /// device during the capture (Device::beginCapture), and its bytes.
  void *staging = nullptr;
  int64_t stagingBytes = 0;
  /// The output descriptors as the captured run filled them (addresses of
  /// graph allocations, which keep their addresses across launches).
  std::vector<std::vector<int64_t>> outputs;
  /// Graph allocations still live after a launch (the outputs and what the
  /// model leaked): freed with cuMemFreeAsync once the outputs are copied.
  std::vector<void *> liveAtEnd;
  /// The end-of-run read of the run-time check words was deferred during
  /// the capture: it follows every launch.
  bool checkAtEnd = false;
  /// Allocation statistics of the captured run (SessionStats).
  int64_t peakBytes = 0;
  int64_t reservedPeakBytes = 0;
  int64_t numAllocs = 0;
  int64_t leakedAllocs = 0;
};

class GraphCache {
public:
  /// What a run does.
  enum class Mode {
    Plain,   // launches as usual
    Capture, // captured into a new graph, then one graph launch
    Replay,  // one launch of a graph captured by an earlier run
  };

  /// At most `capacity` graphs (0: none).
  explicit GraphCache(int64_t capacity) : capacity_(capacity) {}
  ~GraphCache() { clear(); }
  GraphCache(const GraphCache &) = delete;
  GraphCache &operator=(const GraphCache &) = delete;

  /// What the run at `key` on `device` does. Replay: `*entry` is the
  /// cached graph (now the most recently used). Capture: `*entry` is a new
  /// entry, not cached yet, whose input buffers of `inputBytes[k]` bytes
  /// are allocated; give it to `insert` or `discard`. Plain: the key is new
  /// (`ranPlainly` after a successful run makes the next run a capture),
  /// not capturable, the device has no graph functions, or the input
  /// buffers could not be allocated.
  Mode plan(Device &device, const ShapeKey &key,
            const std::vector<int64_t> &inputBytes, GraphEntry **entry);
  /// A plain run at `key` succeeded, copying `hostBytes` bytes from the
  /// host to the device while the model ran (Device::hostCopyBytes): the
  /// next one is captured, with that much staging.
  void ranPlainly(const ShapeKey &key, int64_t hostBytes);
  /// The capture of a run at `key` was invalidated (the run reads device
  /// data on the host, or makes another call a capture does not permit):
  /// runs at `key` stay plain.
  void notCapturable(const ShapeKey &key);
  /// Caches a captured entry from `plan` as the most recently used graph,
  /// destroying the least recently used one beyond the capacity.
  void insert(GraphEntry *entry);
  /// Frees an entry from `plan` that did not capture.
  void discard(GraphEntry *entry);
  /// Destroys every graph and frees its input buffers.
  void clear();
  /// Number of cached graphs.
  int64_t size() const { return static_cast<int64_t>(entries_.size()); }

private:
  void destroy(GraphEntry &entry);

  int64_t capacity_;
  Device *device_ = nullptr;
  int64_t generation_ = 0;
  /// Most recently used first.
  std::list<std::unique_ptr<GraphEntry>> entries_;
  /// Entries from `plan` not yet inserted or discarded.
  std::list<std::unique_ptr<GraphEntry>> pending_;
  /// Keys that ran plainly once, and keys whose capture was invalidated
  /// (both forgotten beyond kMaxKeys keys).
  std::map<ShapeKey, int64_t> warm_; // -> host bytes of the plain run
  std::set<ShapeKey> uncapturable_;
  static constexpr size_t kMaxKeys = 4096;
};

} // namespace disc::runtime::cuda
#pragma GCC visibility pop

#endif // DISC_RUNTIME_LIB_CUDA_GRAPHCACHE_H
