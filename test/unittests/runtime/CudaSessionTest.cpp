//===- CudaSessionTest.cpp - A CUDA model's session on a substitute driver ===//
//
// Runs with $DISC_CUDA_DRIVER set to fixtures/fake_cuda_driver.c (ctest sets
// it): inputs are copied to device memory, the kernel launches on the
// session stream, outputs come back to the host, and device memory is
// tracked with the same peak and limit as on the CPU (docs/cuda.md).
//
//===----------------------------------------------------------------------===//

#include "disc/runtime/Runtime.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <dlfcn.h>

using namespace disc;

namespace {

int64_t fakeCounter(const char *name) {
  void *h = dlopen(std::getenv("DISC_CUDA_DRIVER"), RTLD_NOW | RTLD_NOLOAD);
  if (!h)
    return -1;
  auto fn = reinterpret_cast<int64_t (*)()>(dlsym(h, name));
  int64_t v = fn ? fn() : -1;
  dlclose(h);
  return v;
}

std::shared_ptr<const Executable> loadOrDie() {
  std::shared_ptr<const Executable> exe;
  Status s = Executable::load(DISC_FIXTURE_CUDA, &exe);
  EXPECT_TRUE(s.isOk()) << s.toString();
  return exe;
}

Tensor iota(int64_t n) {
  std::vector<float> v(n);
  for (int64_t i = 0; i < n; ++i)
    v[i] = static_cast<float>(i) * 0.5f;
  return Tensor::fromVector<float>({n}, v);
}

TEST(CudaSession, RunsThroughTheDriver) {
  ASSERT_NE(std::getenv("DISC_CUDA_DRIVER"), nullptr)
      << "run through ctest, which sets DISC_CUDA_DRIVER";
  auto exe = loadOrDie();
  ASSERT_TRUE(exe);
  EXPECT_EQ(exe->signature().target, "cuda");
  EXPECT_EQ(exe->signature().gpuArch, "sm_80");
  Session session(exe);
  for (int64_t n : {1, 300, 1000}) {
    std::vector<Tensor> out;
    Status s = session.run({iota(n)}, &out);
    ASSERT_TRUE(s.isOk()) << s.toString();
    ASSERT_EQ(out.size(), 1u);
    ASSERT_EQ(out[0].shape(), std::vector<int64_t>{n});
    for (int64_t i = 0; i < n; ++i)
      ASSERT_EQ(out[0].data<float>()[i], static_cast<float>(i) * 0.5f + 1.0f);
    // Device bytes are tracked like host bytes: the output buffer only.
    EXPECT_EQ(session.stats().peak_bytes, 4 * n);
    EXPECT_EQ(session.stats().num_allocs, 1);
    EXPECT_EQ(session.stats().current_bytes, 0);
    EXPECT_EQ(session.stats().leaked_allocs, 0);
    // Output and input copies are back to the driver; the session keeps
    // its device copy of the model's constant (uploaded once, not counted
    // in peak_bytes).
    EXPECT_EQ(fakeCounter("fake_cuda_live_allocations"), 1);
  }
  EXPECT_EQ(fakeCounter("fake_cuda_modules_loaded"), 1);
  EXPECT_EQ(fakeCounter("fake_cuda_streams"), 1); // one per session
}

TEST(CudaSession, TracedRunTimesEachLaunchWithEvents) {
  // record_trace: each launch gets a device slice (CUDA events around it),
  // named by its kernel symbol when the signature lists no "kernels"; an
  // untraced run records no event.
  auto exe = loadOrDie();
  ASSERT_TRUE(exe);
  SessionOptions opts;
  opts.record_trace = true;
  Session session(exe, opts);
  std::vector<Tensor> out;
  int64_t before = fakeCounter("fake_cuda_events_recorded");
  Status s = session.run({iota(300)}, &out);
  ASSERT_TRUE(s.isOk()) << s.toString();
  std::vector<RunTrace::Slice> device;
  for (const auto &slice : session.lastTrace().slices)
    if (slice.device)
      device.push_back(slice);
  ASSERT_EQ(device.size(), 1u);
  EXPECT_EQ(device[0].callee, "add_one_checked");
  EXPECT_EQ(device[0].name, "add_one_checked");
  EXPECT_EQ(device[0].kind, "kernel");
  EXPECT_GE(device[0].durationUs, 0.0);
  // The start event and the launch's two.
  EXPECT_EQ(fakeCounter("fake_cuda_events_recorded") - before, 3);
  Session plain(exe);
  before = fakeCounter("fake_cuda_events_recorded");
  ASSERT_TRUE(plain.run({iota(300)}, &out).isOk());
  EXPECT_EQ(fakeCounter("fake_cuda_events_recorded"), before);
}

TEST(CudaSession, ConstantCopiesEndWithTheSession) {
  auto exe = loadOrDie();
  ASSERT_TRUE(exe);
  {
    Session session(exe);
    std::vector<Tensor> out;
    ASSERT_TRUE(session.run({iota(10)}, &out).isOk());
    ASSERT_TRUE(session.run({iota(20)}, &out).isOk());
    EXPECT_EQ(session.stats().peak_bytes, 80);
    EXPECT_EQ(fakeCounter("fake_cuda_live_allocations"), 1);
  }
  EXPECT_EQ(fakeCounter("fake_cuda_live_allocations"), 0);
}

TEST(CudaSession, MemoryLimitAppliesToDeviceMemory) {
  auto exe = loadOrDie();
  ASSERT_TRUE(exe);
  SessionOptions options;
  options.memory_limit_bytes = 1000;
  Session session(exe, options);
  std::vector<Tensor> out;
  EXPECT_TRUE(session.run({iota(250)}, &out).isOk());
  Status s = session.run({iota(251)}, &out);
  EXPECT_EQ(s.code(), StatusCode::ResourceExhausted);
  EXPECT_NE(s.message().find("memory limit exceeded: requested 1004 bytes "
                             "with 0 bytes live, limit 1000 bytes"),
            std::string::npos)
      << s.message();
  EXPECT_EQ(fakeCounter("fake_cuda_live_allocations"), 1); // the constant
}

TEST(CudaSession, LaunchFailureStopsTheRunAndFreesEverything) {
  auto exe = loadOrDie();
  ASSERT_TRUE(exe);
  Session session(exe);
  std::vector<Tensor> out;
  Status s = session.run({iota(13)}, &out); // kernel "missing"
  EXPECT_EQ(s.code(), StatusCode::Internal);
  EXPECT_NE(s.message().find("kernel 'missing': cuLaunchKernel failed: "
                             "unspecified launch failure (CUresult 719)"),
            std::string::npos)
      << s.message();
  EXPECT_TRUE(out.empty());
  EXPECT_EQ(session.stats().current_bytes, 0);
  EXPECT_EQ(fakeCounter("fake_cuda_live_allocations"), 1); // the constant
  // The session stays usable.
  EXPECT_TRUE(session.run({iota(12)}, &out).isOk());
}

// A run-time check inside a kernel (docs/cuda.md): the kernel records the
// failure in the module's device error word; the runtime reads and clears
// it after the launch, and the run fails with the check's message.
TEST(CudaSession, KernelCheckFailsTheRunWithItsMessage) {
  auto exe = loadOrDie();
  ASSERT_TRUE(exe);
  Session session(exe);
  Tensor bad = iota(300);
  bad.data<float>()[123] = -4.0f;
  bad.data<float>()[200] = -7.0f;
  std::vector<Tensor> out;
  Status s = session.run({bad}, &out);
  EXPECT_EQ(s.code(), StatusCode::InvalidArgument);
  EXPECT_NE(s.message().find("Test node 'add': x[123] = -4 is negative"),
            std::string::npos)
      << s.message();
  EXPECT_TRUE(out.empty());
  EXPECT_EQ(session.stats().current_bytes, 0);
  EXPECT_EQ(fakeCounter("fake_cuda_live_allocations"), 1); // the constant
  // The word was cleared: the next valid run passes.
  EXPECT_EQ(fakeCounter("fake_cuda_check_word0"), 0);
  ASSERT_TRUE(session.run({iota(300)}, &out).isOk());
  EXPECT_EQ(out[0].data<float>()[123], 123 * 0.5f + 1.0f);
}

// Training state on a CUDA model (docs/runtime-api.md, "Training state"):
// the session keeps the state in host memory, copies it to the device with
// the inputs of each run and takes the updating output back to the host.
TEST(CudaSession, StateStaysOnTheHostBetweenRuns) {
  std::shared_ptr<const Executable> exe;
  Status s = Executable::load(DISC_FIXTURE_CUDA_STATE, &exe);
  ASSERT_TRUE(s.isOk()) << s.toString();
  Session session(exe);
  std::vector<Tensor> out;
  for (int k = 1; k <= 3; ++k) {
    s = session.run(std::vector<Tensor>{}, &out);
    ASSERT_TRUE(s.isOk()) << s.toString();
    EXPECT_TRUE(out.empty()); // "next" became the state
    Tensor acc;
    ASSERT_TRUE(session.getState("acc", &acc).isOk());
    for (int i = 0; i < 4; ++i)
      EXPECT_EQ(acc.data<float>()[i], static_cast<float>(k));
  }
  // The state is not counted; the update is, as any output.
  EXPECT_EQ(session.stats().peak_bytes, 16);
  EXPECT_EQ(fakeCounter("fake_cuda_live_allocations"), 0);

  // A run over the memory limit changes no state.
  SessionOptions tight;
  tight.memory_limit_bytes = 8;
  Session limited(exe, tight);
  ASSERT_TRUE(
      limited.setState("acc", Tensor::fromVector<float>({4}, {5, 6, 7, 8}))
          .isOk());
  s = limited.run(std::vector<Tensor>{}, &out);
  EXPECT_EQ(s.code(), StatusCode::ResourceExhausted) << s.toString();
  Tensor acc;
  ASSERT_TRUE(limited.getState("acc", &acc).isOk());
  EXPECT_EQ(acc.data<float>()[0], 5.0f);
  EXPECT_EQ(acc.data<float>()[3], 8.0f);
  EXPECT_EQ(fakeCounter("fake_cuda_live_allocations"), 0);
}

} // namespace
