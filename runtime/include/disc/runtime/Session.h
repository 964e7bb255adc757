//===- Session.h - Runs of an Executable ------------------------*- C++ -*-===//
//
// A Session runs one Executable with a tracked, optionally limited,
// allocator (SessionOptions::memory_limit_bytes), rematerialization under
// the limit and the statistics of its last run (docs/runtime-api.md).
//
// Part of the C++ API; "disc/runtime/Runtime.h" includes every part.
//
//===----------------------------------------------------------------------===//
#ifndef DISC_RUNTIME_SESSION_H
#define DISC_RUNTIME_SESSION_H

#include "disc/runtime/Executable.h"
#include "disc/runtime/Status.h"
#include "disc/runtime/Tensor.h"
#include "disc/runtime/Trace.h"

#include <cstdint>
#include <initializer_list>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace disc {

/// How the runtime picks the rematerialization candidates to evict under a
/// memory limit (docs/memory.md, "Rematerialization").
enum class RematPolicy {
  /// The candidate that frees the most bytes first.
  LargestFirst = 0,
  /// DTR-style: bytes freed times the length of the gap (staleness), per
  /// unit of recompute cost (FLOPs).
  DtrScore = 1,
};

/// How a CUDA session gives up a rematerialization candidate's device
/// buffer under a memory limit (docs/cuda.md, "Memory limit on the
/// device"). CPU sessions always recompute.
enum class DeviceEviction {
  /// Per candidate, the cheaper of the two: recompute FLOPs at an assumed
  /// device rate against the bytes copied out and back over PCIe.
  Auto = 0,
  /// Free the buffer and recompute it before its next use.
  Recompute = 1,
  /// Copy the buffer to page-locked host memory, free it, and copy it
  /// back before its next use.
  Offload = 2,
};

struct SessionOptions {
  /// Upper bound, in bytes, on the bytes live at once through the context
  /// allocator during a run (intermediates and outputs). 0 = no limit.
  /// Before running, the runtime computes from the input shapes the lowest
  /// peak reachable by evicting rematerialization candidates; a limit
  /// below it fails with ResourceExhausted (both numbers in the message)
  /// before any op runs. Otherwise the runtime evicts candidates at their
  /// evict points as needed to stay within the limit and recomputes them
  /// before their next use. Exceeding it anyway (memory the model does not
  /// predict, such as library temporaries) aborts the run with
  /// ResourceExhausted.
  int64_t memory_limit_bytes = 0;
  /// Which candidates go first under a limit.
  RematPolicy remat_policy = RematPolicy::LargestFirst;
  /// CUDA sessions: recompute or offload an evicted candidate.
  DeviceEviction device_eviction = DeviceEviction::Auto;
  /// Threads of the library calls (oneDNN Conv/MatMul/Gemm, its OpenMP
  /// runtime). 0 = the OpenMP default (OMP_NUM_THREADS, else one per core).
  /// The generated loops run on the calling thread.
  int32_t num_threads = 0;
  /// CPU sessions: during a run, subnormal floats (|x| < 2^-126 for f32)
  /// read as zero and subnormal results are written as zero, on the
  /// calling thread and the session's OpenMP threads (x86 MXCSR DAZ and
  /// FTZ; each thread's previous setting is restored after the run), as
  /// TensorFlow runs its CPU kernels. Subnormal arithmetic is up to ~100x
  /// slower on x86 and carries no information a network uses (a
  /// squeeze-excite scale near 0 made EfficientNet-B0's 1x1 Convs 2-4x
  /// slower). False keeps IEEE 754 gradual underflow, bit for bit what
  /// PyTorch computes there. No effect on CUDA sessions and off x86.
  bool flush_subnormals = true;
  /// Record the timeline of each run (docs/memory.md, "Timeline";
  /// Session::lastTrace): the kernels and library calls with their ONNX
  /// nodes, the live bytes after every allocation and free, the predicted
  /// live bytes per program point and the rematerialization events. Off,
  /// it costs one test per allocation and a NULL entry the model's trace
  /// points skip.
  bool record_trace = false;
  /// CUDA sessions: the most CUDA graphs kept, one per distinct input
  /// shapes (docs/cuda.md, "Graph replay"), least recently used dropped
  /// first. A run at shapes the session ran before is captured into a graph
  /// once and later ones replay it with one graph launch. Runs under a
  /// memory limit, with record_trace, or of a model that reads device data
  /// on the host during the run are not captured. 0 = no graphs.
  int32_t cuda_graph_cache_size = 8;
};

/// Statistics of the last `Session::run` (reset at the start of each run).
struct SessionStats {
  /// Wall time of the last run, in milliseconds (validation, model call and
  /// output adoption).
  double last_latency_ms = 0;
  /// Peak bytes live through the context allocator during the last run,
  /// counting output buffers the runtime adopted. Requested sizes, not
  /// rounded to the alignment.
  int64_t peak_bytes = 0;
  /// Bytes still live through the allocator now (0 after every run: outputs
  /// are handed to the Tensors and leaks are freed).
  int64_t current_bytes = 0;
  /// Number of successful `alloc` calls during the last run.
  int64_t num_allocs = 0;
  /// Allocations the model neither freed nor returned as an output; the
  /// runtime freed them after the run.
  int64_t leaked_allocs = 0;
  /// Rematerialization: candidates evicted, regenerated (recomputed), the
  /// bytes recomputed and the milliseconds spent recomputing.
  int64_t remat_evictions = 0;
  int64_t remat_regenerations = 0;
  int64_t remat_bytes_recomputed = 0;
  double remat_recompute_ms = 0;
  /// CUDA sessions: the evicted candidates that were offloaded to host
  /// memory instead of recomputed (counted in `remat_evictions` too), their
  /// bytes, and the milliseconds spent copying them out and back.
  int64_t remat_offloads = 0;
  int64_t remat_bytes_offloaded = 0;
  double remat_offload_ms = 0;
  /// The lowest peak reachable by evicting candidates, and the peak
  /// predicted with none evicted, for the last run's shapes (-1: not
  /// predictable).
  int64_t remat_minimum_peak_bytes = -1;
  int64_t predicted_peak_bytes = -1;
  /// True when `predicted_peak_bytes` is an upper bound of the peak (the
  /// signature's memory.upper_bound: control flow, data-dependent sizes)
  /// rather than the exact peak.
  bool predicted_peak_is_upper_bound = false;
  /// Peak bytes the session held from the OS (or the device) during the
  /// last run: the blocks of live buffers (a reused block may be larger
  /// than its request) plus the freed blocks kept for reuse. At least
  /// `peak_bytes`; below twice the highest peak of the session's runs
  /// (docs/runtime-api.md, "Freed host blocks").
  int64_t reserved_peak_bytes = 0;
  /// CUDA graph replay (SessionOptions::cuda_graph_cache_size): 1 when the
  /// last run was captured into a new graph (and ran as its first launch),
  /// else 0; 1 when it replayed a graph captured by an earlier run, else
  /// 0. A replayed run reports the allocation statistics of the run that
  /// was captured (the same buffers at the same points).
  int64_t cuda_graph_captures = 0;
  int64_t cuda_graph_replays = 0;
};

/// Runs one Executable. Sessions are independent: each has its own
/// allocator bookkeeping and statistics, so several sessions (of the same or
/// different executables) may run concurrently on different threads.
/// Thread-safety: one Session must be used by one thread at a time.
class Session {
public:
  explicit Session(std::shared_ptr<const Executable> executable,
                   SessionOptions options = {});
  ~Session();
  Session(Session &&) noexcept;
  Session &operator=(Session &&) noexcept;
  Session(const Session &) = delete;
  Session &operator=(const Session &) = delete;

  /// Runs the model. `inputs` are the run inputs in signature order
  /// (`Signature::runInputs()`: every input, for a model without training
  /// state); on success `*outputs` receives one tensor per run output
  /// (`Signature::runOutputs()`: every output but those that update a
  /// state), contiguous, owning its buffer, independent of the session's
  /// lifetime. The session passes its state tensors for the state inputs
  /// and, after a successful run, each output that updates a state becomes
  /// that state (its buffer moves into the session, no copy).
  /// Errors: InvalidArgument for a bad input (message names the input and
  /// dim), ResourceExhausted when the memory limit is exceeded or the host is
  /// out of memory (message gives requested bytes, live bytes, limit),
  /// Internal or the model's status when `disc_model_run` fails (Internal
  /// too when an output that updates a state has another shape than the
  /// state). On error `*outputs` is cleared, every allocation of the run is
  /// freed and no state changes.
  Status run(const std::vector<Tensor> &inputs, std::vector<Tensor> *outputs);
  /// Same; lets `session.run({a, b}, &outputs)` pick the positional form.
  Status run(std::initializer_list<Tensor> inputs,
             std::vector<Tensor> *outputs) {
    return run(std::vector<Tensor>(inputs), outputs);
  }
  /// Same, with the run inputs given by name. Errors additionally: a
  /// missing or an unknown input name, or the name of a state input
  /// (InvalidArgument).
  Status run(const std::map<std::string, Tensor> &inputs,
             std::vector<Tensor> *outputs);

  /// Checks the run inputs `inputs` (as `run` takes them) against the
  /// signature without running the model.
  Status validateInputs(const std::vector<Tensor> &inputs) const;

  /// Training state (docs/runtime-api.md, "Training state"): the tensors
  /// the session holds for the state inputs of its model, created with the
  /// session from their initial values (the model's `init` symbols, or
  /// zeros) and replaced by the outputs that update them after each
  /// successful run. Not counted in `SessionStats::peak_bytes` or against
  /// the memory limit, as inputs are not; a CUDA model's state stays in
  /// host memory and is copied to the device with the inputs of each run.

  /// The names of the state inputs, in signature order (empty for a model
  /// without state).
  std::vector<std::string> stateNames() const;
  /// A copy of state `name` (its own buffer, the state's dtype and static
  /// shape). Errors: InvalidArgument for a name that is not a state (the
  /// message lists the states); ResourceExhausted when the copy cannot be
  /// allocated.
  Status getState(const std::string &name, Tensor *out) const;
  /// Replaces state `name` by a copy of `value`. Errors: InvalidArgument
  /// for a name that is not a state, an empty tensor, or a dtype or shape
  /// other than the state's (the message names the state, the expected
  /// and the given dtype or shape); ResourceExhausted when the copy cannot
  /// be allocated. On error the state is unchanged.
  Status setState(const std::string &name, const Tensor &value);
  /// Writes every state to `dir/<npyFileName(name)>` as a NumPy .npy file
  /// (disc/runtime/Npy.h: characters outside [A-Za-z0-9_.-] of the name
  /// become '_'), creating `dir` (and its parents) when missing. The files
  /// are written as NAME.npy.tmp and renamed once all are written, so a
  /// save that fails to write leaves an earlier save's files whole. Errors:
  /// InvalidArgument when `dir` cannot be created, a file cannot be
  /// written (naming the state and file), or two states map to the same
  /// file name.
  Status saveState(const std::string &dir) const;
  /// Reads every state from `dir/<npyFileName(name)>` (as saveState writes
  /// them), checks all, then replaces all. Errors: InvalidArgument naming
  /// the state and the file for a missing folder or file, a malformed
  /// file, or a dtype or shape other than the state's; on error no state
  /// changes.
  Status loadState(const std::string &dir);
  /// The name of the model's loss output (`Signature::loss`); empty when
  /// the model names none.
  const std::string &lossName() const;

  /// The timeline of the last run (successful or not) when
  /// SessionOptions::record_trace is set; empty otherwise, and for a run
  /// that failed before the model was called (bad inputs, a memory limit
  /// below the lowest reachable peak). Write it with
  /// writeChromeTrace / writeMemoryPlot (disc/runtime/Trace.h).
  const RunTrace &lastTrace() const;

  const SessionStats &stats() const;
  const SessionOptions &options() const;
  const Executable &executable() const;

  struct Impl;

private:
  std::unique_ptr<Impl> impl_;
};

} // namespace disc

#endif // DISC_RUNTIME_SESSION_H
