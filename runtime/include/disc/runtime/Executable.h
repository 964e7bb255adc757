//===- Executable.h - A loaded model.so -------------------------*- C++ -*-===//
//
// `Executable::load` dlopens a compiled model (docs/runtime-abi.md),
// checks its ABI version and parses its signature; the predictions of its
// peak memory at given input shapes need no run (docs/memory.md).
//
// Part of the C++ API; "disc/runtime/Runtime.h" includes every part.
//
//===----------------------------------------------------------------------===//
#ifndef DISC_RUNTIME_EXECUTABLE_H
#define DISC_RUNTIME_EXECUTABLE_H

#include "disc/runtime/Signature.h"
#include "disc/runtime/Status.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace disc {

/// A loaded `model.so`: the dlopen handle, its entry points and its parsed
/// signature. Thread-safety: immutable after `load`; share it freely
/// (through the shared_ptr) between threads and sessions. The library is
/// dlclose'd when the last reference goes away.
class Executable {
public:
  /// dlopen(path, RTLD_LOCAL | RTLD_NOW), checks `disc_model_abi_version()
  /// == DISC_MODEL_ABI_VERSION` and parses `disc_model_signature()`. A CUDA
  /// model also needs the CUDA driver and a device. Errors: LoadFailed with
  /// the dlerror text, the missing symbol, the bad version, the JSON error,
  /// "no CUDA device: <reason>", or a state input whose initial value is
  /// not exported or smaller than the state.
  static Status load(const std::string &path,
                     std::shared_ptr<const Executable> *out);

  ~Executable();
  Executable(const Executable &) = delete;
  Executable &operator=(const Executable &) = delete;

  const Signature &signature() const { return signature_; }
  /// The raw signature JSON as returned by the model.
  const std::string &signatureJson() const { return signatureJson_; }
  const std::string &path() const { return path_; }

  /// Predicts the peak bytes live through the context allocator when the
  /// model runs on inputs of these shapes (one per input, signature order;
  /// for a model with state, one per run input is enough:
  /// Signature::bindDims), without running it: the max of
  /// `signature().memory.peakBytes` with the dims bound (docs/memory.md). On
  /// success `*bytes` is the peak, or -1 when the model's peak cannot be
  /// predicted before running
  /// (`signature().memory.reason` says why, e.g. a data-dependent size) or
  /// an expression of the model cannot be evaluated at these shapes
  /// (`*unpredictableReason`, when given, says why in both cases).
  /// Errors: InvalidArgument for shapes the model rejects (same messages
  /// as Session::run); Internal when oneDNN fails.
  /// Library calls (oneDNN) add their temporaries (scratchpad, reordered
  /// operands) at their program points: their primitives are created (not
  /// run) for these shapes on `numThreads` threads (0 = the OpenMP
  /// default), which must match the session's SessionOptions::num_threads.
  Status predictPeakBytes(const std::vector<std::vector<int64_t>> &inputShapes,
                          int64_t *bytes) const;
  Status predictPeakBytes(const std::vector<std::vector<int64_t>> &inputShapes,
                          int64_t *bytes, int32_t numThreads) const;
  Status predictPeakBytes(const std::vector<std::vector<int64_t>> &inputShapes,
                          int64_t *bytes, int32_t numThreads,
                          std::string *unpredictableReason) const;

  /// The lowest peak a run on these shapes can reach by evicting
  /// rematerialization candidates (the lowest of evicting none, all, and a
  /// greedy descent; docs/memory.md). Equals the predicted peak for a model
  /// without candidates; -1 when the peak cannot
  /// be predicted. A memory limit below it cannot be met. Errors as
  /// predictPeakBytes.
  Status
  predictMinimumPeakBytes(const std::vector<std::vector<int64_t>> &inputShapes,
                          int64_t *bytes) const;

  /// The model entry point (`disc_model_run_fn` from abi.h).
  void *runFunction() const { return runFn_; }
  /// The initial value of state input `index` (into `signature().inputs`):
  /// the address, in model.so, of the data symbol its `init` names
  /// (numElements * dtypeSize bytes, row-major; `load` checks that it is
  /// exported and, where the symbol table gives its size, large enough).
  /// Null for a state that starts at zero, for any other input and for an
  /// index out of range.
  const void *stateInitValue(int64_t index) const;

private:
  Executable() = default;
  static Status loadImpl(const std::string &path,
                         std::shared_ptr<const Executable> *out);
  std::string path_;
  void *handle_ = nullptr;
  void *runFn_ = nullptr;
  /// Per input: stateInitValue.
  std::vector<const void *> stateInit_;
  std::string signatureJson_;
  Signature signature_;
};

} // namespace disc

#endif // DISC_RUNTIME_EXECUTABLE_H
