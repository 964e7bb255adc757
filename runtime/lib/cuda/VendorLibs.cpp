//===- VendorLibs.cpp - dlopen of cuBLAS and cuDNN ------------------------===//

#include "VendorLibs.h"

#include <cstdlib>
#include <dlfcn.h>
#include <map>
#include <memory>
#include <mutex>

namespace disc::runtime::cuda {

namespace {

struct Entry {
  const char *name;
  void **slot;
};

template <typename T>
void **slot(T &fn) {
  return reinterpret_cast<void **>(&fn);
}

/// `base` as is, then under $CUDA_PATH/lib64 and /usr/local/cuda/lib64.
void addCandidates(std::vector<std::string> &out, const char *base) {
  out.push_back(base);
  if (const char *cuda = std::getenv("CUDA_PATH"); cuda && *cuda)
    out.push_back(std::string(cuda) + "/lib64/" + base);
  out.push_back(std::string("/usr/local/cuda/lib64/") + base);
}

std::vector<std::string> namesFrom(const char *envVar,
                                   std::initializer_list<const char *> bases) {
  const char *env = std::getenv(envVar);
  if (env && *env)
    return {env};
  std::vector<std::string> out;
  for (const char *b : bases)
    addCandidates(out, b);
  return out;
}

/// Opens the first of `names`; fills `entries`. Returns the handle, or null
/// with `*error` set ("<what> is not available: ...").
void *openFirst(const std::vector<std::string> &names, const char *what,
                const char *envVar, const Entry *entries, size_t numEntries,
                std::string *error) {
  std::string firstError;
  for (const std::string &name : names) {
    void *handle = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      if (firstError.empty()) {
        const char *why = dlerror();
        firstError = why ? why : name + ": cannot be loaded";
      }
      continue;
    }
    for (size_t i = 0; i < numEntries; ++i) {
      *entries[i].slot = dlsym(handle, entries[i].name);
      if (!*entries[i].slot) {
        *error = std::string(what) + " is not available: " + name +
                 " has no symbol '" + entries[i].name + "'";
        dlclose(handle);
        return nullptr;
      }
    }
    return handle;
  }
  *error = std::string(what) + " is not available: " +
           (firstError.empty() ? "no library name" : firstError) + " (set $" +
           envVar + " to its path)";
  return nullptr;
}

/// Per list of names: the loaded table or the error (loading is tried once).
template <typename Api>
struct Cache {
  std::mutex mutex;
  std::map<std::vector<std::string>,
           std::pair<std::unique_ptr<Api>, std::string>>
      loaded;
};

/// The table of `names` from `cache`, loading it on the first request for
/// these names: `entries(api)` lists the symbols of the table `api`, which
/// `openFirst` fills (`what`, `envVar` as there). Null with `*error` (when
/// not null) when the library is not available.
template <typename Api, typename Entries>
const Api *loadCached(Cache<Api> &cache, const std::vector<std::string> &names,
                      const char *what, const char *envVar, Entries entries,
                      std::string *error) {
  std::lock_guard<std::mutex> lock(cache.mutex);
  auto it = cache.loaded.find(names);
  if (it == cache.loaded.end()) {
    auto api = std::make_unique<Api>();
    std::vector<Entry> table = entries(*api);
    std::string why;
    if (!openFirst(names, what, envVar, table.data(), table.size(), &why))
      api.reset();
    it = cache.loaded.emplace(names, std::make_pair(std::move(api), why)).first;
  }
  if (!it->second.first && error)
    *error = it->second.second;
  return it->second.first.get();
}

} // namespace

std::vector<std::string> blasLibraryNames() {
  return namesFrom("DISC_CUBLAS_LIBRARY",
                   {"libcublas.so.13", "libcublas.so.12"});
}

std::vector<std::string> dnnLibraryNames() {
  return namesFrom("DISC_CUDNN_LIBRARY", {"libcudnn.so.9"});
}

const BlasApi *loadBlas(const std::vector<std::string> &names,
                        std::string *error) {
  static Cache<BlasApi> cache;
  auto entries = [](BlasApi &a) -> std::vector<Entry> {
    return {
        {"cublasCreate_v2", slot(a.create)},
        {"cublasDestroy_v2", slot(a.destroy)},
        {"cublasSetStream_v2", slot(a.setStream)},
        {"cublasSetWorkspace_v2", slot(a.setWorkspace)},
        {"cublasSetMathMode", slot(a.setMathMode)},
        {"cublasSgemmStridedBatched", slot(a.sgemmStridedBatched)},
        {"cublasGetStatusString", slot(a.getStatusString)},
    };
  };
  return loadCached(cache, names, "cuBLAS", "DISC_CUBLAS_LIBRARY", entries,
                    error);
}

const DnnApi *loadDnn(const std::vector<std::string> &names,
                      std::string *error) {
  static Cache<DnnApi> cache;
  auto entries = [](DnnApi &a) -> std::vector<Entry> {
    return {
        {"cudnnCreate", slot(a.create)},
        {"cudnnDestroy", slot(a.destroy)},
        {"cudnnSetStream", slot(a.setStream)},
        {"cudnnGetErrorString", slot(a.getErrorString)},
        {"cudnnCreateTensorDescriptor", slot(a.createTensorDescriptor)},
        {"cudnnDestroyTensorDescriptor", slot(a.destroyTensorDescriptor)},
        {"cudnnSetTensorNdDescriptor", slot(a.setTensorNdDescriptor)},
        {"cudnnCreateFilterDescriptor", slot(a.createFilterDescriptor)},
        {"cudnnDestroyFilterDescriptor", slot(a.destroyFilterDescriptor)},
        {"cudnnSetFilterNdDescriptor", slot(a.setFilterNdDescriptor)},
        {"cudnnCreateConvolutionDescriptor",
         slot(a.createConvolutionDescriptor)},
        {"cudnnDestroyConvolutionDescriptor",
         slot(a.destroyConvolutionDescriptor)},
        {"cudnnSetConvolutionNdDescriptor", slot(a.setConvolutionNdDescriptor)},
        {"cudnnSetConvolutionGroupCount", slot(a.setConvolutionGroupCount)},
        {"cudnnSetConvolutionMathType", slot(a.setConvolutionMathType)},
        {"cudnnGetConvolutionForwardAlgorithm_v7",
         slot(a.getConvolutionForwardAlgorithm)},
        {"cudnnGetConvolutionForwardWorkspaceSize",
         slot(a.getConvolutionForwardWorkspaceSize)},
        {"cudnnConvolutionForward", slot(a.convolutionForward)},
        {"cudnnGetConvolutionBackwardDataAlgorithm_v7",
         slot(a.getConvolutionBackwardDataAlgorithm)},
        {"cudnnConvolutionBackwardData", slot(a.convolutionBackwardData)},
        {"cudnnAddTensor", slot(a.addTensor)},
        {"cudnnCreateActivationDescriptor", slot(a.createActivationDescriptor)},
        {"cudnnDestroyActivationDescriptor",
         slot(a.destroyActivationDescriptor)},
        {"cudnnSetActivationDescriptor", slot(a.setActivationDescriptor)},
        {"cudnnActivationForward", slot(a.activationForward)},
    };
  };
  return loadCached(cache, names, "cuDNN", "DISC_CUDNN_LIBRARY", entries,
                    error);
}

} // namespace disc::runtime::cuda
