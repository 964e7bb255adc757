//===- BufferPlanTest.cpp - buffer plans of the tracked allocator ---------===//
//
// The allocator's buffer plans (core/TrackedAllocator.h) on scripted
// allocation sequences, over a device that counts its allocations: the
// second run at some shapes allocates nothing from the device, buffers
// whose lifetimes overlap get disjoint ranges, and a run that leaves the
// recorded sequence falls back to device blocks with every buffer still
// disjoint from the others.
//
//===----------------------------------------------------------------------===//

#include "core/Device.h"
#include "core/TrackedAllocator.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <stdexcept>
#include <vector>

using disc::runtime::Device;
using disc::runtime::TrackedAllocator;

namespace {

/// Under AddressSanitizer a plan gives every buffer its own range and a
/// 64-byte redzone (TrackedAllocator.h), so the arena sizes differ.
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kAsan = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kAsan = true;
#else
constexpr bool kAsan = false;
#endif
#else
constexpr bool kAsan = false;
#endif

/// Host memory from malloc, counting the device allocations and arenas.
class CountingDevice final : public Device {
public:
  disc::Status open() override { return disc::Status::ok(); }
  void *allocate(int64_t bytes, int64_t, std::string *) override {
    ++allocations;
    return std::aligned_alloc(64, (std::max<int64_t>(bytes, 1) + 63) / 64 * 64);
  }
  void release(void *p) override { std::free(p); }
  bool reusesBlocks() const override { return true; }
  void *allocateArena(int64_t bytes) override {
    ++arenas;
    lastArenaBytes = bytes;
    return arenasRefused ? nullptr
                         : std::aligned_alloc(64, (bytes + 63) / 64 * 64);
  }
  void releaseArena(void *p) override { std::free(p); }
  std::string outOfMemoryMessage(int64_t, int64_t,
                                 const std::string &) const override {
    return "out of memory";
  }
  disc::Status stageInput(const disc::Tensor &, const std::string &,
                          void **) override {
    return disc::Status::ok();
  }
  void releaseInputs() override {}
  disc::Status fetchOutput(const disc::TensorSpec &, const std::string &,
                           const disc::runtime::OutputView &,
                           TrackedAllocator &, disc::Tensor *) override {
    return disc::Status::ok();
  }
  disc::runtime::LibraryModule &libraryModule() override {
    throw std::logic_error("no library calls in this test");
  }

  int allocations = 0;
  int arenas = 0;
  int64_t lastArenaBytes = 0;
  bool arenasRefused = false;
};

/// One step of a scripted run: allocate buffer `id` of `bytes`, or free it
/// (bytes < 0).
struct Step {
  int id;
  int64_t bytes;
};

/// Runs `steps` as one run at `key`; returns each buffer's address and
/// checks that no two live buffers overlap (and fills them, so that a
/// sanitizer build sees a write out of a block).
std::map<int, char *> runScript(TrackedAllocator &a,
                                const std::vector<Step> &steps, uint64_t key) {
  a.beginRun(key);
  std::map<int, char *> where;
  std::map<int, std::pair<char *, int64_t>> live;
  for (const Step &s : steps) {
    if (s.bytes < 0) {
      a.free(live.at(s.id).first);
      live.erase(s.id);
      continue;
    }
    bool refused = false;
    char *p = static_cast<char *>(a.allocate(s.bytes, 64, &refused));
    EXPECT_NE(p, nullptr);
    for (auto &[id, block] : live)
      EXPECT_TRUE(p + s.bytes <= block.first || block.first + block.second <= p)
          << "buffer " << s.id << " overlaps live buffer " << id;
    std::memset(p, s.id, static_cast<size_t>(s.bytes));
    live[s.id] = {p, s.bytes};
    where[s.id] = p;
  }
  for (auto &[id, block] : live)
    a.free(block.first);
  a.endRun(true);
  return where;
}

/// A chain of five buffers, each read by the next (peak: two of them), and
/// one that lives through the run.
std::vector<Step> chain() {
  return {{0, 4000}, {1, 1000}, {2, 3000}, {1, -1}, {3, 2000}, {2, -1},
          {4, 1000}, {3, -1},   {5, 500},  {4, -1}, {5, -1},   {0, -1}};
}

TEST(BufferPlan, SecondRunAllocatesNothing) {
  CountingDevice dev;
  TrackedAllocator a(dev, 0);
  runScript(a, chain(), 7);
  EXPECT_EQ(a.numBufferPlans(), 1);
  EXPECT_EQ(dev.arenas, 1);
  // Greedy by size packs the chain into the live peak: 4000 + 3000 + 2000
  // bytes (buffers 2 and 3 overlap, and both overlap 0), each rounded to
  // 64. Under AddressSanitizer: all six apart, each with its redzone.
  if (kAsan)
    EXPECT_EQ(a.arenaBytes(), 4032 + 1024 + 3008 + 2048 + 1024 + 512 + 6 * 64);
  else
    EXPECT_EQ(a.arenaBytes(), 4032 + 3008 + 2048);
  EXPECT_TRUE(a.replaysPlan(7));
  int before = dev.allocations;
  auto first = runScript(a, chain(), 7);
  auto second = runScript(a, chain(), 7);
  EXPECT_EQ(dev.allocations, before);
  EXPECT_EQ(first, second); // the same planned addresses in every run
  EXPECT_EQ(a.counters().peakBytes, 4000 + 3000 + 2000);
  EXPECT_EQ(a.counters().numAllocs, 6);
}

TEST(BufferPlan, OtherShapesRecordTheirOwn) {
  CountingDevice dev;
  TrackedAllocator a(dev, 0);
  std::vector<Step> small = {{0, 100}, {1, 200}, {0, -1},
                             {2, 100}, {1, -1},  {2, -1}};
  runScript(a, chain(), 1);
  runScript(a, small, 2);
  EXPECT_EQ(a.numBufferPlans(), 2);
  int before = dev.allocations;
  for (int i = 0; i < 3; ++i) {
    runScript(a, chain(), 1);
    runScript(a, small, 2);
  }
  EXPECT_EQ(dev.allocations, before);
  EXPECT_EQ(dev.arenas, 1); // the second plan fits the first one's arena
}

TEST(BufferPlan, RunOffThePlanFallsBack) {
  CountingDevice dev;
  TrackedAllocator a(dev, 0);
  runScript(a, chain(), 3);
  // The same key, other sizes from the third allocation on (a model whose
  // buffers depend on values): device blocks for the rest, no overlap.
  std::vector<Step> other = chain();
  other[2].bytes = 5000;
  int before = dev.allocations;
  runScript(a, other, 3);
  EXPECT_GT(dev.allocations, before);
  // The next run records the plan again, the one after replays it.
  EXPECT_FALSE(a.replaysPlan(3));
  runScript(a, chain(), 3);
  EXPECT_TRUE(a.replaysPlan(3));
  before = dev.allocations;
  runScript(a, chain(), 3);
  EXPECT_EQ(dev.allocations, before);
  // After three misses the shapes' runs go without a plan for good.
  for (int miss = 0; miss < 2; ++miss) {
    runScript(a, other, 3);
    runScript(a, chain(), 3);
  }
  EXPECT_FALSE(a.replaysPlan(3));
  runScript(a, chain(), 3);
  EXPECT_FALSE(a.replaysPlan(3));
  EXPECT_EQ(a.numBufferPlans(), 1);
}

TEST(BufferPlan, KeptBufferIsPlannedToItsLastFree) {
  // Without a limit a rematerialization candidate is kept at its evict
  // point in every run (its free there is ignored) and freed after its
  // regenerate point: the plan keeps its range until then.
  CountingDevice dev;
  TrackedAllocator a(dev, 0);
  auto run = [&] {
    a.beginRun(11);
    bool refused = false;
    char *kept = static_cast<char *>(a.allocate(3000, 64, &refused));
    std::memset(kept, 1, 3000);
    {
      std::lock_guard<std::mutex> lock(a.mutex());
      a.keepLocked(kept);
    }
    a.free(kept); // ignored: kept
    char *other = static_cast<char *>(a.allocate(3000, 64, &refused));
    EXPECT_TRUE(other + 3000 <= kept || kept + 3000 <= other);
    std::memset(other, 2, 3000);
    EXPECT_EQ(kept[2999], 1);
    a.free(other);
    {
      std::lock_guard<std::mutex> lock(a.mutex());
      a.unkeepLocked(kept);
    }
    a.free(kept);
    a.endRun(true);
  };
  run();
  EXPECT_TRUE(a.replaysPlan(11));
  int before = dev.allocations;
  run();
  run();
  EXPECT_EQ(dev.allocations, before);
}

TEST(BufferPlan, LargerShapesGrowTheArena) {
  // A plan larger than the arena replaces it; the smaller plans made
  // before stay valid in the larger arena.
  CountingDevice dev;
  TrackedAllocator a(dev, 0);
  std::vector<Step> small = {{0, 100}, {1, 200}, {0, -1}, {1, -1}};
  runScript(a, small, 1);
  int64_t first = a.arenaBytes();
  runScript(a, chain(), 2);
  EXPECT_GT(a.arenaBytes(), first);
  EXPECT_EQ(dev.arenas, 2);
  EXPECT_TRUE(a.replaysPlan(1));
  EXPECT_TRUE(a.replaysPlan(2));
  int before = dev.allocations;
  runScript(a, small, 1);
  runScript(a, chain(), 2);
  EXPECT_EQ(dev.allocations, before);
}

TEST(BufferPlan, LaterFreeKeepsItsRange) {
  CountingDevice dev;
  TrackedAllocator a(dev, 0);
  runScript(a, chain(), 4);
  // Buffer 1 freed after 3 is allocated (worker threads can reorder frees):
  // 3's planned range may be 1's, so 3 must not land on it.
  std::vector<Step> late = {{0, 4000}, {1, 1000}, {2, 3000}, {3, 2000},
                            {1, -1},   {2, -1},   {4, 1000}, {3, -1},
                            {5, 500},  {4, -1},   {5, -1},   {0, -1}};
  runScript(a, late, 4); // runScript checks that no live buffers overlap
}

TEST(BufferPlan, NoPlanUnderALimitOrWithoutKey) {
  CountingDevice dev;
  TrackedAllocator limited(dev, 1 << 20);
  runScript(limited, chain(), 5);
  EXPECT_EQ(limited.numBufferPlans(), 0);
  TrackedAllocator unkeyed(dev, 0);
  runScript(unkeyed, chain(), 0);
  EXPECT_EQ(unkeyed.numBufferPlans(), 0);
  EXPECT_EQ(dev.arenas, 0);
}

TEST(BufferPlan, NoArenaNoPlan) {
  CountingDevice dev;
  dev.arenasRefused = true;
  TrackedAllocator a(dev, 0);
  runScript(a, chain(), 6);
  EXPECT_EQ(a.numBufferPlans(), 0);
  runScript(a, chain(), 6); // device blocks again, the run still completes
  EXPECT_EQ(a.arenaBytes(), 0);
}

TEST(BufferPlan, HandedOverBuffersAreNotPlanned) {
  CountingDevice dev;
  TrackedAllocator a(dev, 0);
  auto run = [&](bool check) {
    a.beginRun(9);
    bool planned = a.replaysPlan(9);
    bool refused = false;
    char *t = static_cast<char *>(a.allocate(1000, 64, &refused));
    char *out = static_cast<char *>(a.allocate(2000, 64, &refused));
    a.free(t);
    // The caller takes the output's block and frees it itself.
    EXPECT_TRUE(a.handOver(out, out, 2000));
    if (check) {
      EXPECT_NE(out, t);
    }
    a.endRun(true);
    std::free(out);
    return planned;
  };
  EXPECT_FALSE(run(false));
  EXPECT_EQ(a.numBufferPlans(), 1);
  EXPECT_EQ(a.arenaBytes(), kAsan ? 1024 + 64 : 1024);
  EXPECT_TRUE(run(true));
  EXPECT_TRUE(run(true));
  a.releasePlans();
  a.releaseBlockCache();
}

} // namespace
