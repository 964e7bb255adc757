//===- SessionDevice.cpp - A CUDA device as a session's device ------------===//
//
// See core/Device.h (makeCudaDevice) and docs/cuda.md. The driver-level
// device (Device.h in this directory) opens on the session's first run;
// the cuBLAS/cuDNN module (LibraryCalls.h) on its first library call.
//
//===----------------------------------------------------------------------===//
#include "../core/Device.h"

#include "../core/Invocation.h"
#include "Device.h"
#include "LibraryCalls.h"

#include <vector>

namespace disc::runtime {

namespace {

class CudaDevice final : public runtime::Device {
public:
  Status open() override {
    if (device_)
      return Status::ok();
    std::string why;
    device_ = cuda::Device::open(/*ordinal=*/0, &why);
    if (!device_)
      return Status::loadFailed(why);
    return Status::ok();
  }

  void *allocate(int64_t bytes, int64_t, std::string *error) override {
    bool outOfMemory = false;
    return device_ ? device_->allocate(bytes, &outOfMemory, error) : nullptr;
  }
  void release(void *ptr) override {
    if (device_)
      device_->release(ptr);
  }
  bool reusesBlocks() const override { return false; }
  std::string outOfMemoryMessage(int64_t requested, int64_t live,
                                 const std::string &error) const override {
    return "device out of memory: requested " + std::to_string(requested) +
           " bytes with " + std::to_string(live) + " bytes live (" + error +
           ")";
  }

  Status stageInput(const Tensor &t, const std::string &name,
                    void **data) override {
    bool oom = false;
    std::string why;
    if (pinned_) {
      // A graph's input buffer: the same address at every run of the key.
      if (nextPinned_ >= pinned_->size())
        return Status::internal("input '" + name + "': no graph input buffer");
      void *p = (*pinned_)[nextPinned_++];
      if (device_->copy(p, t.data(), t.byteSize(), &why) != 0)
        return Status::internal("input '" + name + "': " + why);
      *data = p;
      return Status::ok();
    }
    void *p = device_->allocate(t.byteSize(), &oom, &why);
    if (!p)
      return oom ? Status::resourceExhausted("input '" + name +
                                             "': device out of memory: " + why)
                 : Status::internal("input '" + name + "': " + why);
    inputs_.push_back(p);
    if (device_->copy(p, t.data(), t.byteSize(), &why) != 0)
      return Status::internal("input '" + name + "': " + why);
    *data = p;
    return Status::ok();
  }
  void releaseInputs() override {
    if (device_)
      for (void *p : inputs_)
        device_->release(p);
    inputs_.clear();
    nextPinned_ = 0;
  }
  void pinInputs(const std::vector<void *> *buffers) override {
    pinned_ = buffers;
    nextPinned_ = 0;
  }

  Status fetchOutput(const TensorSpec &spec, const std::string &who,
                     const OutputView &v, TrackedAllocator &,
                     Tensor *out) override {
    // Device memory: the view's span is copied to the host on the stream;
    // finishOutputs waits once for every output, then gathers the strided
    // ones.
    if (Status s = newOutputTensor(spec, who, v, out); !s)
      return s;
    if (v.numElements == 0)
      return Status::ok();
    int64_t span = 1;
    for (size_t k = 0; k < v.sizes.size(); ++k)
      span += (v.sizes[k] - 1) * v.strides[k];
    bool dense = isContiguous(v.sizes, v.strides);
    char *dst = static_cast<char *>(out->data());
    if (!dense) {
      PendingGather g;
      g.staging.resize(static_cast<size_t>(span * v.elemSize));
      g.sizes = v.sizes;
      g.strides = v.strides;
      g.elemSize = v.elemSize;
      g.out = static_cast<char *>(out->data());
      pending_.push_back(std::move(g));
      dst = pending_.back().staging.data();
    }
    std::string why;
    if (device_->copy(dst, v.start, dense ? v.bytes : span * v.elemSize,
                      &why) != 0)
      return Status::internal(who + ": " + why);
    return Status::ok();
  }

  Status finishOutputs() override {
    std::vector<PendingGather> pending = std::move(pending_);
    pending_.clear();
    if (!device_)
      return Status::ok();
    std::string why;
    if (device_->synchronize(&why) != 0)
      return Status::internal("reading the outputs: " + why);
    for (PendingGather &g : pending)
      copyStrided(g.staging.data(), g.sizes, g.strides, g.elemSize, g.out);
    return Status::ok();
  }

  LibraryModule &libraryModule() override {
    if (!library_)
      library_ = std::make_unique<cuda::LibraryCalls>(*device_);
    return *library_;
  }

  bool offloads() const override { return device_ != nullptr; }
  void *allocateStaging(int64_t bytes) override {
    return device_->allocateHost(bytes);
  }
  void releaseStaging(void *ptr) override { device_->releaseHost(ptr); }
  int32_t copyAndWait(void *dst, const void *src, int64_t bytes,
                      std::string *error) override {
    if (device_->copy(dst, src, bytes, error) != 0 ||
        device_->synchronize(error) != 0)
      return 4;
    return 0;
  }

  cuda::Device *kernelDevice() override { return device_.get(); }

private:
  /// A strided output: its span on the host, gathered into `out` once the
  /// copies are done (finishOutputs).
  struct PendingGather {
    std::vector<char> staging;
    std::vector<int64_t> sizes, strides;
    int64_t elemSize = 0;
    char *out = nullptr; // the output Tensor's data
  };

  std::unique_ptr<cuda::Device> device_;
  std::vector<PendingGather> pending_;
  /// The copies of the current run's inputs (not tracked: like host inputs
  /// they belong to the caller's side of the ledger).
  std::vector<void *> inputs_;
  /// pinInputs: the buffers the next inputs go to, and the next one's index.
  const std::vector<void *> *pinned_ = nullptr;
  size_t nextPinned_ = 0;
  /// cuBLAS/cuDNN calls (declared after `device_`, so destroyed before it).
  std::unique_ptr<cuda::LibraryCalls> library_;
};

} // namespace

std::unique_ptr<Device> makeCudaDevice() {
  return std::make_unique<CudaDevice>();
}

} // namespace disc::runtime
