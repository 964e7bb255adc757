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

} // namespace disc::runtime::cpu
#pragma GCC visibility pop

#endif // DISC_RUNTIME_LIB_CPU_PARALLELFOR_H
