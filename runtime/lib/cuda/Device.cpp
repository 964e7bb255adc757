//===- Device.cpp - One CUDA device of a session --------------------------===//

#include "Device.h"

#include "disc/runtime/abi.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace disc::runtime::cuda {

bool probeDevice(std::string *error) {
  std::string why;
  const DriverApi *api = loadDriver(&why);
  if (!api) {
    *error = "no CUDA device: " + why;
    return false;
  }
  int count = 0;
  if (CUresult rc = api->deviceGetCount(&count); rc != kCudaSuccess) {
    *error = "no CUDA device: " + errorText(*api, "cuDeviceGetCount", rc);
    return false;
  }
  if (count <= 0) {
    *error = "no CUDA device: the driver reports none";
    return false;
  }
  return true;
}

std::unique_ptr<Device> Device::open(int ordinal, std::string *error) {
  std::string why;
  const DriverApi *api = loadDriver(&why);
  if (!api) {
    *error = "no CUDA device: " + why;
    return nullptr;
  }
  return open(*api, ordinal, error);
}

std::unique_ptr<Device> Device::open(const DriverApi &api, int ordinal,
                                     std::string *error) {
  int count = 0;
  if (CUresult rc = api.deviceGetCount(&count); rc != kCudaSuccess) {
    *error = "no CUDA device: " + errorText(api, "cuDeviceGetCount", rc);
    return nullptr;
  }
  if (count <= ordinal) {
    *error = "no CUDA device: the driver reports " + std::to_string(count) +
             " device(s), device " + std::to_string(ordinal) + " was requested";
    return nullptr;
  }
  std::unique_ptr<Device> dev(new Device(api));
  if (CUresult rc = api.deviceGet(&dev->device_, ordinal); rc != kCudaSuccess) {
    *error = "no CUDA device: " + errorText(api, "cuDeviceGet", rc);
    return nullptr;
  }
  char name[256] = {0};
  if (api.deviceGetName(name, sizeof name - 1, dev->device_) == kCudaSuccess)
    dev->name_ = name;
  if (CUresult rc = api.primaryCtxRetain(&dev->context_, dev->device_);
      rc != kCudaSuccess) {
    *error =
        "no CUDA device: " + errorText(api, "cuDevicePrimaryCtxRetain", rc);
    return nullptr;
  }
  CUresult rc = api.ctxSetCurrent(dev->context_);
  if (rc == kCudaSuccess)
    rc = api.streamCreate(&dev->stream_, /*CU_STREAM_NON_BLOCKING=*/1);
  if (rc != kCudaSuccess) {
    *error = "CUDA device " + std::to_string(ordinal) + ": " +
             errorText(api, "cuStreamCreate", rc);
    dev->stream_ = nullptr;
    return nullptr; // The destructor releases the context.
  }
  return dev;
}

Device::~Device() {
  if (!context_)
    return;
  api_.ctxSetCurrent(context_);
  if (stream_)
    api_.streamSynchronize(stream_);
  for (auto &entry : modules_)
    api_.moduleUnload(entry.second);
  for (auto &entry : constants_)
    api_.memFree(entry.second.first);
  for (auto &entry : scratch_)
    api_.memFree(entry.second.first);
  for (CUevent e : events_)
    api_.eventDestroy(e);
  if (stream_)
    api_.streamDestroy(stream_);
  api_.primaryCtxRelease(device_);
}

void *Device::allocate(int64_t bytes, bool *outOfMemory, std::string *error) {
  *outOfMemory = false;
  std::lock_guard<std::mutex> lock(mutex_);
  api_.ctxSetCurrent(context_);
  CUdeviceptr ptr = 0;
  // cuMemAlloc refuses 0 bytes; an empty tensor still gets a distinct,
  // freeable pointer.
  size_t n = bytes > 0 ? static_cast<size_t>(bytes) : 1;
  // Stream-ordered when the driver has it: the block may be one a queued
  // kernel still reads until the free before it on the stream.
  CUresult rc = api_.memAllocAsync ? api_.memAllocAsync(&ptr, n, stream_)
                                   : api_.memAlloc(&ptr, n);
  if (rc != kCudaSuccess) {
    *outOfMemory = rc == kCudaErrorOutOfMemory;
    *error =
        errorText(api_, api_.memAllocAsync ? "cuMemAllocAsync" : "cuMemAlloc",
                  rc) +
        " for " + std::to_string(bytes) + " bytes";
    return nullptr;
  }
  ranges_[static_cast<uintptr_t>(ptr)] = static_cast<int64_t>(n);
  return reinterpret_cast<void *>(static_cast<uintptr_t>(ptr));
}

void Device::release(void *ptr) {
  if (!ptr)
    return;
  std::lock_guard<std::mutex> lock(mutex_);
  api_.ctxSetCurrent(context_);
  auto dptr = static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(ptr));
  ranges_.erase(static_cast<uintptr_t>(dptr));
  // Kernels reading the buffer may still be queued on the stream: a
  // stream-ordered free waits for them on the device, a plain one on the
  // host.
  if (api_.memFreeAsync) {
    api_.memFreeAsync(dptr, stream_);
    return;
  }
  api_.streamSynchronize(stream_);
  api_.memFree(dptr);
}

int32_t Device::copy(void *dst, const void *src, int64_t bytes,
                     std::string *error) {
  if (bytes <= 0)
    return 0;
  std::lock_guard<std::mutex> lock(mutex_);
  api_.ctxSetCurrent(context_);
  bool fromHost = isDeviceLocked(dst) && !isDeviceLocked(src);
  if (fromHost)
    hostCopyBytes_ += (bytes + 15) & ~int64_t(15);
  if (capturing_ && fromHost) {
    // Host to device during a capture: from a snapshot the graph keeps.
    int64_t at = (stagingUsed_ + 15) & ~int64_t(15);
    if (!staging_ || at + bytes > stagingBytes_) {
      stagingNeeded_ = std::max(stagingNeeded_, 2 * (at + bytes));
      *error = "graph capture: " + std::to_string(bytes) +
               " bytes copied from the host exceed the staging buffer of " +
               std::to_string(stagingBytes_) + " bytes";
      return 4;
    }
    std::memcpy(staging_ + at, src, static_cast<size_t>(bytes));
    stagingUsed_ = at + bytes;
    src = staging_ + at;
  }
  CUresult rc = api_.memcpyAsync(
      static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(dst)),
      static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(src)),
      static_cast<size_t>(bytes), stream_);
  if (rc != kCudaSuccess) {
    *error = errorText(api_, "cuMemcpyAsync", rc) + " (" +
             std::to_string(bytes) + " bytes)";
    return 4;
  }
  return 0;
}

void *Device::allocateHost(int64_t bytes) {
  size_t n = bytes > 0 ? static_cast<size_t>(bytes) : 1;
  if (!api_.memAllocHost)
    return std::malloc(n);
  std::lock_guard<std::mutex> lock(mutex_);
  api_.ctxSetCurrent(context_);
  void *p = nullptr;
  return api_.memAllocHost(&p, n) == kCudaSuccess ? p : nullptr;
}

void Device::releaseHost(void *ptr) {
  if (!ptr)
    return;
  if (!api_.memFreeHost) {
    std::free(ptr);
    return;
  }
  std::lock_guard<std::mutex> lock(mutex_);
  api_.ctxSetCurrent(context_);
  api_.memFreeHost(ptr);
}

int32_t Device::synchronize(std::string *error) {
  std::lock_guard<std::mutex> lock(mutex_);
  api_.ctxSetCurrent(context_);
  if (CUresult rc = api_.streamSynchronize(stream_); rc != kCudaSuccess) {
    *error = errorText(api_, "cuStreamSynchronize", rc);
    return 4;
  }
  return 0;
}

CUfunction Device::function(const void *image, const char *kernel,
                            std::string *error) {
  auto key = std::make_pair(image, std::string(kernel));
  if (auto it = functions_.find(key); it != functions_.end())
    return it->second;
  CUmodule module = nullptr;
  if (auto it = modules_.find(image); it != modules_.end()) {
    module = it->second;
  } else {
    if (CUresult rc = api_.moduleLoadData(&module, image); rc != kCudaSuccess) {
      *error = "kernel '" + std::string(kernel) +
               "': " + errorText(api_, "cuModuleLoadData", rc);
      return nullptr;
    }
    modules_.emplace(image, module);
    loadOrder_.push_back(image);
  }
  CUfunction fn = nullptr;
  if (CUresult rc = api_.moduleGetFunction(&fn, module, kernel);
      rc != kCudaSuccess) {
    *error = "kernel '" + std::string(kernel) +
             "': " + errorText(api_, "cuModuleGetFunction", rc);
    return nullptr;
  }
  functions_.emplace(std::move(key), fn);
  return fn;
}

int32_t Device::launch(const void *image, const char *kernel,
                       const int64_t grid[3], const int64_t block[3],
                       int32_t sharedBytes, void **params, std::string *error) {
  if (!image || !kernel) {
    *error = "kernel launch without a kernel image";
    return 4;
  }
  for (int i = 0; i < 3; ++i)
    if (grid[i] <= 0 || block[i] <= 0)
      return 0; // Nothing to do: an empty tensor.
  bool tooLarge =
      grid[0] >= (int64_t(1) << 31) || grid[1] >= (int64_t(1) << 16) ||
      grid[2] >= (int64_t(1) << 16) || block[0] * block[1] * block[2] > 1024;
  if (tooLarge) {
    *error = "kernel '" + std::string(kernel) + "': grid (" +
             std::to_string(grid[0]) + ", " + std::to_string(grid[1]) + ", " +
             std::to_string(grid[2]) + ") x block (" +
             std::to_string(block[0]) + ", " + std::to_string(block[1]) + ", " +
             std::to_string(block[2]) + ") exceeds the CUDA limits";
    return 1;
  }
  std::lock_guard<std::mutex> lock(mutex_);
  api_.ctxSetCurrent(context_);
  CUfunction fn = function(image, kernel, error);
  if (!fn)
    return 4;
  int64_t before = timing_ ? recordEventLocked() : -1;
  CUresult rc = api_.launchKernel(
      fn, static_cast<unsigned>(grid[0]), static_cast<unsigned>(grid[1]),
      static_cast<unsigned>(grid[2]), static_cast<unsigned>(block[0]),
      static_cast<unsigned>(block[1]), static_cast<unsigned>(block[2]),
      static_cast<unsigned>(sharedBytes), stream_, params, nullptr);
  if (before >= 0 && rc == kCudaSuccess) {
    int64_t after = recordEventLocked();
    if (after >= 0)
      brackets_.push_back({kernel, /*library=*/false, before, after});
  }
  if (rc != kCudaSuccess) {
    *error = "kernel '" + std::string(kernel) +
             "': " + errorText(api_, "cuLaunchKernel", rc);
    return 4;
  }
  return 0;
}

int64_t Device::recordEventLocked() {
  if (eventsUsed_ == events_.size()) {
    CUevent e = nullptr;
    if (api_.eventCreate(&e, 0) != kCudaSuccess) {
      timing_ = false;
      return -1;
    }
    events_.push_back(e);
  }
  if (api_.eventRecord(events_[eventsUsed_], stream_) != kCudaSuccess) {
    timing_ = false;
    return -1;
  }
  return static_cast<int64_t>(eventsUsed_++);
}

bool Device::startTiming() {
  std::lock_guard<std::mutex> lock(mutex_);
  timing_ = false;
  brackets_.clear();
  eventsUsed_ = 0;
  if (!api_.eventCreate || capturing_)
    return false;
  api_.ctxSetCurrent(context_);
  timing_ = true;
  return recordEventLocked() == 0;
}

int64_t Device::timedBegin() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!timing_)
    return -1;
  api_.ctxSetCurrent(context_);
  int64_t ev = recordEventLocked();
  if (ev < 0)
    return -1;
  brackets_.push_back({"", false, ev, -1});
  return static_cast<int64_t>(brackets_.size()) - 1;
}

void Device::timedEnd(int64_t index, const std::string &name, bool library) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!timing_ || index < 0 || index >= static_cast<int64_t>(brackets_.size()))
    return;
  api_.ctxSetCurrent(context_);
  Bracket &b = brackets_[index];
  b.name = name;
  b.library = library;
  b.end = recordEventLocked();
}

std::vector<Device::TimedCall> Device::finishTiming(std::string *error) {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<TimedCall> calls;
  bool wasTiming = timing_;
  timing_ = false;
  if (!wasTiming || eventsUsed_ == 0)
    return calls;
  api_.ctxSetCurrent(context_);
  if (CUresult rc = api_.eventSynchronize(events_[eventsUsed_ - 1]);
      rc != kCudaSuccess) {
    *error = errorText(api_, "cuEventSynchronize", rc);
    return calls;
  }
  for (const Bracket &b : brackets_) {
    if (b.end < 0)
      continue;
    float start = 0, duration = 0;
    if (CUresult rc =
            api_.eventElapsedTime(&start, events_[0], events_[b.begin]);
        rc != kCudaSuccess) {
      *error = errorText(api_, "cuEventElapsedTime", rc);
      return {};
    }
    if (CUresult rc =
            api_.eventElapsedTime(&duration, events_[b.begin], events_[b.end]);
        rc != kCudaSuccess) {
      *error = errorText(api_, "cuEventElapsedTime", rc);
      return {};
    }
    calls.push_back({b.name, b.library, start * 1e3, duration * 1e3});
  }
  brackets_.clear();
  return calls;
}

void Device::makeCurrent() {
  std::lock_guard<std::mutex> lock(mutex_);
  api_.ctxSetCurrent(context_);
}

CUdeviceptr Device::checkWordOf(const void *image) {
  auto mod = modules_.find(image);
  if (mod == modules_.end())
    return 0; // Never launched (empty grids): no kernel ran.
  auto it = checkWords_.find(image);
  if (it == checkWords_.end()) {
    CUdeviceptr ptr = 0;
    size_t bytes = 0;
    if (!api_.moduleGetGlobal ||
        api_.moduleGetGlobal(&ptr, &bytes, mod->second,
                             DISC_CHECK_ERROR_SYMBOL) != kCudaSuccess ||
        bytes < 5 * sizeof(int64_t))
      ptr = 0;
    it = checkWords_.emplace(image, ptr).first;
  }
  return it->second;
}

int32_t Device::readAllCheckWords(bool endOfRun, int64_t words[5],
                                  std::string *error) {
  constexpr size_t kBytes = 5 * sizeof(int64_t);
  // The distinct words, in the order their modules were first launched.
  std::vector<CUdeviceptr> addresses;
  for (const void *image : loadOrder_)
    if (CUdeviceptr ptr = checkWordOf(image);
        ptr &&
        std::find(addresses.begin(), addresses.end(), ptr) == addresses.end())
      addresses.push_back(ptr);
  if (endOfRun && addresses.empty())
    return 0;
  api_.ctxSetCurrent(context_);
  std::vector<int64_t> host(5 * addresses.size(), 0);
  CUresult rc = kCudaSuccess;
  for (size_t k = 0; k < addresses.size() && rc == kCudaSuccess; ++k)
    rc = api_.memcpyAsync(
        static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(&host[5 * k])),
        addresses[k], kBytes, stream_);
  if (rc == kCudaSuccess)
    rc = api_.streamSynchronize(stream_);
  if (rc != kCudaSuccess) {
    *error = errorText(api_, "reading the run-time check words", rc);
    return 4;
  }
  for (size_t k = 0; k < addresses.size(); ++k) {
    if (host[5 * k] == 0)
      continue;
    std::copy(&host[5 * k], &host[5 * k] + 5, words);
    // Cleared in stream order (before any later kernel): no wait.
    static const int64_t zeros[5] = {0, 0, 0, 0, 0};
    rc = api_.memcpyAsync(
        addresses[k],
        static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(zeros)), kBytes,
        stream_);
    if (rc != kCudaSuccess) {
      *error = errorText(api_, "clearing the run-time check word", rc);
      return 4;
    }
    return 1;
  }
  return 0;
}

int32_t Device::readCheckWord(const void *image, int64_t words[5],
                              std::string *error) {
  constexpr size_t kBytes = 5 * sizeof(int64_t);
  std::lock_guard<std::mutex> lock(mutex_);
  // The read at the end of a captured run waits for the stream, which a
  // capture does not permit: the caller reads after launching the graph.
  if (capturing_ && image == DISC_CHECK_END_OF_RUN) {
    checkDeferred_ = true;
    return 0;
  }
  if (image == DISC_CHECK_ALL_MODULES || image == DISC_CHECK_END_OF_RUN)
    return readAllCheckWords(image == DISC_CHECK_END_OF_RUN, words, error);
  CUdeviceptr word = checkWordOf(image);
  if (word == 0)
    return 0;
  api_.ctxSetCurrent(context_);
  auto host = static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(words));
  CUresult rc = api_.memcpyAsync(host, word, kBytes, stream_);
  if (rc == kCudaSuccess)
    rc = api_.streamSynchronize(stream_);
  if (rc != kCudaSuccess) {
    *error = errorText(api_, "reading the run-time check word", rc);
    return 4;
  }
  if (words[0] == 0)
    return 0;
  static const int64_t zeros[5] = {0, 0, 0, 0, 0};
  rc = api_.memcpyAsync(
      word, static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(zeros)),
      kBytes, stream_);
  if (rc == kCudaSuccess)
    rc = api_.streamSynchronize(stream_);
  if (rc != kCudaSuccess) {
    *error = errorText(api_, "clearing the run-time check word", rc);
    return 4;
  }
  return 1;
}

int32_t Device::constant(const void *host, int64_t bytes, void **device,
                         std::string *error) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (auto it = constants_.find(host);
      it != constants_.end() && it->second.second >= bytes) {
    *device =
        reinterpret_cast<void *>(static_cast<uintptr_t>(it->second.first));
    return 0;
  }
  api_.ctxSetCurrent(context_);
  CUdeviceptr ptr = 0;
  CUresult rc = api_.memAlloc(&ptr, bytes > 0 ? static_cast<size_t>(bytes) : 1);
  if (rc != kCudaSuccess) {
    *error = "device copy of a constant: " + errorText(api_, "cuMemAlloc", rc) +
             " (" + std::to_string(bytes) + " bytes)";
    return rc == kCudaErrorOutOfMemory ? 2 : 4;
  }
  if (bytes > 0)
    rc = api_.memcpyAsync(
        ptr, static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(host)),
        static_cast<size_t>(bytes), stream_);
  if (rc != kCudaSuccess) {
    api_.memFree(ptr);
    *error =
        "device copy of a constant: " + errorText(api_, "cuMemcpyAsync", rc);
    return 4;
  }
  if (auto it = constants_.find(host); it != constants_.end()) {
    ++generation_;
    ranges_.erase(static_cast<uintptr_t>(it->second.first));
    api_.memFree(it->second.first);
    constants_.erase(it);
  }
  constants_.emplace(host, std::make_pair(ptr, bytes));
  ranges_[static_cast<uintptr_t>(ptr)] = bytes > 0 ? bytes : 1;
  *device = reinterpret_cast<void *>(static_cast<uintptr_t>(ptr));
  return 0;
}

int32_t Device::scratch(int64_t site, int64_t bytes, void **device,
                        std::string *error) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = scratch_.find(site);
  if (it == scratch_.end() || it->second.second < bytes) {
    api_.ctxSetCurrent(context_);
    CUdeviceptr ptr = 0;
    CUresult rc =
        api_.memAlloc(&ptr, bytes > 0 ? static_cast<size_t>(bytes) : 1);
    if (rc != kCudaSuccess) {
      *error = "device slot of a small buffer: " +
               errorText(api_, "cuMemAlloc", rc) + " (" +
               std::to_string(bytes) + " bytes)";
      return rc == kCudaErrorOutOfMemory ? 2 : 4;
    }
    if (it != scratch_.end()) {
      ++generation_;
      ranges_.erase(static_cast<uintptr_t>(it->second.first));
      api_.memFree(it->second.first);
      scratch_.erase(it);
    }
    it = scratch_.emplace(site, std::make_pair(ptr, bytes)).first;
    ranges_[static_cast<uintptr_t>(ptr)] = bytes > 0 ? bytes : 1;
  }
  *device = reinterpret_cast<void *>(static_cast<uintptr_t>(it->second.first));
  return 0;
}

bool Device::supportsGraphs() const {
  return api_.streamBeginCapture && api_.memAllocAsync;
}

bool Device::isDeviceLocked(const void *p) const {
  auto addr = reinterpret_cast<uintptr_t>(p);
  auto it = ranges_.upper_bound(addr);
  if (it == ranges_.begin())
    return false;
  --it;
  return addr - it->first < static_cast<uintptr_t>(it->second);
}

int64_t Device::hostCopyBytes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return hostCopyBytes_;
}

int64_t Device::stagingHint() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stagingNeeded_;
}

int32_t Device::beginCapture(void *staging, int64_t stagingBytes,
                             std::string *error) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!api_.streamBeginCapture || capturing_) {
    *error = "stream capture is not available";
    return 4;
  }
  api_.ctxSetCurrent(context_);
  if (CUresult rc =
          api_.streamBeginCapture(stream_, kCuStreamCaptureModeThreadLocal);
      rc != kCudaSuccess) {
    *error = errorText(api_, "cuStreamBeginCapture", rc);
    return 4;
  }
  capturing_ = true;
  checkDeferred_ = false;
  staging_ = static_cast<char *>(staging);
  stagingBytes_ = staging ? stagingBytes : 0;
  stagingUsed_ = 0;
  return 0;
}

int32_t Device::endCapture(CUgraphExec *exec, std::string *error) {
  *exec = nullptr;
  std::lock_guard<std::mutex> lock(mutex_);
  if (!capturing_) {
    *error = "no stream capture in progress";
    return 4;
  }
  capturing_ = false;
  staging_ = nullptr;
  stagingBytes_ = stagingUsed_ = 0;
  api_.ctxSetCurrent(context_);
  CUgraph graph = nullptr;
  CUresult rc = api_.streamEndCapture(stream_, &graph);
  if (rc == kCudaErrorStreamCaptureInvalidated ||
      rc == kCudaErrorStreamCaptureUnsupported) {
    if (graph)
      api_.graphDestroy(graph);
    return 1;
  }
  if (rc != kCudaSuccess || !graph) {
    *error = errorText(api_, "cuStreamEndCapture", rc);
    return 4;
  }
  rc = api_.graphInstantiate(exec, graph,
                             kCuGraphInstantiateFlagAutoFreeOnLaunch);
  // The executable graph is independent of the graph it was made from.
  api_.graphDestroy(graph);
  if (rc != kCudaSuccess) {
    *exec = nullptr;
    *error = errorText(api_, "cuGraphInstantiateWithFlags", rc);
    return 4;
  }
  return 0;
}

bool Device::capturing() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return capturing_;
}

bool Device::checkDeferred() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return checkDeferred_;
}

int32_t Device::launchGraph(CUgraphExec exec, std::string *error) {
  std::lock_guard<std::mutex> lock(mutex_);
  api_.ctxSetCurrent(context_);
  if (CUresult rc = api_.graphLaunch(exec, stream_); rc != kCudaSuccess) {
    *error = errorText(api_, "cuGraphLaunch", rc);
    return 4;
  }
  return 0;
}

void Device::destroyGraph(CUgraphExec exec) {
  if (!exec)
    return;
  std::lock_guard<std::mutex> lock(mutex_);
  api_.ctxSetCurrent(context_);
  api_.graphExecDestroy(exec);
}

int64_t Device::addressGeneration() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return generation_;
}

int64_t Device::constantBytes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  int64_t total = 0;
  for (const auto &entry : constants_)
    total += entry.second.second;
  return total;
}

int64_t Device::numModules() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return static_cast<int64_t>(modules_.size());
}

} // namespace disc::runtime::cuda
