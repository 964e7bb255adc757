//===- ParallelForTest.cpp - The runtime's parallel_for over OpenMP ------===//
#include "cpu/ParallelFor.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <mutex>
#include <set>
#include <thread>
#include <utility>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#endif

using disc::runtime::cpu::parallelFor;
using disc::runtime::cpu::parallelForThreads;

namespace {

/// What the chunks of one parallelFor saw.
struct Record {
  std::vector<std::atomic<int>> hits;
  std::mutex mutex;
  std::vector<std::pair<int64_t, int64_t>> chunks;
  std::set<std::thread::id> threads;
  explicit Record(int64_t n) : hits(n) {}
  static void body(void *env, int64_t lo, int64_t hi) {
    auto *r = static_cast<Record *>(env);
    for (int64_t i = lo; i < hi; ++i)
      r->hits[i].fetch_add(1);
    std::lock_guard<std::mutex> lock(r->mutex);
    r->chunks.push_back({lo, hi});
    r->threads.insert(std::this_thread::get_id());
  }
};

TEST(ParallelForTest, CoversEveryIterationOnce) {
  for (int32_t threads : {1, 2, 3, 4})
    for (int64_t n : {1, 2, 3, 5, 7, 64, 1000, 1001}) {
      Record r(n);
      parallelFor(threads, &Record::body, &r, n, /*minChunk=*/1);
      for (int64_t i = 0; i < n; ++i)
        ASSERT_EQ(r.hits[i].load(), 1) << "iteration " << i << " of " << n
                                       << ", " << threads << " threads";
      int32_t expected = parallelForThreads(threads, n, 1);
      EXPECT_EQ(expected, std::min<int64_t>(threads, n));
      // libgomp may give a smaller team, never a larger one.
      EXPECT_LE(static_cast<int32_t>(r.chunks.size()), expected);
      for (auto [lo, hi] : r.chunks)
        EXPECT_LT(lo, hi);
    }
}

TEST(ParallelForTest, OneThreadRunsInline) {
  Record r(100);
  parallelFor(1, &Record::body, &r, 100, 1);
  ASSERT_EQ(r.chunks.size(), 1u);
  EXPECT_EQ(r.chunks[0].first, 0);
  EXPECT_EQ(r.chunks[0].second, 100);
  EXPECT_EQ(*r.threads.begin(), std::this_thread::get_id());
}

TEST(ParallelForTest, SmallLoopsRunInline) {
  // 10 iterations with chunks of at least 8: one chunk, on the caller.
  Record r(10);
  parallelFor(4, &Record::body, &r, 10, /*minChunk=*/8);
  ASSERT_EQ(r.chunks.size(), 1u);
  EXPECT_EQ(*r.threads.begin(), std::this_thread::get_id());
  EXPECT_EQ(parallelForThreads(4, 10, 8), 1);
  EXPECT_EQ(parallelForThreads(4, 16, 8), 2);
  EXPECT_EQ(parallelForThreads(4, 1 << 20, 8), 4);
}

TEST(ParallelForTest, ChunksAreContiguousAndBalanced) {
  Record r(10);
  parallelFor(3, &Record::body, &r, 10, 1);
  std::sort(r.chunks.begin(), r.chunks.end());
  if (r.chunks.size() == 3) { // libgomp gave the full team
    EXPECT_EQ(r.chunks, (std::vector<std::pair<int64_t, int64_t>>{
                            {0, 4}, {4, 7}, {7, 10}}));
  }
  int64_t next = 0;
  for (auto [lo, hi] : r.chunks) {
    EXPECT_EQ(lo, next);
    next = hi;
  }
  EXPECT_EQ(next, 10);
}

TEST(ParallelForTest, NothingForEmptyLoops) {
  Record r(1);
  parallelFor(2, &Record::body, &r, 0, 1);
  EXPECT_TRUE(r.chunks.empty());
}

#if defined(__x86_64__) || defined(__i386__)
/// MXCSR FTZ | DAZ.
constexpr unsigned kFlushBits = (1u << 15) | (1u << 6);
/// MXCSR without its sticky exception flags (bits 0-5), which arithmetic
/// sets.
unsigned controlBits() { return _mm_getcsr() & ~0x3fu; }

/// The MXCSR flush bits each chunk's thread ran with.
struct CsrRecord {
  std::mutex mutex;
  std::vector<unsigned> bits;
  static void body(void *env, int64_t, int64_t) {
    auto *r = static_cast<CsrRecord *>(env);
    std::lock_guard<std::mutex> lock(r->mutex);
    r->bits.push_back(_mm_getcsr() & kFlushBits);
  }
};

TEST(SubnormalFlushScopeTest, SetsEveryTeamThreadAndRestores) {
  using disc::runtime::cpu::SubnormalFlushScope;
  unsigned before = controlBits();
  ASSERT_EQ(before & kFlushBits, 0u) << "the test process starts with IEEE";
  for (int32_t threads : {1, 3}) {
    {
      SubnormalFlushScope scope(true, threads);
      EXPECT_EQ(_mm_getcsr() & kFlushBits, kFlushBits);
      CsrRecord r;
      parallelFor(threads, &CsrRecord::body, &r, 64, 1);
      ASSERT_FALSE(r.bits.empty());
      for (unsigned bits : r.bits)
        EXPECT_EQ(bits, kFlushBits) << threads << " threads";
      // Arithmetic: a normal difference below 2^-126 is flushed.
      volatile float a = 3e-38f, b = -2.5e-38f;
      EXPECT_EQ(a + b, 0.0f);
    }
    EXPECT_EQ(controlBits(), before);
    CsrRecord after;
    parallelFor(threads, &CsrRecord::body, &after, 64, 1);
    for (unsigned bits : after.bits)
      EXPECT_EQ(bits, 0u) << "restored on the team, " << threads << " threads";
  }
  SubnormalFlushScope off(false, 2);
  EXPECT_EQ(controlBits(), before);
  volatile float a = 3e-38f, b = -2.5e-38f;
  EXPECT_GT(a + b, 0.0f);
}
#endif

} // namespace
