//===- Invocation.h - One call of a model: inputs in, outputs out -*- C++
//-*-===//
//
// What a Session does around `disc_model_run` (docs/runtime-abi.md): checks
// the inputs against the signature, builds the memref descriptors the model
// reads its inputs from (dense row-major, `allocated = aligned = data`,
// offset 0, on the session's Device) and the zeroed ones it fills with its
// outputs, and turns those into host Tensors afterwards (Device::fetchOutput,
// with the checks of what the model returned).
//
// A descriptor of rank r is 3 + 2r int64 words: allocated, aligned, offset,
// sizes[r], strides[r]; offset, sizes and strides in elements.
//
// Internal to libdisc_runtime (hidden).
//
//===----------------------------------------------------------------------===//
#ifndef DISC_RUNTIME_LIB_CORE_INVOCATION_H
#define DISC_RUNTIME_LIB_CORE_INVOCATION_H

#include "disc/runtime/Signature.h"
#include "disc/runtime/Status.h"
#include "disc/runtime/Tensor.h"

#include <cstdint>
#include <string>
#include <vector>

#pragma GCC visibility push(hidden)
namespace disc::runtime {

class Device;
class TrackedAllocator;

/// Checks `inputs` against `sig` (Session::validateInputs): count, dtype,
/// rank, static dims, agreement of named dims, symbol ranges, data. Errors:
/// InvalidArgument naming the input and dim.
Status validateInputs(const Signature &sig, const std::vector<Tensor> &inputs);

/// Row-major strides of `sizes`, in elements.
std::vector<int64_t> rowMajorStrides(const std::vector<int64_t> &sizes);
/// True when a view with `sizes`/`strides` is dense row-major (dims of size
/// 1 may have any stride).
bool isContiguous(const std::vector<int64_t> &sizes,
                  const std::vector<int64_t> &strides);
/// Gathers a strided view at `base` (elements of `elemSize` bytes) into
/// dense row-major `dst`.
void copyStrided(const char *base, const std::vector<int64_t> &sizes,
                 const std::vector<int64_t> &strides, int64_t elemSize,
                 char *dst);

/// An output descriptor as the model left it, checked against its
/// signature entry.
struct OutputView {
  /// The allocated pointer (the block the allocator handed out).
  char *allocated = nullptr;
  /// The first element (aligned pointer plus offset); null for an empty
  /// output without a buffer.
  char *start = nullptr;
  std::vector<int64_t> sizes, strides;
  int64_t elemSize = 0;
  int64_t numElements = 0;
  /// numElements * elemSize.
  int64_t bytes = 0;
};

/// A zero-filled host tensor of the output's dtype and sizes. Errors:
/// ResourceExhausted, "<who>: cannot allocate N bytes".
Status newOutputTensor(const TensorSpec &spec, const std::string &who,
                       const OutputView &view, Tensor *out);

class Invocation {
public:
  explicit Invocation(const Signature &sig);

  /// The descriptors of `inputs` (validated) on `device`, and zeroed
  /// descriptors of the outputs. Errors as Device::stageInput.
  Status bindInputs(const std::vector<Tensor> &inputs, Device &device);
  /// The descriptor pointers to pass to `disc_model_run`.
  void **inputs() { return inPtrs_.data(); }
  void **outputs() { return outPtrs_.data(); }

  /// The outputs as host Tensors, after a successful model call. Errors:
  /// Internal when the model returned bad sizes, a static dim other than
  /// the signature's or a null buffer (naming the output and dim), and
  /// those of Device::fetchOutput.
  /// `inPlace`, when not empty, has one pointer per output: the buffer of
  /// the state input the output updates (null for the others). An output
  /// the model returned as that very buffer (a state updated in place,
  /// docs/training.md) is left where it is: its entry in `results` is an
  /// empty Tensor.
  Status readOutputs(Device &device, TrackedAllocator &allocator,
                     std::vector<Tensor> *results,
                     const std::vector<const void *> &inPlace = {}) const;
  /// The output descriptors as the model filled them (graph replay keeps
  /// those of the captured run), and their replacement by kept ones (the
  /// same signature, so the same sizes).
  const std::vector<std::vector<int64_t>> &outputDescriptors() const {
    return outDescs_;
  }
  void setOutputDescriptors(const std::vector<std::vector<int64_t>> &descs) {
    outDescs_ = descs;
    for (size_t i = 0; i < outDescs_.size() && i < outPtrs_.size(); ++i)
      outPtrs_[i] = outDescs_[i].data();
  }
  /// Whether an output descriptor's allocated pointer is `block`.
  bool references(const void *block) const;

private:
  /// readOutputs before the device's finishOutputs.
  Status fetchOutputs(Device &device, TrackedAllocator &allocator,
                      std::vector<Tensor> *results,
                      const std::vector<const void *> &inPlace) const;
  const Signature &sig_;
  std::vector<std::vector<int64_t>> inDescs_, outDescs_;
  std::vector<void *> inPtrs_, outPtrs_;
};

} // namespace disc::runtime
#pragma GCC visibility pop

#endif // DISC_RUNTIME_LIB_CORE_INVOCATION_H
