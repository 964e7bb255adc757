//===- CallOperands.h - The operand layout of library calls -----*- C++ -*-===//
//
// One reading of the arguments of `disc_ral_context.library_call`
// (docs/runtime-abi.md, abi.h) for both library-call modules, the CPU one
// (oneDNN, cpu/LibraryCalls.h) and the CUDA one (cuBLAS/cuDNN,
// cuda/LibraryCalls.h):
//
//   - every operand is a memref descriptor of f32 data, `allocated,
//     aligned, offset, sizes[rank], strides[rank]` in int64 words; sizes and
//     strides are in elements;
//   - MatMul takes A, B, C of rank 3 and the attributes {transA, transB}
//     and an optional post-op flags word;
//   - Conv and ConvTranspose take X, W, Y of rank k + 2 (k = 1..3 spatial
//     dims) and the attributes {groups, constant weights, strides[k],
//     dilations[k], pads begin[k], pads end[k]} and an optional flags word;
//   - the post-op operands follow the output: the bias (rank 1, flags bit
//     0) and the residual (the output's rank, flags bit 1).
//
// A call that does not fit fails by throwing `CallError` (`fail`), which
// each module's entry point turns into its status and message. Temporaries
// come from the caller's allocator (`ScratchAllocator`, `ScratchBuffer`).
// Internal to libdisc_runtime (hidden); header-only, so the unit tests that
// compile their own copy of a module need nothing more.
//
//===----------------------------------------------------------------------===//
#ifndef DISC_RUNTIME_LIB_CORE_CALLOPERANDS_H
#define DISC_RUNTIME_LIB_CORE_CALLOPERANDS_H

#include <cstdint>
#include <new>
#include <string>
#include <utility>
#include <vector>

#pragma GCC visibility push(hidden)
namespace disc::runtime {

/// Allocation hooks for the temporaries of one call (oneDNN scratchpads and
/// reordered operands on the host, cuBLAS/cuDNN workspaces on the device).
/// `alloc` returns `bytes` bytes aligned to `alignment`, or NULL (it must
/// not unwind); `free` releases a buffer of `alloc` (on the device, after
/// the stream has drained).
struct ScratchAllocator {
  void *self = nullptr;
  void *(*alloc)(void *self, int64_t bytes, int64_t alignment) = nullptr;
  void (*free)(void *self, void *ptr) = nullptr;
};

/// A temporary of one call from a `ScratchAllocator`, freed on scope exit.
class ScratchBuffer {
public:
  /// Buffers of at least `alignment` bytes alignment from `allocator`.
  ScratchBuffer(const ScratchAllocator &allocator, int64_t alignment)
      : allocator_(allocator), alignment_(alignment) {}
  ~ScratchBuffer() {
    if (p)
      allocator_.free(allocator_.self, p);
  }
  ScratchBuffer(const ScratchBuffer &) = delete;
  ScratchBuffer &operator=(const ScratchBuffer &) = delete;
  /// Takes `bytes` bytes (none for `bytes` <= 0); false when the allocator
  /// refused.
  bool allocate(int64_t bytes) {
    if (bytes <= 0)
      return true;
    p = allocator_.alloc(allocator_.self, bytes, alignment_);
    return p != nullptr;
  }
  /// The buffer, null before `allocate` (or for 0 bytes).
  void *p = nullptr;

private:
  const ScratchAllocator &allocator_;
  int64_t alignment_;
};

/// A library-call module: runs the DISC_LIB_* calls of abi.h on one
/// device (cpu::LibraryCalls with oneDNN, cuda::LibraryCalls with
/// cuBLAS/cuDNN). One module serves one session.
class LibraryModule {
public:
  LibraryModule() = default;
  virtual ~LibraryModule() = default;
  LibraryModule(const LibraryModule &) = delete;
  LibraryModule &operator=(const LibraryModule &) = delete;

  /// Runs one library call (arguments as `disc_ral_context.library_call`)
  /// with its temporaries from `scratch`. Returns 0, or a status code of
  /// docs/runtime-abi.md with `error` set (see each module).
  virtual int32_t call(int32_t callId, int32_t numOperands,
                       void *const *operands, const int32_t *ranks,
                       int32_t numAttrs, const int64_t *attrs,
                       const ScratchAllocator &scratch, std::string &error) = 0;
};

/// The entries a module has made and keeps now (its primitive or plan
/// cache; for tests).
struct CacheCounts {
  int64_t created = 0;
  int64_t cached = 0;
  /// Copies of constant weights in a primitive's layout (CPU).
  int64_t packedWeights = 0;
  /// Conv primitives made as Winograd convolutions (CPU).
  int64_t winograd = 0;
};

/// Why a call failed: a status of docs/runtime-abi.md (1 operands that do
/// not fit, 2 out of memory, 3 a library missing, 4 the library failed)
/// and the message.
struct CallError {
  int32_t status;
  std::string message;
};

[[noreturn]] inline void fail(int32_t status, std::string message) {
  throw CallError{status, std::move(message)};
}

/// Runs `body()`, a call that fails by throwing CallError, and returns its
/// status: the CallError's (with `error` its message), or 2 with `error` =
/// `outOfMemory` when the host runs out of memory.
template <typename Body>
int32_t catchCallError(Body body, std::string &error,
                       const std::string &outOfMemory) {
  try {
    return body();
  } catch (const CallError &e) {
    error = e.message;
    return e.status;
  } catch (const std::bad_alloc &) {
    error = outOfMemory;
    return 2;
  }
}

/// A memref descriptor of f32 data: the first element (aligned pointer
/// plus offset), sizes and strides in elements.
struct View {
  float *data = nullptr;
  std::vector<int64_t> sizes, strides;
};

/// The data pointer of a memref descriptor (aligned pointer plus offset).
inline float *dataOf(void *descriptor) {
  const int64_t *w = static_cast<const int64_t *>(descriptor);
  return reinterpret_cast<float *>(static_cast<intptr_t>(w[1])) + w[2];
}

/// The view of a memref descriptor of rank `rank`.
inline View readView(void *descriptor, int32_t rank) {
  const int64_t *w = static_cast<const int64_t *>(descriptor);
  View v;
  v.data = dataOf(descriptor);
  v.sizes.assign(w + 3, w + 3 + rank);
  v.strides.assign(w + 3 + rank, w + 3 + 2 * rank);
  return v;
}

/// "[2, 3, 4]", for messages.
inline std::string dimsText(const std::vector<int64_t> &d) {
  std::string s = "[";
  for (size_t i = 0; i < d.size(); ++i)
    s += (i ? ", " : "") + std::to_string(d[i]);
  return s + "]";
}

/// Number of elements of `d` (1 for rank 0).
inline int64_t volume(const std::vector<int64_t> &d) {
  int64_t n = 1;
  for (int64_t x : d)
    n *= x;
  return n;
}

/// `strides` with the strides of size-1 dims, which address nothing, set to
/// the dense value (oneDNN and cuDNN accept those).
inline std::vector<int64_t> normalizedStrides(const std::vector<int64_t> &sizes,
                                              std::vector<int64_t> strides) {
  int64_t dense = 1;
  for (int64_t i = static_cast<int64_t>(sizes.size()) - 1; i >= 0; --i) {
    if (sizes[i] == 1)
      strides[i] = dense;
    dense *= sizes[i] > 0 ? sizes[i] : 1;
  }
  return strides;
}

/// The spatial dims k of a Conv or ConvTranspose call: the rank of X less
/// 2 when W and Y have X's rank, else 0. The attributes then number 2 + 4k
/// (plus the flags word and the words after it).
inline int64_t convSpatialDims(int32_t numOperands, const int32_t *ranks) {
  int32_t rank = numOperands >= 1 ? ranks[0] : 0;
  if (numOperands < 3 || rank < 3 || rank > 5 || ranks[1] != rank ||
      ranks[2] != rank)
    return 0;
  return rank - 2;
}

/// The attributes of a Conv or ConvTranspose call with `k` spatial dims
/// (`attrs` holds at least 2 + 4k words).
struct ConvAttrs {
  int64_t groups = 1;
  /// The weights are constant (the module may keep them reordered).
  bool constWeights = false;
  std::vector<int64_t> strides, dilations, padBegin, padEnd;
  /// The words after the pads: the flags word and its operands (none when
  /// the call has no flags word).
  const int64_t *post = nullptr;
  int32_t numPost = 0;
  /// The flags word, 0 when there is none.
  int64_t flags = 0;
};

inline ConvAttrs readConvAttrs(int32_t numAttrs, const int64_t *attrs,
                               int64_t k) {
  ConvAttrs a;
  a.groups = attrs[0];
  a.constWeights = attrs[1] != 0;
  a.strides.assign(attrs + 2, attrs + 2 + k);
  a.dilations.assign(attrs + 2 + k, attrs + 2 + 2 * k);
  a.padBegin.assign(attrs + 2 + 2 * k, attrs + 2 + 3 * k);
  a.padEnd.assign(attrs + 2 + 3 * k, attrs + 2 + 4 * k);
  a.numPost = numAttrs - static_cast<int32_t>(2 + 4 * k);
  if (a.numPost > 0) {
    a.post = attrs + 2 + 4 * k;
    a.flags = a.post[0];
  }
  return a;
}

/// Operands a call takes for its post-op `flags`: X, W, Y (or A, B, C),
/// then one for the bias (bit 0) and one for the residual (bit 1).
inline int32_t operandsFor(int64_t flags) {
  return 3 + static_cast<int32_t>(flags & 1) +
         static_cast<int32_t>((flags >> 1) & 1);
}

/// The post-op operands after the output of a call with post-op `flags`:
/// the bias (bit 0, rank 1) and the residual (bit 1, rank `outputRank`);
/// the views of those the call does not take stay empty. Fails (status 1,
/// the message starting with `who`) on a bias whose rank is not 1 or a
/// residual whose rank is not `outputRank`; `residualRank` names the
/// latter ("the output's rank"). `checkBias(bias)` runs on the bias before
/// the residual is read (a module's own checks of it; it fails the same
/// way).
struct PostOpOperands {
  View bias, residual;
};

template <typename CheckBias>
PostOpOperands
readPostOpOperands(int64_t flags, void *const *operands, const int32_t *ranks,
                   int32_t outputRank, const std::string &who,
                   const char *residualRank, CheckBias checkBias) {
  PostOpOperands p;
  int32_t next = 3;
  if (flags & 1) {
    if (ranks[next] != 1)
      fail(1, who + "the bias must have rank 1");
    p.bias = readView(operands[next++], 1);
    checkBias(p.bias);
  }
  if (flags & 2) {
    if (ranks[next] != outputRank)
      fail(1, who + "the residual must have " + residualRank);
    p.residual = readView(operands[next], outputRank);
  }
  return p;
}

} // namespace disc::runtime
#pragma GCC visibility pop

#endif // DISC_RUNTIME_LIB_CORE_CALLOPERANDS_H
