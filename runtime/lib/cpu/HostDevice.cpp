//===- HostDevice.cpp - The host as a session's device --------------------===//
//
// See core/Device.h (makeHostDevice). Host blocks are malloc'ed with room to
// align, not posix_memalign'ed: glibc serves posix_memalign by taking size
// + alignment + a header and giving the surplus back to the heap, where the
// next small allocation lands, so a freed block (an output the caller
// released) is a little short of the next identical request and a run does
// not reuse the previous run's output block: the heap grows and its fresh
// pages fault in again.
//
//===----------------------------------------------------------------------===//
#include "../core/Device.h"

#include "../core/Invocation.h"
#include "../core/TrackedAllocator.h"
#include "LibraryCalls.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace disc::runtime {

namespace {

/// Alignment of every host block (the block cache serves any request up to
/// it from any cached block).
constexpr int64_t kHostAlign = 64;

/// A host block of `bytes` bytes aligned to `align` (a power of two >= 16),
/// or null: malloc'ed with room to align, the malloc'ed pointer kept just
/// before the returned one (hostFree).
void *hostAlloc(int64_t bytes, int64_t align) {
  size_t total =
      static_cast<size_t>(bytes) + static_cast<size_t>(align) + sizeof(void *);
  char *raw = static_cast<char *>(std::malloc(total));
  if (!raw)
    return nullptr;
  uintptr_t at = (reinterpret_cast<uintptr_t>(raw) + sizeof(void *) +
                  static_cast<uintptr_t>(align) - 1) &
                 ~(static_cast<uintptr_t>(align) - 1);
  reinterpret_cast<void **>(at)[-1] = raw;
  return reinterpret_cast<void *>(at);
}

/// Frees a block of hostAlloc.
void hostFree(void *p) {
  if (p)
    std::free(static_cast<void **>(p)[-1]);
}

class HostDevice final : public Device {
public:
  explicit HostDevice(std::function<cpu::LibraryCalls &()> library)
      : library_(std::move(library)) {}

  Status open() override { return Status::ok(); }
  void *allocate(int64_t bytes, int64_t alignment, std::string *) override {
    return hostAlloc(bytes, std::max(alignment, kHostAlign));
  }
  void release(void *ptr) override { hostFree(ptr); }
  bool reusesBlocks() const override { return true; }
  void *allocateArena(int64_t bytes) override {
    // Aligned to the huge page from 2 MB on and advised to use huge pages
    // (where the kernel's transparent huge pages are in `madvise` mode):
    // fewer page faults to map it, fewer TLB misses to use it.
    constexpr int64_t kHugePage = int64_t(2) << 20;
    bool huge = bytes >= kHugePage;
    int64_t rounded =
        huge ? (bytes + kHugePage - 1) / kHugePage * kHugePage : bytes;
    void *p = hostAlloc(rounded, huge ? kHugePage : 4096);
    if (!p)
      return nullptr;
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (huge)
      madvise(p, static_cast<size_t>(rounded), MADV_HUGEPAGE);
#endif
    std::memset(p, 0, static_cast<size_t>(rounded)); // Maps every page now.
    return p;
  }
  void releaseArena(void *ptr) override { hostFree(ptr); }
  std::string outOfMemoryMessage(int64_t requested, int64_t live,
                                 const std::string &) const override {
    return "host out of memory: requested " + std::to_string(requested) +
           " bytes with " + std::to_string(live) + " bytes live";
  }

  Status stageInput(const Tensor &t, const std::string &,
                    void **data) override {
    *data = const_cast<void *>(t.data());
    return Status::ok();
  }
  void releaseInputs() override {}

  Status fetchOutput(const TensorSpec &spec, const std::string &who,
                     const OutputView &v, TrackedAllocator &allocator,
                     Tensor *out) override {
    // Adopt when the data is a dense run inside a live tracked allocation.
    if (v.allocated && isContiguous(v.sizes, v.strides) &&
        allocator.handOver(v.allocated, v.start, v.bytes)) {
      std::shared_ptr<void> owner(v.allocated, [](void *p) { hostFree(p); });
      *out = Tensor::adopt(spec.dtype, v.sizes, v.start, std::move(owner));
      return Status::ok();
    }
    if (Status s = newOutputTensor(spec, who, v, out); !s)
      return s;
    if (v.numElements > 0)
      copyStrided(v.start, v.sizes, v.strides, v.elemSize,
                  static_cast<char *>(out->data()));
    return Status::ok();
  }

  LibraryModule &libraryModule() override { return library_(); }

private:
  std::function<cpu::LibraryCalls &()> library_;
};

} // namespace

std::unique_ptr<Device>
makeHostDevice(std::function<cpu::LibraryCalls &()> library) {
  return std::make_unique<HostDevice>(std::move(library));
}

} // namespace disc::runtime
