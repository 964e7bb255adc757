//===- ParallelFor.cpp - Generated loop nests on the session's threads ----===//
#include "ParallelFor.h"

#include <algorithm>

#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#define DISC_HAS_MXCSR 1
#endif

// libgomp's entry points (GCC's OpenMP ABI, libgomp.so.1 GOMP_4.0 and
// OMP_1.0), declared here rather than through <omp.h> and -fopenmp, which
// are compiler-specific: a clang build would otherwise bring its own OpenMP
// runtime, a second thread pool next to oneDNN's.
extern "C" {
int omp_get_max_threads(void);
int omp_get_thread_num(void);
int omp_get_num_threads(void);
void GOMP_parallel(void (*fn)(void *), void *data, unsigned numThreads,
                   unsigned flags);
}

namespace disc::runtime::cpu {
namespace {
struct Job {
  ParallelBody body;
  void *env;
  int64_t n;
};

/// Runs on every thread of the team: the static chunk of thread t.
void runChunk(void *data) {
  const Job *job = static_cast<const Job *>(data);
  int64_t t = omp_get_thread_num(), numThreads = omp_get_num_threads();
  // The first n % T threads run one iteration more.
  int64_t q = job->n / numThreads, r = job->n % numThreads;
  int64_t lo = t * q + std::min(t, r), hi = lo + q + (t < r ? 1 : 0);
  if (lo < hi)
    job->body(job->env, lo, hi);
}
#ifdef DISC_HAS_MXCSR
/// MXCSR bit 15 (FTZ, flush to zero) and bit 6 (DAZ, denormals are zero):
/// Intel SDM Vol. 1, 10.2.3.
constexpr unsigned kFlushBits = (1u << 15) | (1u << 6);
/// This thread's bits before the scope set them; `kNotSaved` when the scope
/// did not change them (they were set already).
constexpr unsigned kNotSaved = ~0u;
thread_local unsigned savedBits = kNotSaved;

/// `pending` counts the threads whose bits a scope set and did not restore
/// yet.
void setFlushBits(void *pending) {
  unsigned csr = _mm_getcsr();
  if ((csr & kFlushBits) == kFlushBits || savedBits != kNotSaved)
    return;
  savedBits = csr & kFlushBits;
  _mm_setcsr(csr | kFlushBits);
  static_cast<std::atomic<int32_t> *>(pending)->fetch_add(1);
}

void restoreFlushBits(void *pending) {
  if (savedBits == kNotSaved)
    return;
  _mm_setcsr((_mm_getcsr() & ~kFlushBits) | savedBits);
  savedBits = kNotSaved;
  static_cast<std::atomic<int32_t> *>(pending)->fetch_sub(1);
}
#endif
} // namespace

SubnormalFlushScope::SubnormalFlushScope(bool enable, int32_t threads) {
#ifdef DISC_HAS_MXCSR
  if (!enable)
    return;
  team = std::max(threads > 0 ? threads : omp_get_max_threads(), 1);
  if (team > 1)
    GOMP_parallel(&setFlushBits, &pending, static_cast<unsigned>(team), 0);
  else
    setFlushBits(&pending);
#else
  (void)enable;
  (void)threads;
#endif
}

SubnormalFlushScope::~SubnormalFlushScope() {
#ifdef DISC_HAS_MXCSR
  if (pending.load() == 0)
    return; // nothing set here (disabled, or set before the scope)
  restoreFlushBits(&pending);
  // libgomp gives a team of the same size the same pool threads; a smaller
  // team (OMP_DYNAMIC, OMP_THREAD_LIMIT reached) leaves some set, which a
  // later region of the full size restores.
  for (int attempt = 0; attempt < 4 && pending.load() > 0; ++attempt)
    GOMP_parallel(&restoreFlushBits, &pending,
                  static_cast<unsigned>(std::max(team, omp_get_max_threads())),
                  0);
#endif
}

int32_t parallelForThreads(int32_t threads, int64_t n, int64_t minChunk) {
  if (threads <= 0)
    threads = omp_get_max_threads();
  minChunk = std::max<int64_t>(minChunk, 1);
  int64_t byWork = n / minChunk;
  return static_cast<int32_t>(
      std::max<int64_t>(1, std::min<int64_t>(threads, byWork)));
}

void parallelFor(int32_t threads, ParallelBody body, void *env, int64_t n,
                 int64_t minChunk) {
  if (n <= 0)
    return;
  int32_t t = parallelForThreads(threads, n, minChunk);
  if (t <= 1) {
    body(env, 0, n);
    return;
  }
  Job job{body, env, n};
  // The team may be smaller than asked (OMP_THREAD_LIMIT, nesting): the
  // chunks follow the team's actual size.
  GOMP_parallel(&runChunk, &job, static_cast<unsigned>(t), 0);
}

} // namespace disc::runtime::cpu
