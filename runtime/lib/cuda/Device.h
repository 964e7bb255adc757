//===- Device.h - One CUDA device of a session: memory, stream, kernels ---===//
//
// A session that runs a CUDA model owns one Device: the primary context of
// device 0, one stream on which every copy and kernel of the session runs
// in order, and the modules (cubins embedded in model.so) loaded on first
// launch. Allocation bookkeeping (tracked peak, memory limit) stays in the
// session, which calls `allocate`/`release` exactly where the CPU path
// calls posix_memalign/free, so both devices count the same bytes.
//
// Thread safety: calls are serialized by an internal mutex.
//
//===----------------------------------------------------------------------===//
#ifndef DISC_RUNTIME_LIB_CUDA_DEVICE_H
#define DISC_RUNTIME_LIB_CUDA_DEVICE_H

#include "Driver.h"

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#pragma GCC visibility push(hidden)
namespace disc::runtime::cuda {

/// True when the driver loads and reports at least one device; else false
/// with `*error` = "no CUDA device: <reason>".
bool probeDevice(std::string *error);

class Device {
public:
  /// Opens device `ordinal` through `api` (primary context, one stream).
  /// Returns null and sets `*error` when there is none: "no CUDA device:
  /// <reason>" (no driver, no device, or a driver error while opening it).
  static std::unique_ptr<Device> open(const DriverApi &api, int ordinal,
                                      std::string *error);
  /// Same, loading the driver with `loadDriver` first.
  static std::unique_ptr<Device> open(int ordinal, std::string *error);

  ~Device();
  Device(const Device &) = delete;
  Device &operator=(const Device &) = delete;

  /// Device memory of `bytes` bytes (at least 256-byte aligned, as
  /// cuMemAlloc); null when the driver refuses, with `*outOfMemory` true for
  /// CUDA_ERROR_OUT_OF_MEMORY and `*error` set.
  void *allocate(int64_t bytes, bool *outOfMemory, std::string *error);
  /// Frees memory from `allocate` (after the stream has drained).
  void release(void *ptr);
  /// Copies `bytes` bytes on the session stream; `dst`/`src` may be host or
  /// device pointers (unified addressing). Returns 0 or 4 with `*error`.
  int32_t copy(void *dst, const void *src, int64_t bytes, std::string *error);
  /// `bytes` of page-locked host memory (plain host memory when the driver
  /// has no cuMemAllocHost), for a buffer offloaded from the device; null
  /// when out of host memory. Free with `releaseHost`.
  void *allocateHost(int64_t bytes);
  void releaseHost(void *ptr);
  /// Waits for the stream. Returns 0 or 4 with `*error` (a kernel fault
  /// shows up here).
  int32_t synchronize(std::string *error);
  /// Launches `kernel` of the cubin `image` (loaded on first use and kept)
  /// on the stream with `params` as cuLaunchKernel's kernel parameters.
  /// A grid or block with a zero extent launches nothing (an empty tensor).
  /// Returns 0, 1 when the extents exceed the CUDA limits (grid x < 2^31,
  /// y, z < 2^16; block product <= 1024) or 4 when the driver fails, with
  /// `*error` naming the kernel.
  int32_t launch(const void *image, const char *kernel, const int64_t grid[3],
                 const int64_t block[3], int32_t sharedBytes, void **params,
                 std::string *error);

  /// The session stream, for the libraries that run on it (cuBLAS, cuDNN).
  CUstream stream() const { return stream_; }
  /// Makes the device's context current on the calling thread (the
  /// libraries run on the calling thread's current context).
  void makeCurrent();

  /// Run-time checks inside kernels (docs/cuda.md): after the launches of
  /// `image` were queued, waits for the stream, then reads the module's
  /// device error word `disc_check_error` (5 int64 words) into `words`
  /// and clears it. Returns 1 when a check failed (words[0] != 0), 0 when
  /// none did or the module has no such word (or was never loaded), or 4
  /// with `*error` when the driver fails. With DISC_CHECK_ALL_MODULES
  /// (abi.h): queues the reads of every loaded module's word, then waits
  /// once, and returns the first failure in first-launch order (cleared on
  /// the stream, without a wait); DISC_CHECK_END_OF_RUN: the same, but
  /// without a wait when no loaded module has a word.
  int32_t readCheckWord(const void *image, int64_t words[5],
                        std::string *error);
  /// Device copy of the constant data at `host` (`bytes` bytes), uploaded on
  /// the first request for `host` and kept until the device is closed; the
  /// same address for later requests. Returns 0, 2 when the device is out
  /// of memory or 4 when the driver fails, with `*error`.
  int32_t constant(const void *host, int64_t bytes, void **device,
                   std::string *error);
  /// Device slot `site` of at least `bytes` bytes (small buffers of a CUDA
  /// model), allocated on first use and kept until the device is closed.
  /// Returns 0, 2 when out of memory or 4, with `*error`.
  int32_t scratch(int64_t site, int64_t bytes, void **device,
                  std::string *error);
  /// Bytes of device memory held by constant copies.
  int64_t constantBytes() const;
  /// CUDA graphs (docs/cuda.md, "Graph replay"). Whether the driver has
  /// the graph functions and stream-ordered allocation (whose calls during
  /// a capture become the graph's memory nodes).
  bool supportsGraphs() const;
  /// Starts capturing the stream (CU_STREAM_CAPTURE_MODE_THREAD_LOCAL):
  /// launches, copies, allocations and frees on it are recorded, not run,
  /// until `endCapture`. A copy from host memory to the device during the
  /// capture (a value the host code computed, in a stack buffer that is
  /// gone when the graph is launched again) copies the bytes into
  /// `staging` (page-locked host memory of `stagingBytes` bytes, owned by
  /// the caller as long as the graph) and captures the copy from there:
  /// the graph replays the value of the captured run, which for a run at
  /// the same input shapes is the same (it depends on the shapes and the
  /// constants; a value read back from the device invalidates the capture
  /// anyway). When `staging` is too small that copy fails (the run fails
  /// and is redone plainly; `stagingHint` grows). Returns 0, or 4 with
  /// `*error`.
  int32_t beginCapture(void *staging, int64_t stagingBytes, std::string *error);
  /// The staging bytes a capture should have at least: the most an earlier
  /// capture ran out at, at least 4 KiB.
  int64_t stagingHint() const;
  /// Bytes copied from the host to the device so far, each copy rounded up
  /// to 16 bytes as in a staging buffer: the difference over a run is the
  /// staging its capture needs.
  int64_t hostCopyBytes() const;
  /// Ends the capture and instantiates the graph (with
  /// CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH). Returns 0 with
  /// `*exec` set; 1 when the capture was invalidated (the run made a call
  /// a capture does not permit, e.g. a synchronization to read device
  /// data), with `*exec` null; 4 with `*error` when the driver fails.
  int32_t endCapture(CUgraphExec *exec, std::string *error);
  /// Whether a capture is in progress.
  bool capturing() const;
  /// Whether the end-of-run read of the run-time check words
  /// (DISC_CHECK_END_OF_RUN) was asked for during the capture that ended
  /// last: it was not captured (it waits for the stream) and the caller
  /// reads the words after each launch of the graph.
  bool checkDeferred() const;
  /// Launches `exec` on the stream. Returns 0, or 4 with `*error`.
  int32_t launchGraph(CUgraphExec exec, std::string *error);
  /// Destroys `exec` (a launch in flight completes first, as CUDA does).
  void destroyGraph(CUgraphExec exec);
  /// Bumped whenever a constant copy or a small-buffer slot moves to a new
  /// address: graphs captured before baked the old one in.
  int64_t addressGeneration() const;

  /// Device times of a traced run's kernels and library calls
  /// (docs/cuda.md, "Kernel times"), measured with CUDA events on the
  /// session stream: `startTiming` records the start event; from then on
  /// each `launch`, and each `timedBegin`/`timedEnd` bracket (a library
  /// call, which may launch several kernels), records an event before and
  /// after its work; `finishTiming` waits for the stream and returns one
  /// entry per launch or bracket, in order. Times are microseconds: the
  /// start since the start event, the duration between the two events
  /// (CUDA events resolve about 0.5 µs). Events are created on first use
  /// and reused by later runs.
  struct TimedCall {
    /// The kernel's symbol, or the library call's name.
    std::string name;
    bool library = false;
    double startUs = 0, durationUs = 0;
  };
  /// Starts timing. False (nothing is timed) when the driver has no events,
  /// a capture is in progress, or the driver fails.
  bool startTiming();
  /// Opens a bracket; -1 when not timing.
  int64_t timedBegin();
  /// Closes bracket `index` (from timedBegin; -1 is ignored) for `name`.
  void timedEnd(int64_t index, const std::string &name, bool library);
  /// Stops timing and returns the calls; empty with `*error` set when the
  /// driver fails (a kernel fault shows up here as in `synchronize`).
  std::vector<TimedCall> finishTiming(std::string *error);

  /// Name of the device, e.g. "NVIDIA H100 80GB HBM3".
  const std::string &name() const { return name_; }
  /// Modules loaded so far (for tests).
  int64_t numModules() const;

private:
  Device(const DriverApi &api) : api_(api) {}
  /// The device address of the error word of loaded module `image`; 0
  /// when it has none or was never loaded. Caller holds `mutex_`.
  CUdeviceptr checkWordOf(const void *image);
  /// readCheckWord over every loaded module. Caller holds `mutex_`.
  int32_t readAllCheckWords(bool endOfRun, int64_t words[5],
                            std::string *error);
  /// Whether `p` lies in device memory this device allocated (buffers,
  /// constant copies, slots). Caller holds `mutex_`.
  bool isDeviceLocked(const void *p) const;
  /// Loads (or finds) the function; null with `*error` on failure.
  CUfunction function(const void *image, const char *kernel,
                      std::string *error);

  const DriverApi &api_;
  CUdevice device_ = 0;
  CUcontext context_ = nullptr;
  CUstream stream_ = nullptr;
  std::string name_;
  mutable std::mutex mutex_;
  std::map<const void *, CUmodule> modules_;
  /// The images of `modules_` in the order they were loaded.
  std::vector<const void *> loadOrder_;
  std::map<std::pair<const void *, std::string>, CUfunction> functions_;
  /// Device address of each loaded module's error word; 0 when it has none.
  std::map<const void *, CUdeviceptr> checkWords_;
  /// Constant copies: host address -> (device address, bytes).
  std::map<const void *, std::pair<CUdeviceptr, int64_t>> constants_;
  /// Small-buffer slots: site -> (device address, bytes).
  std::map<int64_t, std::pair<CUdeviceptr, int64_t>> scratch_;
  /// See addressGeneration().
  int64_t generation_ = 0;
  /// A capture is in progress; the last capture deferred the end-of-run
  /// check read.
  bool capturing_ = false;
  bool checkDeferred_ = false;
  /// Device memory this device allocated: start -> bytes.
  std::map<uintptr_t, int64_t> ranges_;
  /// The capture's staging buffer, its bytes and the bytes used; the most
  /// a capture needed.
  char *staging_ = nullptr;
  int64_t stagingBytes_ = 0, stagingUsed_ = 0;
  int64_t stagingNeeded_ = int64_t(4) << 10;
  /// See hostCopyBytes().
  int64_t hostCopyBytes_ = 0;
  /// Timing (startTiming): on; the event pool and how many this run used;
  /// per bracket its name, kind and its two events (indices into
  /// `events_`; end -1 while open).
  struct Bracket {
    std::string name;
    bool library = false;
    int64_t begin = -1, end = -1;
  };
  bool timing_ = false;
  std::vector<CUevent> events_;
  size_t eventsUsed_ = 0;
  std::vector<Bracket> brackets_;
  /// Records the next event of the pool on the stream; -1 when the driver
  /// fails (timing stops). Caller holds `mutex_`.
  int64_t recordEventLocked();
};

} // namespace disc::runtime::cuda
#pragma GCC visibility pop

#endif // DISC_RUNTIME_LIB_CUDA_DEVICE_H
