//===- Driver.h - CUDA driver API loaded at run time (dlopen) -------------===//
//
// The CUDA driver functions the runtime uses, as a table of function
// pointers filled from `libcuda.so.1` with dlopen/dlsym: libdisc_runtime has
// no link-time dependency on CUDA, and a machine without a GPU (or without
// the driver) builds and runs every CPU model. The types mirror cuda.h
// (CUDA 12/13 driver ABI) without including it, so the runtime builds
// without the toolkit. Tests pass a substitute table (docs/cuda.md).
//
//===----------------------------------------------------------------------===//
#ifndef DISC_RUNTIME_LIB_CUDA_DRIVER_H
#define DISC_RUNTIME_LIB_CUDA_DRIVER_H

#include <cstddef>
#include <cstdint>
#include <string>

// Internal to libdisc_runtime (docs/runtime-api.md, "Adding a public
// function"); the unit tests compile their own copy.
#pragma GCC visibility push(hidden)
namespace disc::runtime::cuda {

/// cuda.h's `CUresult` and the codes the runtime names.
using CUresult = int;
constexpr CUresult kCudaSuccess = 0;
constexpr CUresult kCudaErrorOutOfMemory = 2;
constexpr CUresult kCudaErrorNotInitialized = 3;
constexpr CUresult kCudaErrorNoDevice = 100;
/// A call that stream capture does not permit (a synchronization, a
/// synchronous allocation); it also invalidates the capture.
constexpr CUresult kCudaErrorStreamCaptureUnsupported = 900;
/// The capture was invalidated by an earlier unsupported call.
constexpr CUresult kCudaErrorStreamCaptureInvalidated = 901;
using CUdevice = int;
using CUdeviceptr = uint64_t; // 64-bit builds only, as cuda.h.
using CUcontext = void *;
using CUstream = void *;
using CUmodule = void *;
using CUfunction = void *;
using CUgraph = void *;
using CUgraphExec = void *;
using CUevent = void *;
/// cuda.h's CUstreamCaptureMode: CU_STREAM_CAPTURE_MODE_THREAD_LOCAL, under
/// which a call the capture does not permit fails when the capturing thread
/// makes it (and only then: other threads' sessions are not affected).
constexpr int kCuStreamCaptureModeThreadLocal = 1;
/// cuda.h's CUstreamCaptureStatus: CU_STREAM_CAPTURE_STATUS_ACTIVE.
constexpr int kCuStreamCaptureStatusActive = 1;
/// CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH: a launch first frees
/// the graph's allocations that are still live from the previous launch.
constexpr unsigned long long kCuGraphInstantiateFlagAutoFreeOnLaunch = 1;

/// Driver entry points, by their versioned symbol names in libcuda.so.1
/// (cuda.h maps e.g. cuMemAlloc to cuMemAlloc_v2). Every member is set in
/// a table returned by `loadDriver`.
struct DriverApi {
  CUresult (*init)(unsigned flags);                     // cuInit
  CUresult (*deviceGetCount)(int *count);               // cuDeviceGetCount
  CUresult (*deviceGet)(CUdevice *device, int ordinal); // cuDeviceGet
  CUresult (*deviceGetName)(char *name, int len, CUdevice d); // cuDeviceGetName
  CUresult (*primaryCtxRetain)(CUcontext *ctx, CUdevice d);
  CUresult (*primaryCtxRelease)(CUdevice d); // ..._v2
  CUresult (*ctxSetCurrent)(CUcontext ctx);  // cuCtxSetCurrent
  CUresult (*streamCreate)(CUstream *stream, unsigned flags);
  CUresult (*streamDestroy)(CUstream stream); // cuStreamDestroy_v2
  CUresult (*streamSynchronize)(CUstream stream);
  CUresult (*memAlloc)(CUdeviceptr *ptr, size_t bytes); // cuMemAlloc_v2
  CUresult (*memFree)(CUdeviceptr ptr);                 // cuMemFree_v2
  /// cuMemcpyAsync: direction inferred from unified addressing, so host
  /// pointers (inputs, outputs, constants) and device pointers both work.
  CUresult (*memcpyAsync)(CUdeviceptr dst, CUdeviceptr src, size_t bytes,
                          CUstream stream);
  CUresult (*moduleLoadData)(CUmodule *module, const void *image);
  CUresult (*moduleUnload)(CUmodule module);
  CUresult (*moduleGetFunction)(CUfunction *fn, CUmodule module,
                                const char *name);
  CUresult (*launchKernel)(CUfunction fn, unsigned gridX, unsigned gridY,
                           unsigned gridZ, unsigned blockX, unsigned blockY,
                           unsigned blockZ, unsigned sharedBytes,
                           CUstream stream, void **params, void **extra);
  CUresult (*getErrorString)(CUresult error, const char **text);
  /// cuModuleGetGlobal_v2: address and size of a module's global variable
  /// (the device error word of run-time checks). May be null in a
  /// substitute table: modules then have no such word.
  CUresult (*moduleGetGlobal)(CUdeviceptr *ptr, size_t *bytes, CUmodule module,
                              const char *name);
  /// cuMemAllocHost_v2 / cuMemFreeHost: page-locked host memory for
  /// offloaded buffers. Both null when the driver lacks them (a substitute
  /// driver): plain host memory then.
  CUresult (*memAllocHost)(void **ptr, size_t bytes) = nullptr;
  CUresult (*memFreeHost)(void *ptr) = nullptr;
  /// cuMemAllocAsync / cuMemFreeAsync (CUDA 11.2): stream-ordered
  /// allocation from the device's default memory pool, so that a free does
  /// not wait for the kernels still reading the buffer. Both null when the
  /// driver lacks them: cuMemAlloc, and a stream synchronization before
  /// each cuMemFree.
  CUresult (*memAllocAsync)(CUdeviceptr *ptr, size_t bytes,
                            CUstream stream) = nullptr;
  CUresult (*memFreeAsync)(CUdeviceptr ptr, CUstream stream) = nullptr;
  /// CUDA graphs (stream capture, CUDA 11.4 graph memory nodes): all set or
  /// all null (a driver without them: no graph replay, docs/cuda.md).
  /// cuStreamBeginCapture_v2(stream, CUstreamCaptureMode).
  CUresult (*streamBeginCapture)(CUstream stream, int mode) = nullptr;
  /// cuStreamEndCapture: the captured graph, or
  /// CUDA_ERROR_STREAM_CAPTURE_INVALIDATED (no graph).
  CUresult (*streamEndCapture)(CUstream stream, CUgraph *graph) = nullptr;
  /// cuStreamIsCapturing: `*status` a CUstreamCaptureStatus.
  CUresult (*streamIsCapturing)(CUstream stream, int *status) = nullptr;
  /// cuGraphInstantiateWithFlags.
  CUresult (*graphInstantiate)(CUgraphExec *exec, CUgraph graph,
                               unsigned long long flags) = nullptr;
  CUresult (*graphLaunch)(CUgraphExec exec, CUstream stream) = nullptr;
  CUresult (*graphExecDestroy)(CUgraphExec exec) = nullptr;
  CUresult (*graphDestroy)(CUgraph graph) = nullptr;
  /// Events, for the device times of a traced run's kernels and library
  /// calls (docs/cuda.md, "Kernel times"): all set or all null (a driver
  /// without them: the trace has no device times). cuEventCreate (flags
  /// 0: timing events), cuEventRecord on a stream, cuEventSynchronize,
  /// cuEventElapsedTime_v2 (else cuEventElapsedTime; milliseconds between
  /// two completed events), cuEventDestroy_v2.
  CUresult (*eventCreate)(CUevent *event, unsigned flags) = nullptr;
  CUresult (*eventRecord)(CUevent event, CUstream stream) = nullptr;
  CUresult (*eventSynchronize)(CUevent event) = nullptr;
  CUresult (*eventElapsedTime)(float *ms, CUevent start, CUevent end) = nullptr;
  CUresult (*eventDestroy)(CUevent event) = nullptr;
};

/// Name of the library `loadDriver` opens: $DISC_CUDA_DRIVER when set (a
/// substitute driver for tests, or a driver outside the loader path), else
/// "libcuda.so.1".
std::string driverLibraryName();

/// Loads the driver once per process and calls cuInit(0). Returns the
/// table, or null with `*error` saying why ("libcuda.so.1: cannot open
/// shared object file", "cuInit failed: CUDA_ERROR_NO_DEVICE ...").
/// Thread-safe; the library stays loaded until the process exits.
const DriverApi *loadDriver(std::string *error);

/// "cuMemAlloc failed: out of memory (CUresult 2)" for `what` and `code`,
/// using the driver's own text when it has one.
std::string errorText(const DriverApi &api, const char *what, CUresult code);

} // namespace disc::runtime::cuda
#pragma GCC visibility pop

#endif // DISC_RUNTIME_LIB_CUDA_DRIVER_H
