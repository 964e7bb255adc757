//===- Invocation.cpp - Input checks, descriptors, outputs of a model call ===//

#include "Invocation.h"

#include "Device.h"

#include <algorithm>
#include <cstring>

namespace disc::runtime {

//===----------------------------------------------------------------------===//
// Input validation
//===----------------------------------------------------------------------===//

namespace {

std::string rangeToString(const SymbolSpec &sym) {
  return "[" + std::to_string(sym.min) + ", " +
         (sym.max ? std::to_string(*sym.max) + "]" : std::string("inf)"));
}

} // namespace

Status validateInputs(const Signature &sig, const std::vector<Tensor> &inputs) {
  if (inputs.size() != sig.inputs.size())
    return Status::invalidArgument(
        "expected " + std::to_string(sig.inputs.size()) + " inputs but got " +
        std::to_string(inputs.size()));
  // The symbols bound so far (few: a linear search); messages are built
  // only when a check fails.
  struct Binding {
    const std::string *symbol;
    int64_t size;
    size_t input;
    size_t dim;
  };
  std::vector<Binding> bound;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const TensorSpec &spec = sig.inputs[i];
    const Tensor &t = inputs[i];
    auto who = [&] { return "input '" + spec.name + "'"; };
    if (!t.isValid())
      return Status::invalidArgument(who() + ": tensor is empty (no buffer)");
    if (t.dtype() != spec.dtype)
      return Status::invalidArgument(who() + ": expected dtype " +
                                     dtypeName(spec.dtype) + " but got " +
                                     dtypeName(t.dtype()));
    if (t.rank() != spec.rank())
      return Status::invalidArgument(
          who() + ": expected rank " + std::to_string(spec.rank()) +
          " but got rank " + std::to_string(t.rank()) + " (shape " +
          shapeToString(t.shape()) + ")");
    for (size_t d = 0; d < spec.shape.size(); ++d) {
      const DimSpec &dim = spec.shape[d];
      int64_t got = t.shape()[d];
      auto where = [&] {
        std::string w = who() + " dim " + std::to_string(d);
        if (dim.isSymbolic())
          w += " ('" + dim.symbol + "')";
        return w;
      };
      if (got < 0)
        return Status::invalidArgument(where() + ": negative size " +
                                       std::to_string(got));
      if (dim.isStatic()) {
        if (got != dim.size)
          return Status::invalidArgument(where() + ": expected " +
                                         std::to_string(dim.size) +
                                         " but got " + std::to_string(got));
        continue;
      }
      if (!dim.isSymbolic())
        continue;
      auto it = std::find_if(bound.begin(), bound.end(), [&](const Binding &b) {
        return *b.symbol == dim.symbol;
      });
      if (it != bound.end()) {
        if (it->size != got)
          return Status::invalidArgument(
              where() + ": got " + std::to_string(got) + " but input '" +
              sig.inputs[it->input].name + "' dim " + std::to_string(it->dim) +
              " has '" + dim.symbol + "' = " + std::to_string(it->size));
        continue;
      }
      if (const SymbolSpec *sym = sig.findSymbol(dim.symbol)) {
        if (got < sym->min || (sym->max && got > *sym->max))
          return Status::invalidArgument(
              where() + ": got " + std::to_string(got) +
              ", outside the range " + rangeToString(*sym) + " of '" +
              dim.symbol + "'");
      }
      bound.push_back(Binding{&dim.symbol, got, i, d});
    }
    if (t.numElements() < 0)
      return Status::invalidArgument(who() + ": too many elements");
    if (t.numElements() > 0 && !t.data())
      return Status::invalidArgument(who() + ": no data");
  }
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// Descriptors
//===----------------------------------------------------------------------===//

std::vector<int64_t> rowMajorStrides(const std::vector<int64_t> &sizes) {
  std::vector<int64_t> strides(sizes.size(), 1);
  for (int64_t i = static_cast<int64_t>(sizes.size()) - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * sizes[i + 1];
  return strides;
}

bool isContiguous(const std::vector<int64_t> &sizes,
                  const std::vector<int64_t> &strides) {
  if (numElementsOf(sizes) == 0)
    return true;
  std::vector<int64_t> expected = rowMajorStrides(sizes);
  for (size_t i = 0; i < sizes.size(); ++i)
    if (sizes[i] != 1 && strides[i] != expected[i])
      return false;
  return true;
}

void copyStrided(const char *base, const std::vector<int64_t> &sizes,
                 const std::vector<int64_t> &strides, int64_t elemSize,
                 char *dst) {
  int64_t n = numElementsOf(sizes);
  if (n <= 0)
    return;
  size_t rank = sizes.size();
  std::vector<int64_t> idx(rank, 0);
  int64_t srcOffset = 0;
  for (int64_t k = 0; k < n; ++k) {
    std::memcpy(dst + k * elemSize, base + srcOffset * elemSize,
                static_cast<size_t>(elemSize));
    for (int64_t d = static_cast<int64_t>(rank) - 1; d >= 0; --d) {
      if (++idx[d] < sizes[d]) {
        srcOffset += strides[d];
        break;
      }
      srcOffset -= strides[d] * (sizes[d] - 1);
      idx[d] = 0;
    }
  }
}

Status newOutputTensor(const TensorSpec &spec, const std::string &who,
                       const OutputView &view, Tensor *out) {
  *out = Tensor::zeros(spec.dtype, view.sizes);
  if (!out->isValid())
    return Status::resourceExhausted(who + ": cannot allocate " +
                                     std::to_string(view.bytes) + " bytes");
  return Status::ok();
}

Invocation::Invocation(const Signature &sig) : sig_(sig) {}

Status Invocation::bindInputs(const std::vector<Tensor> &inputs,
                              Device &device) {
  // Input descriptors: contiguous row-major, allocated = aligned = data (a
  // device copy of the data for a CUDA model).
  inDescs_.assign(inputs.size(), {});
  inPtrs_.assign(inputs.size(), nullptr);
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Tensor &t = inputs[i];
    std::vector<int64_t> &d = inDescs_[i];
    int64_t r = t.rank();
    d.assign(3 + 2 * r, 0);
    void *p = nullptr;
    if (Status s = device.stageInput(t, sig_.inputs[i].name, &p); !s)
      return s;
    auto data = reinterpret_cast<intptr_t>(p);
    d[0] = data;
    d[1] = data;
    d[2] = 0;
    std::vector<int64_t> strides = rowMajorStrides(t.shape());
    for (int64_t k = 0; k < r; ++k) {
      d[3 + k] = t.shape()[k];
      d[3 + r + k] = strides[k];
    }
    inPtrs_[i] = d.data();
  }
  // Output descriptors: zeroed, filled by the model.
  outDescs_.assign(sig_.outputs.size(), {});
  outPtrs_.assign(sig_.outputs.size(), nullptr);
  for (size_t i = 0; i < sig_.outputs.size(); ++i) {
    outDescs_[i].assign(3 + 2 * sig_.outputs[i].rank(), 0);
    outPtrs_[i] = outDescs_[i].data();
  }
  return Status::ok();
}

Status Invocation::readOutputs(Device &device, TrackedAllocator &allocator,
                               std::vector<Tensor> *results,
                               const std::vector<const void *> &inPlace) const {
  // The device's copies complete in one wait (Device::finishOutputs).
  Status s = fetchOutputs(device, allocator, results, inPlace);
  Status done = device.finishOutputs();
  return !s ? s : done;
}

Status
Invocation::fetchOutputs(Device &device, TrackedAllocator &allocator,
                         std::vector<Tensor> *results,
                         const std::vector<const void *> &inPlace) const {
  results->reserve(sig_.outputs.size());
  for (size_t i = 0; i < sig_.outputs.size(); ++i) {
    const TensorSpec &spec = sig_.outputs[i];
    const std::vector<int64_t> &d = outDescs_[i];
    int64_t r = spec.rank();
    OutputView v;
    v.allocated = reinterpret_cast<char *>(static_cast<intptr_t>(d[0]));
    char *aligned = reinterpret_cast<char *>(static_cast<intptr_t>(d[1]));
    int64_t offset = d[2];
    v.sizes.assign(d.begin() + 3, d.begin() + 3 + r);
    v.strides.assign(d.begin() + 3 + r, d.begin() + 3 + 2 * r);
    std::string who = "output '" + spec.name + "'";
    v.numElements = numElementsOf(v.sizes);
    if (v.numElements < 0)
      return Status::internal(who + ": invalid sizes " +
                              shapeToString(v.sizes));
    for (int64_t k = 0; k < r; ++k)
      if (spec.shape[k].isStatic() && spec.shape[k].size != v.sizes[k])
        return Status::internal(
            who + " dim " + std::to_string(k) + ": signature says " +
            std::to_string(spec.shape[k].size) + " but the model produced " +
            std::to_string(v.sizes[k]));
    v.elemSize = dtypeSize(spec.dtype);
    v.bytes = v.numElements * v.elemSize;
    if (v.numElements > 0 && !aligned)
      return Status::internal(who + ": model returned a null buffer");
    v.start = aligned ? aligned + offset * v.elemSize : nullptr;
    if (i < inPlace.size() && inPlace[i] && v.start == inPlace[i] &&
        isContiguous(v.sizes, v.strides)) {
      results->push_back(Tensor());
      continue;
    }
    Tensor t;
    if (Status s = device.fetchOutput(spec, who, v, allocator, &t); !s)
      return s;
    results->push_back(std::move(t));
  }
  return Status::ok();
}

bool Invocation::references(const void *block) const {
  bool referenced = false;
  for (const std::vector<int64_t> &d : outDescs_)
    referenced |=
        reinterpret_cast<void *>(static_cast<intptr_t>(d[0])) == block;
  return referenced;
}

} // namespace disc::runtime
