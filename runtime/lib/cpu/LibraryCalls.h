//===- LibraryCalls.h - CPU library calls (oneDNN) behind the model ABI ---===//
//
// Runs the DISC_LIB_* primitives of abi.h with oneDNN. Shapes are dynamic:
// a primitive is created the first time a (call, shapes, strides, attrs)
// key is seen and kept in a least-recently-used cache of bounded size.
// The key is every word of the call but its data pointers, in a fixed-size
// array: a call seen before finds its entry without allocating, skips the
// operand checks (they passed when the entry was made) and runs on memory
// objects the entry keeps, pointed at the call's buffers.
// Every temporary buffer of a call (oneDNN's scratchpad in
// `scratchpad_mode::user`, operands reordered into the layout the primitive
// wants) comes from the caller's allocator, so the session's tracked peak
// counts them. Convolution weights marked constant are reordered once and
// kept by the cache entry (session-owned, like the model's constants).
// Post-ops (bias, residual add, Relu: docs/runtime-abi.md) run in the
// primitive's post-op chain, or as a loop on the output where no kernel
// takes the chain.
//
// Threads: oneDNN of the Debian package runs on OpenMP. With `numThreads`
// > 0 each call runs on that many OpenMP threads (the calling thread's
// setting is restored afterwards); 0 keeps the OpenMP default
// (OMP_NUM_THREADS, else one per core).
//
// Thread safety: one LibraryCalls object serves one session; `call` takes an
// internal mutex, so concurrent calls are safe but serialized.
//
//===----------------------------------------------------------------------===//
#ifndef DISC_RUNTIME_LIB_CPU_LIBRARYCALLS_H
#define DISC_RUNTIME_LIB_CPU_LIBRARYCALLS_H

#include "../core/CallOperands.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

// Internal to libdisc_runtime: hidden, so the library exports only its
// public API (docs/runtime-api.md, "Adding a public function"). The unit
// tests compile their own copy of LibraryCalls.cpp.
#pragma GCC visibility push(hidden)
namespace disc::runtime::cpu {

/// Allocation hooks for per-call temporaries (CallOperands.h).
using ScratchAllocator = runtime::ScratchAllocator;

class LibraryCalls final : public LibraryModule {
public:
  /// `maxPrimitives`: cache capacity (entries, each one primitive plus its
  /// reorders and reordered constant weights). `numThreads`: OpenMP
  /// threads of every call, 0 = the OpenMP default. `winograd`: 3x3 Convs
  /// may run as Winograd convolutions where that pays (inference); a
  /// training step's session passes false (LibraryCalls.cpp,
  /// `winogradPays`).
  explicit LibraryCalls(size_t maxPrimitives = 512, int32_t numThreads = 0,
                        bool winograd = true);
  ~LibraryCalls() override;

  /// Returns 0, or a status code of docs/runtime-abi.md with `error` set:
  /// 1 for operands that do not fit the call (ranks, dims, attrs), 2 when a
  /// temporary cannot be allocated, 4 when oneDNN fails.
  int32_t call(int32_t callId, int32_t numOperands, void *const *operands,
               const int32_t *ranks, int32_t numAttrs, const int64_t *attrs,
               const ScratchAllocator &allocator, std::string &error) override;

  /// Bytes of the temporaries `call` would take from the allocator for
  /// these operands (only their sizes and strides are read; data pointers
  /// may be null): the scratchpad plus the operands reordered into the
  /// primitive's layout, constant weights excluded (kept by the cache).
  /// Creates (and caches) the primitive without running it. Status and
  /// `error` as `call`.
  int32_t temporaryBytes(int32_t callId, int32_t numOperands,
                         void *const *operands, const int32_t *ranks,
                         int32_t numAttrs, const int64_t *attrs, int64_t *bytes,
                         std::string &error);

  /// Primitives created so far / currently cached (for tests).
  CacheCounts counts() const;
  int64_t numCreated() const { return counts().created; }
  int64_t numCached() const { return counts().cached; }

private:
  int32_t dispatch(int32_t callId, int32_t numOperands, void *const *operands,
                   const int32_t *ranks, int32_t numAttrs, const int64_t *attrs,
                   const ScratchAllocator &allocator, int64_t *tempBytes,
                   std::string &error);
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

} // namespace disc::runtime::cpu
#pragma GCC visibility pop

#endif // DISC_RUNTIME_LIB_CPU_LIBRARYCALLS_H
