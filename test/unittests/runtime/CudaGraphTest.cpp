//===- CudaGraphTest.cpp - CUDA graph replay on a substitute driver -------===//
//
// Graph replay of a CUDA session (docs/cuda.md, "Graph replay") against
// fixtures/fake_cuda_driver.c, which records what a stream capture records
// and replays it at cuGraphLaunch: the first run at some input shapes
// launches its kernels, the second is captured (its launches recorded, not
// made) and runs as one graph launch, later ones replay that graph. The
// fixture model fixtures/cuda_graph_model.c computes y = x + 2 in two
// launches through a temporary buffer, with y[0] = n + 1 from a value the
// host code copies to the device from its stack (a graph replays the copy
// from a snapshot taken at capture).
//
//===----------------------------------------------------------------------===//

#include "disc/runtime/Runtime.h"
#include "disc/runtime/c_api.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <dlfcn.h>

using namespace disc;

namespace {

int64_t driverCounter(const char *name) {
  void *h = dlopen(std::getenv("DISC_CUDA_DRIVER"), RTLD_NOW | RTLD_NOLOAD);
  if (!h)
    return -1;
  auto fn = reinterpret_cast<int64_t (*)()>(dlsym(h, name));
  int64_t v = fn ? fn() : -1;
  dlclose(h);
  return v;
}

/// The driver's counters that tell launches from graph launches.
struct Counts {
  int64_t launches = 0, graphLaunches = 0, captured = 0, captures = 0;
  static Counts now() {
    Counts c;
    c.launches = driverCounter("fake_cuda_launches");
    c.graphLaunches = driverCounter("fake_cuda_graph_launches");
    c.captured = driverCounter("fake_cuda_captured_launches");
    c.captures = driverCounter("fake_cuda_captures");
    return c;
  }
  Counts operator-(const Counts &o) const {
    return {launches - o.launches, graphLaunches - o.graphLaunches,
            captured - o.captured, captures - o.captures};
  }
};

std::shared_ptr<const Executable> loadGraphModel() {
  std::shared_ptr<const Executable> exe;
  Status s = Executable::load(DISC_FIXTURE_CUDA_GRAPH, &exe);
  EXPECT_TRUE(s.isOk()) << s.toString();
  return exe;
}

/// x[i] = 0.25 i + offset.
Tensor ramp(int64_t n, float offset = 0.0f) {
  std::vector<float> v(n);
  for (int64_t i = 0; i < n; ++i)
    v[i] = static_cast<float>(i) * 0.25f + offset;
  return Tensor::fromVector<float>({n}, v);
}

/// One run at `x`; `*delta` the driver counters it moved.
Tensor runOnce(Session &session, const Tensor &x, Counts *delta) {
  Counts before = Counts::now();
  std::vector<Tensor> out;
  Status s = session.run({x}, &out);
  *delta = Counts::now() - before;
  EXPECT_TRUE(s.isOk()) << s.toString();
  return out.size() == 1 ? out[0] : Tensor();
}

/// y[0] = n + 1, y[i] = x[i] + 2.
void expectAddTwo(const Tensor &x, const Tensor &y) {
  ASSERT_TRUE(y.isValid());
  ASSERT_EQ(y.shape(), x.shape());
  int64_t n = x.numElements();
  ASSERT_EQ(y.data<float>()[0], static_cast<float>(n) + 1.0f);
  for (int64_t i = 1; i < n; ++i)
    ASSERT_EQ(y.data<float>()[i], x.data<float>()[i] + 2.0f) << "i = " << i;
}

TEST(CudaGraph, ReplaysOneGraphPerInputShapes) {
  ASSERT_NE(std::getenv("DISC_CUDA_DRIVER"), nullptr)
      << "run through ctest, which sets DISC_CUDA_DRIVER";
  auto exe = loadGraphModel();
  ASSERT_TRUE(exe);
  SessionOptions plainOptions;
  plainOptions.cuda_graph_cache_size = 0;
  Session plain(exe, plainOptions);
  Session session(exe); // the default: graphs on
  EXPECT_GT(session.options().cuda_graph_cache_size, 0);
  const int64_t sizes[] = {300, 1000};
  // Alternating shapes A, B, A, B, A, B: plain, plain, capture, capture,
  // replay, replay.
  for (int round = 0; round < 3; ++round) {
    for (int64_t n : sizes) {
      SCOPED_TRACE("round " + std::to_string(round) +
                   ", n = " + std::to_string(n));
      Tensor x = ramp(n, static_cast<float>(round));
      Counts d;
      Tensor y = runOnce(session, x, &d);
      expectAddTwo(x, y);
      const SessionStats &st = session.stats();
      EXPECT_EQ(st.peak_bytes, 8 * n);
      EXPECT_EQ(st.num_allocs, 2);
      EXPECT_EQ(st.current_bytes, 0);
      EXPECT_EQ(st.leaked_allocs, 0);
      if (round == 0) {
        EXPECT_EQ(d.launches, 2);
        EXPECT_EQ(d.graphLaunches, 0);
        EXPECT_EQ(st.cuda_graph_captures, 0);
        EXPECT_EQ(st.cuda_graph_replays, 0);
      } else {
        EXPECT_EQ(d.launches, 0);
        EXPECT_EQ(d.graphLaunches, 1);
        EXPECT_EQ(d.captured, round == 1 ? 2 : 0);
        EXPECT_EQ(d.captures, round == 1 ? 1 : 0);
        EXPECT_EQ(st.cuda_graph_captures, round == 1 ? 1 : 0);
        EXPECT_EQ(st.cuda_graph_replays, round == 1 ? 0 : 1);
      }
      // The same outputs as plain runs, bit for bit.
      Counts p;
      Tensor z = runOnce(plain, x, &p);
      EXPECT_EQ(p.graphLaunches, 0);
      EXPECT_EQ(p.launches, 2);
      ASSERT_TRUE(z.isValid());
      EXPECT_EQ(std::memcmp(y.data(), z.data(), y.byteSize()), 0);
    }
  }
  // Live: the constant copy of each session, and the input buffers of the
  // two graphs.
  EXPECT_EQ(driverCounter("fake_cuda_live_allocations"), 2 + 2);
  EXPECT_EQ(driverCounter("fake_cuda_live_graphs"), 2);
}

TEST(CudaGraph, EverythingIsFreedWithTheSession) {
  auto exe = loadGraphModel();
  ASSERT_TRUE(exe);
  {
    Session session(exe);
    for (int k = 0; k < 3; ++k) {
      Counts d;
      expectAddTwo(ramp(64), runOnce(session, ramp(64), &d));
    }
    EXPECT_EQ(driverCounter("fake_cuda_live_graphs"), 1);
  }
  EXPECT_EQ(driverCounter("fake_cuda_live_graphs"), 0);
  EXPECT_EQ(driverCounter("fake_cuda_live_allocations"), 0);
}

TEST(CudaGraph, LeastRecentlyUsedGraphGoesBeyondTheCacheSize) {
  auto exe = loadGraphModel();
  ASSERT_TRUE(exe);
  SessionOptions options;
  options.cuda_graph_cache_size = 1;
  Session session(exe, options);
  // n, then whether the run launched kernels (plain), captured, replayed.
  struct Step {
    int64_t n;
    int64_t launches, captures, replays;
  };
  const Step steps[] = {
      {16, 2, 0, 0}, // A plain
      {16, 0, 1, 0}, // A captured
      {16, 0, 0, 1}, // A replayed
      {40, 2, 0, 0}, // B plain
      {40, 0, 1, 0}, // B captured: A's graph is dropped
      {16, 0, 1, 0}, // A captured again (it ran before: no plain run)
      {16, 0, 0, 1}, // A replayed
      {40, 0, 1, 0}, // B captured again
  };
  for (const Step &step : steps) {
    SCOPED_TRACE("n = " + std::to_string(step.n));
    Counts d;
    expectAddTwo(ramp(step.n), runOnce(session, ramp(step.n), &d));
    EXPECT_EQ(d.launches, step.launches);
    EXPECT_EQ(d.graphLaunches, step.launches == 0 ? 1 : 0);
    EXPECT_EQ(session.stats().cuda_graph_captures, step.captures);
    EXPECT_EQ(session.stats().cuda_graph_replays, step.replays);
    EXPECT_EQ(driverCounter("fake_cuda_live_graphs"),
              step.launches == 0 || step.n == 40 ? 1 : 0);
  }
}

TEST(CudaGraph, HostReadDuringTheRunFallsBackToPlainLaunches) {
  auto exe = loadGraphModel();
  ASSERT_TRUE(exe);
  Session session(exe);
  // n = 7: the model reads y[0] on the host mid-run (a synchronization),
  // which invalidates the capture of the second run: it is redone plainly,
  // and later runs at n = 7 are not captured again.
  for (int k = 0; k < 4; ++k) {
    SCOPED_TRACE("run " + std::to_string(k));
    int64_t capturedBefore = driverCounter("fake_cuda_captured_launches");
    Counts d;
    Tensor x = ramp(7, static_cast<float>(k));
    expectAddTwo(x, runOnce(session, x, &d));
    EXPECT_EQ(d.launches, 2);
    EXPECT_EQ(d.graphLaunches, 0);
    EXPECT_EQ(d.captures, 0);
    // Only the second run tried: the two launches before the host read.
    EXPECT_EQ(driverCounter("fake_cuda_captured_launches") - capturedBefore,
              k == 1 ? 2 : 0);
    EXPECT_EQ(session.stats().cuda_graph_captures, 0);
    EXPECT_EQ(session.stats().cuda_graph_replays, 0);
    EXPECT_EQ(session.stats().peak_bytes, 8 * 7);
  }
  EXPECT_EQ(driverCounter("fake_cuda_live_graphs"), 0);
  // Other shapes of the same session are still captured.
  for (int k = 0; k < 3; ++k) {
    Counts d;
    expectAddTwo(ramp(9), runOnce(session, ramp(9), &d));
    EXPECT_EQ(d.graphLaunches, k == 0 ? 0 : 1);
  }
}

TEST(CudaGraph, MemoryLimitRunsPlainly) {
  auto exe = loadGraphModel();
  ASSERT_TRUE(exe);
  SessionOptions options;
  options.memory_limit_bytes = 1 << 20;
  Session session(exe, options);
  for (int k = 0; k < 3; ++k) {
    Counts d;
    expectAddTwo(ramp(100), runOnce(session, ramp(100), &d));
    EXPECT_EQ(d.launches, 2);
    EXPECT_EQ(d.graphLaunches, 0);
    EXPECT_EQ(d.captured, 0);
  }
}

TEST(CudaGraph, FailedCheckInAReplayedRunReportsTheModelsMessage) {
  auto exe = loadGraphModel();
  ASSERT_TRUE(exe);
  Session session(exe);
  for (int k = 0; k < 3; ++k) {
    Counts d;
    expectAddTwo(ramp(8), runOnce(session, ramp(8), &d));
  }
  EXPECT_EQ(session.stats().cuda_graph_replays, 1);
  // x[5] = -3: t[5] = -2 < 0 fails the check of the second kernel. The
  // replay reads the error word after the graph launch and redoes the run
  // plainly, which fails with the model's message.
  std::vector<float> bad(8, 1.0f);
  bad[5] = -3.0f;
  Tensor x = Tensor::fromVector<float>({8}, bad);
  std::vector<Tensor> out;
  Counts before = Counts::now();
  Status s = session.run({x}, &out);
  Counts d = Counts::now() - before;
  EXPECT_EQ(s.code(), StatusCode::InvalidArgument) << s.toString();
  EXPECT_NE(s.message().find("Test node 'add2': x[5] + 1 = -2 is negative"),
            std::string::npos)
      << s.message();
  EXPECT_EQ(d.graphLaunches, 1);
  EXPECT_EQ(d.launches, 2);
  EXPECT_TRUE(out.empty());
  EXPECT_EQ(driverCounter("fake_cuda_check_word0"), 0); // cleared
  // The graph stays: the next run replays it.
  Counts after;
  expectAddTwo(ramp(8, 3.0f), runOnce(session, ramp(8, 3.0f), &after));
  EXPECT_EQ(after.launches, 0);
  EXPECT_EQ(after.graphLaunches, 1);
  EXPECT_EQ(session.stats().cuda_graph_replays, 1);
}

} // namespace

namespace {

/// Runs the graph model 3 times at n = 32 through the C API with
/// `cacheSize` as the option; returns the graph launches of the last run
/// and its stats in `*stats`.
int64_t cApiReplays(int32_t cacheSize, disc_session_stats_t *stats) {
  disc_executable_t *exe = nullptr;
  if (disc_executable_load(DISC_FIXTURE_CUDA_GRAPH, &exe) != DISC_STATUS_OK)
    return -1;
  disc_session_options_t options = {};
  options.cuda_graph_cache_size = cacheSize;
  disc_session_t *session = nullptr;
  int64_t launches = -1;
  if (disc_session_create(exe, &options, &session) == DISC_STATUS_OK) {
    std::vector<float> x(32, 1.5f);
    int64_t shape[1] = {32};
    disc_tensor_t *in = nullptr;
    disc_tensor_create(DISC_DTYPE_FLOAT32, shape, 1, x.data(), &in);
    for (int k = 0; k < 3 && in; ++k) {
      disc_tensor_t *out = nullptr;
      int64_t before = driverCounter("fake_cuda_graph_launches");
      disc_status_code rc = disc_session_run(session, &in, 1, &out, 1);
      launches = rc == DISC_STATUS_OK
                     ? driverCounter("fake_cuda_graph_launches") - before
                     : -1;
      if (out && launches >= 0 &&
          static_cast<float *>(disc_tensor_data(out))[31] != 3.5f)
        launches = -2;
      disc_tensor_destroy(out);
    }
    disc_tensor_destroy(in);
    disc_session_get_stats(session, stats);
    disc_session_destroy(session);
  }
  disc_executable_release(exe);
  return launches;
}

TEST(CudaGraph, CApiOptionAndStats) {
  disc_session_stats_t stats = {};
  // 0: the default (graphs on); the third run replays.
  EXPECT_EQ(cApiReplays(0, &stats), 1);
  EXPECT_EQ(stats.cuda_graph_replays, 1);
  EXPECT_EQ(stats.cuda_graph_captures, 0);
  EXPECT_EQ(stats.peak_bytes, 8 * 32);
  // Negative: no graphs.
  EXPECT_EQ(cApiReplays(-1, &stats), 0);
  EXPECT_EQ(stats.cuda_graph_replays, 0);
  // 1: one graph.
  EXPECT_EQ(cApiReplays(1, &stats), 1);
}

} // namespace
