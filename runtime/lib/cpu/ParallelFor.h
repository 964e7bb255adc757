//===- ParallelFor.h - Generated loop nests on the session's threads ------===//
//
// `disc_ral_context.parallel_for` (ABI v5, docs/runtime-abi.md): runs a
// compiled kernel's body over [0, n) in contiguous chunks on OpenMP threads
// of libgomp, the runtime the Debian oneDNN runs on, so that the library
// calls and the generated loops share one thread pool. The chunks are
// static and contiguous, one per thread (the first n % T threads run
// one iteration more), with T = min(threads,
// n / minChunk); with T <= 1 the body runs inline on the calling thread.
//
//===----------------------------------------------------------------------===//
#ifndef DISC_RUNTIME_LIB_CPU_PARALLELFOR_H
#define DISC_RUNTIME_LIB_CPU_PARALLELFOR_H

#include <atomic>
#include <cstdint>

#pragma GCC visibility push(hidden)
namespace disc::runtime::cpu {

/// The body of a parallel loop: runs iterations [lo, hi) of the loop whose
/// arguments `env` points to.
using ParallelBody = void (*)(void *env, int64_t lo, int64_t hi);

/// Runs `body` over [0, n) on up to `threads` OpenMP threads (0: the OpenMP
/// default, omp_get_max_threads()), each chunk at least `minChunk`
/// iterations (values < 1 count as 1). Every iteration runs exactly once;
/// returns when all have run. n <= 0 runs nothing.
void parallelFor(int32_t threads, ParallelBody body, void *env, int64_t n,
                 int64_t minChunk);

/// The number of threads `parallelFor` uses for `n` iterations.
int32_t parallelForThreads(int32_t threads, int64_t n, int64_t minChunk);

/// Flushes subnormal floats to zero for the lifetime of the scope
/// (SessionOptions::flush_subnormals): sets the x86 MXCSR bits FTZ (a
/// subnormal result is written as 0) and DAZ (a subnormal operand reads as
/// 0) on the calling thread and, for `threads` > 1 (0: the OpenMP default),
/// on every thread of an OpenMP team of that size (libgomp keeps its pool
/// threads, so the loops and oneDNN's primitives of the run find them set),
/// and restores each thread's previous bits at the end (a thread that
/// already had them set, by the application or an enclosing scope, is
/// left as it was). The same trade as
/// TensorFlow's ScopedFlushDenormal: an arithmetic op on or into the
/// subnormal range (|x| < 2^-126) costs up to ~100x its usual cycles on
/// x86 (squeeze-excite scales near 0 made EfficientNet-B0's 1x1 Convs
/// 2-4x slower). No effect when `enable` is false or on other ISAs.
class SubnormalFlushScope {
public:
  SubnormalFlushScope(bool enable, int32_t threads);
  ~SubnormalFlushScope();
  SubnormalFlushScope(const SubnormalFlushScope &) = delete;
  SubnormalFlushScope &operator=(const SubnormalFlushScope &) = delete;

private:
  /// Threads of the team whose bits were set (0: none, 1: the caller).
  int32_t team = 0;
  /// Threads whose bits this scope set and has not restored yet.
  std::atomic<int32_t> pending{0};
};

} // namespace disc::runtime::cpu
#pragma GCC visibility pop

#endif // DISC_RUNTIME_LIB_CPU_PARALLELFOR_H
