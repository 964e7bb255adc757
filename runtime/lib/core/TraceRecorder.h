//===- TraceRecorder.h - Records the timeline of a run ----------*- C++ -*-===//
//
// The recording behind SessionOptions::record_trace (disc/runtime/Trace.h,
// docs/memory.md "Timeline"). While a run is recorded the session's parts
// call it: the TrackedAllocator after each allocation and free (under its
// mutex), the RalContext at each trace point of the compiled code
// (`trace_op`), the RematRuntime at each evict, offload and regeneration.
// When no run is recorded none of them holds a recorder: the allocator and
// the remat steps test one pointer, and the model's trace points see a
// NULL `trace_op` and call nothing.
//
// Which buffer belongs to which node: the compiled code allocates an op's
// results right before its kernel or library call, so the buffers
// allocated since the last trace point are named after the next call that
// begins; one allocated while a call runs is its temporary.
//
// Thread safety: every member takes the recorder's own mutex (always
// taken after the allocator's, never before).
//
// Internal to libdisc_runtime (hidden).
//
//===----------------------------------------------------------------------===//
#ifndef DISC_RUNTIME_LIB_CORE_TRACERECORDER_H
#define DISC_RUNTIME_LIB_CORE_TRACERECORDER_H

#include "disc/runtime/Signature.h"
#include "disc/runtime/Trace.h"

#include <chrono>
#include <cstdint>
#include <mutex>
#include <unordered_map>
#include <vector>

#pragma GCC visibility push(hidden)
namespace disc::runtime {

class TraceRecorder {
public:
  /// Starts recording a run of the model of `sig` (which must outlive the
  /// recording): `predicted` and `numOps` as RunTrace, the limit and the
  /// predicted peak for the report. The clock starts now.
  void begin(const Signature &sig, int64_t numOps,
             std::vector<int64_t> predicted, int64_t limitBytes,
             int64_t predictedPeakBytes);

  /// Buffer `p` of `bytes` bytes was allocated / freed; `liveBytes` is the
  /// allocator's live bytes afterwards.
  void allocated(void *p, int64_t bytes, int64_t liveBytes);
  void freed(void *p, int64_t liveBytes);
  /// Trace point `id` (Signature::tracePoints) begins (`phase` 0) or ends.
  void tracePoint(int32_t id, int32_t phase);
  /// A rematerialization event (RunTrace::Instant) of candidate `id`.
  void instant(const char *kind, int32_t id, int64_t bytes, int64_t point);

  /// Ends the recording: the trace, with `peakBytes` (the allocator's
  /// peak of the run) and the program points of the samples resolved.
  RunTrace finish(int64_t peakBytes);

private:
  double nowUs() const;
  void sampleLocked(int64_t liveBytes);

  std::mutex mutex_;
  const Signature *sig_ = nullptr;
  std::chrono::steady_clock::time_point start_;
  RunTrace trace_;
  /// Per sample: whether a call was running, and the highest program point
  /// of the calls begun so far.
  std::vector<char> sampleInside_;
  std::vector<int64_t> sampleRunMax_;
  int64_t runMax_ = -1;
  /// Indices into trace_.slices of the calls running now (innermost last).
  std::vector<size_t> open_;
  /// Buffers: live ones by pointer (their serial), and per serial the
  /// bytes, the trace point it is named after (-1: none yet) and whether
  /// it is a temporary.
  std::unordered_map<void *, int64_t> live_;
  std::vector<int64_t> bytes_;
  std::vector<int32_t> label_;
  std::vector<char> temporary_;
  /// Serials allocated since the last trace point, not yet named.
  std::vector<int64_t> pending_;
  /// The live set at the highest live bytes so far.
  int64_t peak_ = -1;
  std::vector<int64_t> peakSerials_;
  size_t peakSample_ = 0;
};

} // namespace disc::runtime
#pragma GCC visibility pop

#endif // DISC_RUNTIME_LIB_CORE_TRACERECORDER_H
