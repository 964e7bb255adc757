//===- CudaDeviceTest.cpp - CUDA runtime error paths, substitute driver ---===//
//
// The CUDA device layer against a substitute driver function table (no GPU
// needed), and "no CUDA device" through the C++ API, the C API and disc-run
// when the driver cannot be loaded (docs/cuda.md).
//
//===----------------------------------------------------------------------===//

#include "cuda/Device.h"
#include "disc/runtime/Runtime.h"
#include "disc/runtime/abi.h"
#include "disc/runtime/c_api.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <sys/wait.h>
#include <vector>

using namespace disc::runtime::cuda;

namespace {

/// What the substitute driver does and what it saw.
struct FakeState {
  int deviceCount = 1;
  CUresult countResult = kCudaSuccess;
  CUresult allocResult = kCudaSuccess;
  CUresult loadResult = kCudaSuccess;
  CUresult launchResult = kCudaSuccess;
  CUresult syncResult = kCudaSuccess;
  int liveAllocs = 0;
  int modulesLoaded = 0;
  int launches = 0;
  int streamsLive = 0;
  int contextsLive = 0;
  bool hasCheckWord = true;
  int64_t checkWord[5] = {0, 0, 0, 0, 0};
  int globalLookups = 0;
  int syncs = 0;
  int asyncFrees = 0;
  unsigned lastGrid[3] = {0, 0, 0};
  unsigned lastBlock[3] = {0, 0, 0};
};
FakeState state;
int fakeContext;
int fakeStream;

DriverApi fakeApi() {
  DriverApi api{};
  api.init = [](unsigned) -> CUresult { return kCudaSuccess; };
  api.deviceGetCount = [](int *count) -> CUresult {
    *count = state.deviceCount;
    return state.countResult;
  };
  api.deviceGet = [](CUdevice *d, int ordinal) -> CUresult {
    *d = ordinal;
    return kCudaSuccess;
  };
  api.deviceGetName = [](char *name, int len, CUdevice) -> CUresult {
    std::strncpy(name, "Substitute GPU", static_cast<size_t>(len));
    return kCudaSuccess;
  };
  api.primaryCtxRetain = [](CUcontext *ctx, CUdevice) -> CUresult {
    *ctx = &fakeContext;
    ++state.contextsLive;
    return kCudaSuccess;
  };
  api.primaryCtxRelease = [](CUdevice) -> CUresult {
    --state.contextsLive;
    return kCudaSuccess;
  };
  api.ctxSetCurrent = [](CUcontext) -> CUresult { return kCudaSuccess; };
  api.streamCreate = [](CUstream *s, unsigned) -> CUresult {
    *s = &fakeStream;
    ++state.streamsLive;
    return kCudaSuccess;
  };
  api.streamDestroy = [](CUstream) -> CUresult {
    --state.streamsLive;
    return kCudaSuccess;
  };
  api.streamSynchronize = [](CUstream) -> CUresult {
    ++state.syncs;
    return state.syncResult;
  };
  api.memAlloc = [](CUdeviceptr *p, size_t bytes) -> CUresult {
    if (state.allocResult != kCudaSuccess)
      return state.allocResult;
    *p = reinterpret_cast<uintptr_t>(std::malloc(bytes));
    ++state.liveAllocs;
    return kCudaSuccess;
  };
  api.memFree = [](CUdeviceptr p) -> CUresult {
    std::free(reinterpret_cast<void *>(static_cast<uintptr_t>(p)));
    --state.liveAllocs;
    return kCudaSuccess;
  };
  api.memcpyAsync = [](CUdeviceptr dst, CUdeviceptr src, size_t bytes,
                       CUstream) -> CUresult {
    std::memcpy(reinterpret_cast<void *>(static_cast<uintptr_t>(dst)),
                reinterpret_cast<void *>(static_cast<uintptr_t>(src)), bytes);
    return kCudaSuccess;
  };
  api.moduleLoadData = [](CUmodule *m, const void *image) -> CUresult {
    if (state.loadResult != kCudaSuccess)
      return state.loadResult;
    *m = const_cast<void *>(image);
    ++state.modulesLoaded;
    return kCudaSuccess;
  };
  api.moduleUnload = [](CUmodule) -> CUresult { return kCudaSuccess; };
  api.moduleGetFunction = [](CUfunction *fn, CUmodule m,
                             const char *) -> CUresult {
    *fn = m;
    return kCudaSuccess;
  };
  api.launchKernel = [](CUfunction, unsigned gx, unsigned gy, unsigned gz,
                        unsigned bx, unsigned by, unsigned bz, unsigned,
                        CUstream, void **, void **) -> CUresult {
    ++state.launches;
    state.lastGrid[0] = gx;
    state.lastGrid[1] = gy;
    state.lastGrid[2] = gz;
    state.lastBlock[0] = bx;
    state.lastBlock[1] = by;
    state.lastBlock[2] = bz;
    return state.launchResult;
  };
  api.moduleGetGlobal = [](CUdeviceptr *p, size_t *bytes, CUmodule,
                           const char *name) -> CUresult {
    ++state.globalLookups;
    if (!state.hasCheckWord || std::strcmp(name, "disc_check_error") != 0)
      return 500; // CUDA_ERROR_NOT_FOUND
    *p = reinterpret_cast<uintptr_t>(state.checkWord);
    *bytes = sizeof state.checkWord;
    return kCudaSuccess;
  };
  api.getErrorString = [](CUresult code, const char **text) -> CUresult {
    if (code == kCudaErrorOutOfMemory)
      *text = "out of memory";
    else if (code == kCudaErrorNoDevice)
      *text = "no CUDA-capable device is detected";
    else if (code == 209)
      *text = "no kernel image is available for execution on the device";
    else
      return 1;
    return kCudaSuccess;
  };
  return api;
}

/// The substitute table's plain entries, for the stream-ordered ones.
const DriverApi &api0() {
  static const DriverApi api = fakeApi();
  return api;
}

class CudaDeviceTest : public ::testing::Test {
protected:
  void SetUp() override {
    state = FakeState();
    api = fakeApi();
  }
  std::unique_ptr<Device> openOrDie() {
    std::string error;
    std::unique_ptr<Device> dev = Device::open(api, 0, &error);
    EXPECT_TRUE(dev) << error;
    return dev;
  }
  DriverApi api;
};

const char kImage[] = "cubin";
const int64_t kGrid[3] = {4, 1, 1};
const int64_t kBlock[3] = {256, 1, 1};

TEST_F(CudaDeviceTest, NoDeviceWhenTheDriverCountsNone) {
  state.deviceCount = 0;
  std::string error;
  EXPECT_EQ(Device::open(api, 0, &error), nullptr);
  EXPECT_NE(error.find("no CUDA device"), std::string::npos) << error;
  EXPECT_EQ(state.contextsLive, 0);
}

TEST_F(CudaDeviceTest, NoDeviceWhenCountingFails) {
  state.countResult = kCudaErrorNoDevice;
  std::string error;
  EXPECT_EQ(Device::open(api, 0, &error), nullptr);
  EXPECT_NE(error.find("no CUDA device: cuDeviceGetCount failed: no "
                       "CUDA-capable device is detected (CUresult 100)"),
            std::string::npos)
      << error;
}

TEST_F(CudaDeviceTest, OneStreamPerDeviceAndEverythingReleased) {
  {
    std::unique_ptr<Device> a = openOrDie();
    std::unique_ptr<Device> b = openOrDie();
    ASSERT_TRUE(a && b);
    EXPECT_EQ(a->name(), "Substitute GPU");
    EXPECT_EQ(state.streamsLive, 2);
    EXPECT_EQ(state.contextsLive, 2);
  }
  EXPECT_EQ(state.streamsLive, 0);
  EXPECT_EQ(state.contextsLive, 0);
}

TEST_F(CudaDeviceTest, OutOfMemoryIsReported) {
  std::unique_ptr<Device> dev = openOrDie();
  ASSERT_TRUE(dev);
  state.allocResult = kCudaErrorOutOfMemory;
  bool oom = false;
  std::string error;
  EXPECT_EQ(dev->allocate(1 << 20, &oom, &error), nullptr);
  EXPECT_TRUE(oom);
  EXPECT_NE(error.find("cuMemAlloc failed: out of memory (CUresult 2) for "
                       "1048576 bytes"),
            std::string::npos)
      << error;
  // Any other refusal is not an out-of-memory.
  state.allocResult = 999;
  EXPECT_EQ(dev->allocate(16, &oom, &error), nullptr);
  EXPECT_FALSE(oom);
  EXPECT_NE(error.find("unknown error (CUresult 999)"), std::string::npos)
      << error;
}

TEST_F(CudaDeviceTest, CopiesRoundTripAndZeroBytesAllocate) {
  std::unique_ptr<Device> dev = openOrDie();
  ASSERT_TRUE(dev);
  bool oom = false;
  std::string error;
  std::vector<float> host = {1, 2, 3, 4}, back(4, 0);
  void *d = dev->allocate(16, &oom, &error);
  ASSERT_NE(d, nullptr) << error;
  EXPECT_EQ(dev->copy(d, host.data(), 16, &error), 0) << error;
  EXPECT_EQ(dev->copy(back.data(), d, 16, &error), 0) << error;
  EXPECT_EQ(dev->synchronize(&error), 0) << error;
  EXPECT_EQ(back, host);
  void *empty = dev->allocate(0, &oom, &error);
  EXPECT_NE(empty, nullptr) << error;
  dev->release(d);
  dev->release(empty);
  EXPECT_EQ(state.liveAllocs, 0);
}

TEST_F(CudaDeviceTest, LaunchLoadsEachModuleOnce) {
  std::unique_ptr<Device> dev = openOrDie();
  ASSERT_TRUE(dev);
  std::string error;
  EXPECT_EQ(dev->launch(kImage, "k", kGrid, kBlock, 0, nullptr, &error), 0)
      << error;
  EXPECT_EQ(dev->launch(kImage, "k", kGrid, kBlock, 0, nullptr, &error), 0)
      << error;
  EXPECT_EQ(state.launches, 2);
  EXPECT_EQ(state.modulesLoaded, 1);
  EXPECT_EQ(dev->numModules(), 1);
  EXPECT_EQ(state.lastGrid[0], 4u);
  EXPECT_EQ(state.lastBlock[0], 256u);
}

TEST_F(CudaDeviceTest, EmptyGridLaunchesNothing) {
  std::unique_ptr<Device> dev = openOrDie();
  ASSERT_TRUE(dev);
  std::string error;
  const int64_t empty[3] = {0, 1, 1};
  EXPECT_EQ(dev->launch(kImage, "k", empty, kBlock, 0, nullptr, &error), 0);
  EXPECT_EQ(state.launches, 0);
}

TEST_F(CudaDeviceTest, GridBeyondTheLimitsIsRejected) {
  std::unique_ptr<Device> dev = openOrDie();
  ASSERT_TRUE(dev);
  std::string error;
  const int64_t huge[3] = {1, int64_t(1) << 16, 1};
  EXPECT_EQ(dev->launch(kImage, "k", huge, kBlock, 0, nullptr, &error), 1);
  EXPECT_NE(error.find("kernel 'k': grid (1, 65536, 1) x block (256, 1, 1) "
                       "exceeds the CUDA limits"),
            std::string::npos)
      << error;
  const int64_t wide[3] = {2048, 1, 1};
  EXPECT_EQ(dev->launch(kImage, "k", kGrid, wide, 0, nullptr, &error), 1);
  EXPECT_EQ(state.launches, 0);
}

TEST_F(CudaDeviceTest, ModuleLoadFailureNamesTheKernel) {
  std::unique_ptr<Device> dev = openOrDie();
  ASSERT_TRUE(dev);
  state.loadResult = 209;
  std::string error;
  EXPECT_EQ(dev->launch(kImage, "f_kernel", kGrid, kBlock, 0, nullptr, &error),
            4);
  EXPECT_NE(error.find("kernel 'f_kernel': cuModuleLoadData failed: no kernel "
                       "image is available for execution on the device"),
            std::string::npos)
      << error;
  EXPECT_EQ(state.launches, 0);
}

TEST_F(CudaDeviceTest, LaunchAndSyncFailuresAreReported) {
  std::unique_ptr<Device> dev = openOrDie();
  ASSERT_TRUE(dev);
  state.launchResult = 719;
  std::string error;
  EXPECT_EQ(dev->launch(kImage, "k", kGrid, kBlock, 0, nullptr, &error), 4);
  EXPECT_NE(error.find("kernel 'k': cuLaunchKernel failed"), std::string::npos)
      << error;
  state.syncResult = 700;
  EXPECT_EQ(dev->synchronize(&error), 4);
  EXPECT_NE(error.find("cuStreamSynchronize failed: unknown error (CUresult "
                       "700)"),
            std::string::npos)
      << error;
}

// Run-time checks inside kernels: the module's device error word is read
// after the launch, reported once, and cleared.
TEST_F(CudaDeviceTest, CheckWordIsReadAndCleared) {
  std::unique_ptr<Device> dev = openOrDie();
  ASSERT_TRUE(dev);
  std::string error;
  int64_t words[5] = {9, 9, 9, 9, 9};
  // Not launched yet: nothing to read.
  EXPECT_EQ(dev->readCheckWord(kImage, words, &error), 0);
  EXPECT_EQ(state.globalLookups, 0);
  ASSERT_EQ(dev->launch(kImage, "k", kGrid, kBlock, 0, nullptr, &error), 0);
  EXPECT_EQ(dev->readCheckWord(kImage, words, &error), 0) << error;
  EXPECT_EQ(words[0], 0);
  // A kernel recorded check 6 with values 42 and 7.
  state.checkWord[0] = 7;
  state.checkWord[1] = 42;
  state.checkWord[2] = 7;
  EXPECT_EQ(dev->readCheckWord(kImage, words, &error), 1);
  EXPECT_EQ(words[0], 7);
  EXPECT_EQ(words[1], 42);
  EXPECT_EQ(words[2], 7);
  EXPECT_EQ(state.checkWord[0], 0);
  EXPECT_EQ(state.checkWord[1], 0);
  EXPECT_EQ(dev->readCheckWord(kImage, words, &error), 0);
  // The address is looked up once per module.
  EXPECT_EQ(state.globalLookups, 1);
  // A failing synchronization while reading it is a driver error.
  state.checkWord[0] = 1;
  state.syncResult = 700;
  EXPECT_EQ(dev->readCheckWord(kImage, words, &error), 4);
  EXPECT_NE(error.find("reading the run-time check word failed"),
            std::string::npos)
      << error;
}

// Constants read by kernels: one device copy per host address, uploaded
// once and freed when the device closes.
TEST_F(CudaDeviceTest, ConstantCopiesAreCachedAndFreed) {
  static const float weights[4] = {1.0f, 2.0f, 3.0f, 4.0f};
  {
    std::unique_ptr<Device> dev = openOrDie();
    ASSERT_TRUE(dev);
    std::string error;
    void *a = nullptr, *b = nullptr;
    ASSERT_EQ(dev->constant(weights, sizeof weights, &a, &error), 0) << error;
    ASSERT_NE(a, nullptr);
    EXPECT_NE(a, static_cast<const void *>(weights));
    EXPECT_EQ(std::memcmp(a, weights, sizeof weights), 0);
    ASSERT_EQ(dev->constant(weights, sizeof weights, &b, &error), 0) << error;
    EXPECT_EQ(a, b);
    EXPECT_EQ(state.liveAllocs, 1);
    EXPECT_EQ(dev->constantBytes(), 16);
  }
  EXPECT_EQ(state.liveAllocs, 0);
}

// Small buffers: one device slot per allocation site, kept for the
// device's lifetime (the same address on every run).
TEST_F(CudaDeviceTest, ScratchSlotsAreKeptPerSite) {
  {
    std::unique_ptr<Device> dev = openOrDie();
    ASSERT_TRUE(dev);
    std::string error;
    void *a = nullptr, *b = nullptr, *c = nullptr;
    ASSERT_EQ(dev->scratch(0, 128, &a, &error), 0) << error;
    ASSERT_EQ(dev->scratch(1, 4, &b, &error), 0) << error;
    ASSERT_EQ(dev->scratch(0, 128, &c, &error), 0) << error;
    EXPECT_NE(a, b);
    EXPECT_EQ(a, c);
    EXPECT_EQ(state.liveAllocs, 2);
    state.allocResult = kCudaErrorOutOfMemory;
    EXPECT_EQ(dev->scratch(2, 8, &c, &error), 2);
    EXPECT_NE(error.find("device slot of a small buffer: cuMemAlloc failed"),
              std::string::npos)
        << error;
    state.allocResult = kCudaSuccess;
  }
  EXPECT_EQ(state.liveAllocs, 0);
}

TEST_F(CudaDeviceTest, ConstantCopyOutOfMemoryIsReported) {
  static const float weights[4] = {1.0f, 2.0f, 3.0f, 4.0f};
  std::unique_ptr<Device> dev = openOrDie();
  ASSERT_TRUE(dev);
  state.allocResult = kCudaErrorOutOfMemory;
  std::string error;
  void *a = nullptr;
  EXPECT_EQ(dev->constant(weights, sizeof weights, &a, &error), 2);
  EXPECT_NE(error.find("device copy of a constant: cuMemAlloc failed: out of "
                       "memory (CUresult 2) (16 bytes)"),
            std::string::npos)
      << error;
  EXPECT_EQ(dev->constantBytes(), 0);
}

// The words of every loaded module in one wait (before a host read, and at
// the end of a run when some module has a word): the first failure is
// reported and cleared without a second wait.
TEST_F(CudaDeviceTest, CheckWordsOfAllModulesInOneWait) {
  std::unique_ptr<Device> dev = openOrDie();
  ASSERT_TRUE(dev);
  std::string error;
  int64_t words[5] = {0, 0, 0, 0, 0};
  // Nothing launched: the end of the run does not wait; a host read does.
  EXPECT_EQ(dev->readCheckWord(DISC_CHECK_END_OF_RUN, words, &error), 0);
  EXPECT_EQ(state.syncs, 0);
  EXPECT_EQ(dev->readCheckWord(DISC_CHECK_ALL_MODULES, words, &error), 0);
  EXPECT_EQ(state.syncs, 1);
  ASSERT_EQ(dev->launch(kImage, "k", kGrid, kBlock, 0, nullptr, &error), 0);
  EXPECT_EQ(state.syncs, 1); // a launch does not wait
  EXPECT_EQ(dev->readCheckWord(DISC_CHECK_END_OF_RUN, words, &error), 0);
  EXPECT_EQ(state.syncs, 2);
  state.checkWord[0] = 4;
  state.checkWord[1] = -3;
  EXPECT_EQ(dev->readCheckWord(DISC_CHECK_END_OF_RUN, words, &error), 1);
  EXPECT_EQ(state.syncs, 3);
  EXPECT_EQ(words[0], 4);
  EXPECT_EQ(words[1], -3);
  EXPECT_EQ(state.checkWord[0], 0); // cleared on the stream
  EXPECT_EQ(dev->readCheckWord(DISC_CHECK_ALL_MODULES, words, &error), 0);
  EXPECT_EQ(state.syncs, 4);
  EXPECT_EQ(state.globalLookups, 1);
  state.checkWord[0] = 1;
  state.syncResult = 700;
  EXPECT_EQ(dev->readCheckWord(DISC_CHECK_ALL_MODULES, words, &error), 4);
  EXPECT_NE(error.find("reading the run-time check words failed"),
            std::string::npos)
      << error;
}

// Without a module that has a word, the end of a run does not wait.
TEST_F(CudaDeviceTest, EndOfRunWithoutCheckWordsDoesNotWait) {
  state.hasCheckWord = false;
  std::unique_ptr<Device> dev = openOrDie();
  ASSERT_TRUE(dev);
  std::string error;
  int64_t words[5] = {0, 0, 0, 0, 0};
  ASSERT_EQ(dev->launch(kImage, "k", kGrid, kBlock, 0, nullptr, &error), 0);
  EXPECT_EQ(dev->readCheckWord(DISC_CHECK_END_OF_RUN, words, &error), 0);
  EXPECT_EQ(state.syncs, 0);
}

// With cuMemAllocAsync/cuMemFreeAsync a free is queued on the stream
// behind the kernels that read the buffer: no wait; without them the
// device waits for the stream before cuMemFree.
TEST_F(CudaDeviceTest, StreamOrderedFreeDoesNotWait) {
  std::string error;
  bool oom = false;
  {
    std::unique_ptr<Device> dev = openOrDie();
    ASSERT_TRUE(dev);
    void *p = dev->allocate(64, &oom, &error);
    ASSERT_NE(p, nullptr) << error;
    dev->release(p);
    EXPECT_EQ(state.syncs, 1);
  }
  state = FakeState();
  api.memAllocAsync = [](CUdeviceptr *p, size_t bytes, CUstream s) -> CUresult {
    return s ? api0().memAlloc(p, bytes) : 400;
  };
  api.memFreeAsync = [](CUdeviceptr p, CUstream s) -> CUresult {
    ++state.asyncFrees;
    return s ? api0().memFree(p) : 400;
  };
  std::unique_ptr<Device> dev = openOrDie();
  ASSERT_TRUE(dev);
  void *p = dev->allocate(64, &oom, &error);
  ASSERT_NE(p, nullptr) << error;
  EXPECT_EQ(state.liveAllocs, 1);
  dev->release(p);
  EXPECT_EQ(state.syncs, 0);
  EXPECT_EQ(state.asyncFrees, 1);
  EXPECT_EQ(state.liveAllocs, 0);
}

TEST_F(CudaDeviceTest, ModuleWithoutCheckWordReportsNothing) {
  state.hasCheckWord = false;
  std::unique_ptr<Device> dev = openOrDie();
  ASSERT_TRUE(dev);
  std::string error;
  int64_t words[5] = {0, 0, 0, 0, 0};
  ASSERT_EQ(dev->launch(kImage, "k", kGrid, kBlock, 0, nullptr, &error), 0);
  state.syncResult = 700; // never reached: no word to read
  EXPECT_EQ(dev->readCheckWord(kImage, words, &error), 0);
  EXPECT_EQ(dev->readCheckWord(kImage, words, &error), 0);
  EXPECT_EQ(state.globalLookups, 1);
}

/// With no loadable driver, a CUDA model fails to load with "no CUDA
/// device" (LoadFailed) in the C++ and C APIs, and disc-run exits 2.
class NoCudaDriver : public ::testing::Test {
protected:
  void SetUp() override {
    setenv("DISC_CUDA_DRIVER", "/nonexistent/libcuda.so.1", 1);
  }
};

TEST_F(NoCudaDriver, CppApiLoadFails) {
  std::shared_ptr<const disc::Executable> exe;
  disc::Status s = disc::Executable::load(DISC_FIXTURE_CUDA, &exe);
  EXPECT_EQ(s.code(), disc::StatusCode::LoadFailed);
  EXPECT_NE(s.message().find("is a CUDA model (sm_80): no CUDA device: "),
            std::string::npos)
      << s.message();
  EXPECT_NE(s.message().find("/nonexistent/libcuda.so.1"), std::string::npos)
      << s.message();
  EXPECT_FALSE(exe);
}

TEST_F(NoCudaDriver, CApiLoadFails) {
  disc_executable_t *exe = nullptr;
  EXPECT_EQ(disc_executable_load(DISC_FIXTURE_CUDA, &exe),
            DISC_STATUS_LOAD_FAILED);
  EXPECT_EQ(exe, nullptr);
  EXPECT_NE(std::string(disc_last_error_message()).find("no CUDA device"),
            std::string::npos);
}

TEST_F(NoCudaDriver, DiscRunExitsTwo) {
  std::string cmd = std::string(DISC_RUN_PATH) + " " + DISC_FIXTURE_CUDA +
                    " --input x=8:random 2>&1";
  FILE *pipe = popen(cmd.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string output;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, pipe)) > 0)
    output.append(buf, n);
  int status = pclose(pipe);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 2) << output;
  EXPECT_NE(output.find("no CUDA device"), std::string::npos) << output;
}

} // namespace
