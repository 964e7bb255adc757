//===- Driver.cpp - dlopen of the CUDA driver API -------------------------===//

#include "Driver.h"

#include <cstdlib>
#include <dlfcn.h>
#include <mutex>

namespace disc::runtime::cuda {

std::string driverLibraryName() {
  const char *env = std::getenv("DISC_CUDA_DRIVER");
  return env && *env ? std::string(env) : std::string("libcuda.so.1");
}

std::string errorText(const DriverApi &api, const char *what, CUresult code) {
  const char *text = nullptr;
  if (api.getErrorString && api.getErrorString(code, &text) != kCudaSuccess)
    text = nullptr;
  std::string msg = std::string(what) + " failed: ";
  msg += text ? text : "unknown error";
  msg += " (CUresult " + std::to_string(code) + ")";
  return msg;
}

namespace {

/// Fills `api` from `handle`; returns the first missing symbol or null.
const char *bindSymbols(void *handle, DriverApi &api) {
  struct Entry {
    const char *name;
    void **slot;
  };
  const Entry entries[] = {
      {"cuInit", reinterpret_cast<void **>(&api.init)},
      {"cuDeviceGetCount", reinterpret_cast<void **>(&api.deviceGetCount)},
      {"cuDeviceGet", reinterpret_cast<void **>(&api.deviceGet)},
      {"cuDeviceGetName", reinterpret_cast<void **>(&api.deviceGetName)},
      {"cuDevicePrimaryCtxRetain",
       reinterpret_cast<void **>(&api.primaryCtxRetain)},
      {"cuDevicePrimaryCtxRelease_v2",
       reinterpret_cast<void **>(&api.primaryCtxRelease)},
      {"cuCtxSetCurrent", reinterpret_cast<void **>(&api.ctxSetCurrent)},
      {"cuStreamCreate", reinterpret_cast<void **>(&api.streamCreate)},
      {"cuStreamDestroy_v2", reinterpret_cast<void **>(&api.streamDestroy)},
      {"cuStreamSynchronize",
       reinterpret_cast<void **>(&api.streamSynchronize)},
      {"cuMemAlloc_v2", reinterpret_cast<void **>(&api.memAlloc)},
      {"cuMemFree_v2", reinterpret_cast<void **>(&api.memFree)},
      {"cuMemcpyAsync", reinterpret_cast<void **>(&api.memcpyAsync)},
      {"cuModuleLoadData", reinterpret_cast<void **>(&api.moduleLoadData)},
      {"cuModuleUnload", reinterpret_cast<void **>(&api.moduleUnload)},
      {"cuModuleGetFunction",
       reinterpret_cast<void **>(&api.moduleGetFunction)},
      {"cuLaunchKernel", reinterpret_cast<void **>(&api.launchKernel)},
      {"cuGetErrorString", reinterpret_cast<void **>(&api.getErrorString)},
      {"cuModuleGetGlobal_v2", reinterpret_cast<void **>(&api.moduleGetGlobal)},
  };
  for (const Entry &e : entries) {
    *e.slot = dlsym(handle, e.name);
    if (!*e.slot)
      return e.name;
  }
  // Optional: page-locked host memory (both or neither).
  api.memAllocHost = reinterpret_cast<CUresult (*)(void **, size_t)>(
      dlsym(handle, "cuMemAllocHost_v2"));
  api.memFreeHost =
      reinterpret_cast<CUresult (*)(void *)>(dlsym(handle, "cuMemFreeHost"));
  if (!api.memAllocHost || !api.memFreeHost)
    api.memAllocHost = nullptr, api.memFreeHost = nullptr;
  // Optional: stream-ordered allocation (both or neither).
  api.memAllocAsync =
      reinterpret_cast<CUresult (*)(CUdeviceptr *, size_t, CUstream)>(
          dlsym(handle, "cuMemAllocAsync"));
  api.memFreeAsync = reinterpret_cast<CUresult (*)(CUdeviceptr, CUstream)>(
      dlsym(handle, "cuMemFreeAsync"));
  if (!api.memAllocAsync || !api.memFreeAsync)
    api.memAllocAsync = nullptr, api.memFreeAsync = nullptr;
  // Optional: CUDA graphs (all or none).
  const Entry graphEntries[] = {
      {"cuStreamBeginCapture_v2",
       reinterpret_cast<void **>(&api.streamBeginCapture)},
      {"cuStreamEndCapture", reinterpret_cast<void **>(&api.streamEndCapture)},
      {"cuStreamIsCapturing",
       reinterpret_cast<void **>(&api.streamIsCapturing)},
      {"cuGraphInstantiateWithFlags",
       reinterpret_cast<void **>(&api.graphInstantiate)},
      {"cuGraphLaunch", reinterpret_cast<void **>(&api.graphLaunch)},
      {"cuGraphExecDestroy", reinterpret_cast<void **>(&api.graphExecDestroy)},
      {"cuGraphDestroy", reinterpret_cast<void **>(&api.graphDestroy)},
  };
  bool allGraph = true;
  for (const Entry &e : graphEntries)
    allGraph &= (*e.slot = dlsym(handle, e.name)) != nullptr;
  if (!allGraph)
    for (const Entry &e : graphEntries)
      *e.slot = nullptr;
  // Optional: events (all or none).
  api.eventElapsedTime =
      reinterpret_cast<CUresult (*)(float *, CUevent, CUevent)>(
          dlsym(handle, "cuEventElapsedTime_v2"));
  if (!api.eventElapsedTime)
    api.eventElapsedTime =
        reinterpret_cast<CUresult (*)(float *, CUevent, CUevent)>(
            dlsym(handle, "cuEventElapsedTime"));
  const Entry eventEntries[] = {
      {"cuEventCreate", reinterpret_cast<void **>(&api.eventCreate)},
      {"cuEventRecord", reinterpret_cast<void **>(&api.eventRecord)},
      {"cuEventSynchronize", reinterpret_cast<void **>(&api.eventSynchronize)},
      {"cuEventDestroy_v2", reinterpret_cast<void **>(&api.eventDestroy)},
  };
  bool allEvents = api.eventElapsedTime != nullptr;
  for (const Entry &e : eventEntries)
    allEvents &= (*e.slot = dlsym(handle, e.name)) != nullptr;
  if (!allEvents) {
    for (const Entry &e : eventEntries)
      *e.slot = nullptr;
    api.eventElapsedTime = nullptr;
  }
  return nullptr;
}

} // namespace

const DriverApi *loadDriver(std::string *error) {
  static std::once_flag once;
  static DriverApi api;
  static const DriverApi *loaded = nullptr;
  static std::string loadError;
  std::call_once(once, [] {
    std::string name = driverLibraryName();
    void *handle = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      const char *why = dlerror();
      loadError = why ? why : (name + ": cannot be loaded");
      return;
    }
    if (const char *missing = bindSymbols(handle, api)) {
      loadError = name + " has no symbol '" + missing + "'";
      return;
    }
    if (CUresult rc = api.init(0); rc != kCudaSuccess) {
      loadError = errorText(api, "cuInit", rc);
      return;
    }
    loaded = &api;
  });
  if (!loaded && error)
    *error = loadError;
  return loaded;
}

} // namespace disc::runtime::cuda
