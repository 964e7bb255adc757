//===- Trace.h - The recorded timeline of a run -----------------*- C++ -*-===//
//
// What a Session records about one run when SessionOptions::record_trace is
// set (docs/memory.md, "Timeline"): the kernels and library calls with their
// ONNX node names and times, the live bytes of the tracked allocator after
// every allocation and free, the compiler's predicted live bytes per
// program point, and the evict, regenerate and offload events. Two writers
// turn it into a Chrome/Perfetto trace (Trace Event Format, JSON) and an SVG
// plot of the live bytes over the program points.
//
// Part of the C++ API; "disc/runtime/Runtime.h" includes every part.
//
//===----------------------------------------------------------------------===//
#ifndef DISC_RUNTIME_TRACE_H
#define DISC_RUNTIME_TRACE_H

#include "disc/runtime/Status.h"

#include <cstdint>
#include <string>
#include <vector>

namespace disc {

/// The timeline of one run. Times are microseconds since the model was
/// called; bytes are the allocator's requested bytes (as SessionStats).
struct RunTrace {
  /// One kernel or library call: a trace point of the signature (CPU
  /// models, host times), or a launch or cuBLAS/cuDNN call of a CUDA model
  /// timed on the device with CUDA events (`device`; docs/cuda.md,
  /// "Kernel times").
  struct Slice {
    /// The ONNX node (else the callee), its op type ("" when unknown) and
    /// "kernel" or "library".
    std::string name, opType, kind;
    /// Program point (index in the memory model's order); -1 unknown.
    int64_t op = -1;
    /// Microseconds: the start since the model was called (device slices:
    /// since the run's first event, recorded when the model was called),
    /// and the duration (device slices: between the events recorded right
    /// before and after the work on the stream).
    double startUs = 0, durationUs = 0;
    /// Device slices: the kernel's symbol ("disc_entry_kernel_3") or the
    /// library call ("cuBLAS matmul", "cuDNN conv", "cuDNN conv_transpose").
    std::string callee;
    bool device = false;
  };
  /// The live bytes right after an allocation or a free.
  struct Sample {
    double timeUs = 0;
    int64_t liveBytes = 0;
    /// The program point it belongs to: the op whose kernel or library
    /// call runs next (allocations precede their kernel), numOps for the
    /// return.
    int64_t point = 0;
  };
  /// A rematerialization event.
  struct Instant {
    /// "evict", "regenerate" (recompute, or copy back from the host after
    /// an offload) or "offload".
    std::string kind;
    int32_t candidate = 0;
    /// The candidate's producer (signature "remat" list) and its bytes.
    std::string producer;
    int64_t bytes = 0;
    double timeUs = 0;
    /// Program point: evict, offload: the op after which it leaves
    /// (evict_after); regenerate: the op it is regenerated for.
    int64_t point = 0;
  };
  /// A buffer live at the peak.
  struct LiveTensor {
    /// The node whose kernel or library call came right after its
    /// allocation ("... (temporary)" when allocated during a call,
    /// "(return)" for the clones of the return).
    std::string name;
    int64_t bytes = 0;
  };

  std::string model;
  std::vector<Slice> slices;
  std::vector<Sample> samples;
  std::vector<Instant> instants;
  /// Number of ops of the memory model's order (program points 0 ..
  /// numOps - 1; numOps stands for the return); 0 when the model has no
  /// per-op memory model ("remat" entry).
  int64_t numOps = 0;
  /// Predicted live bytes with nothing evicted, per program point (the
  /// largest of the op's points and the live bytes before it, with the
  /// library-call temporaries), numOps + 1 entries (the last: the return);
  /// empty when not predictable.
  std::vector<int64_t> predicted;
  /// SessionStats::peak_bytes of the run, where it was reached, and the
  /// buffers live then, largest first.
  int64_t peakBytes = 0;
  double peakTimeUs = 0;
  int64_t peakPoint = 0;
  std::vector<LiveTensor> peakTensors;
  /// SessionOptions::memory_limit_bytes (0: none).
  int64_t limitBytes = 0;
  /// SessionStats::predicted_peak_bytes (-1: not predictable).
  int64_t predictedPeakBytes = -1;
  /// Wall time of the model call, microseconds.
  double durationUs = 0;
};

/// The trace as Trace Event Format JSON (the object form, {"traceEvents":
/// [...]}, readable by chrome://tracing and ui.perfetto.dev): an "X"
/// complete event per slice (ts, dur in microseconds, pid 1, tid 1, device
/// slices tid 2; args op_type, kind, op, and callee for device slices), a "C"
/// counter "live bytes" per sample and "predicted live bytes" per program
/// point, an "i" instant per evict, regenerate and offload (args candidate,
/// producer, bytes, point), and "otherData" with peak_bytes, limit_bytes and
/// predicted_peak_bytes.
std::string chromeTraceJson(const RunTrace &trace);
/// A plain SVG plot (no script, no external resources): live bytes over
/// the program points (the samples, each point's share of the x axis
/// split evenly among its samples), the predicted step curve, the memory
/// limit, one marker per eviction (class "evict-marker") and the peak
/// with a label (id "peak-label") listing the buffers live there, largest
/// first. `width` x `height` pixels.
std::string memoryPlotSvg(const RunTrace &trace, int width = 1200,
                          int height = 640);
/// Write those to `path`. Errors: InvalidArgument naming the file when it
/// cannot be written.
Status writeChromeTrace(const RunTrace &trace, const std::string &path);
Status writeMemoryPlot(const RunTrace &trace, const std::string &path);

} // namespace disc

#endif // DISC_RUNTIME_TRACE_H
