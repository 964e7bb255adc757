//===- Session.cpp - Runs of a model: the parts of a session together -----===//
//
// A Session owns one of each part of a run (docs/runtime-api.md): the
// Device the model runs on (Device.h), the TrackedAllocator of its buffers,
// the PredictionCache of its memory predictions, the RematRuntime of its
// rematerialization steps, the RunErrors the model reports and the
// RalContext that hands all of them to the model. A run validates and
// stages the inputs (Invocation.h), plans against the memory limit, calls
// the model and turns its outputs into Tensors. A model with training state
// (docs/runtime-api.md, "Training state") has the session hold its state
// inputs: a run takes the other inputs, passes the held ones, and the
// outputs that update a state replace it after a successful run.
//
//===----------------------------------------------------------------------===//

#include "disc/runtime/Npy.h"
#include "disc/runtime/Runtime.h"
#include "disc/runtime/abi.h"

#include "../cpu/LibraryCalls.h"
#include "../cpu/ParallelFor.h"
#include "../cuda/Device.h"
#include "../cuda/GraphCache.h"
#include "Device.h"
#include "Invocation.h"
#include "Prediction.h"
#include "PredictionCache.h"
#include "RalContext.h"
#include "RematPlanner.h"
#include "RematRuntime.h"
#include "RunErrors.h"
#include "TraceRecorder.h"
#include "TrackedAllocator.h"

#include <chrono>
#include <filesystem>

namespace disc {

/// Per-session state; its parts point at each other, so it never moves.
/// Hidden: Runtime.h declares it, but it is no part of the library's API.
struct __attribute__((visibility("hidden"))) Session::Impl {
  Impl(std::shared_ptr<const Executable> executable, SessionOptions opts);

  std::shared_ptr<const Executable> exe;
  SessionOptions options;
  SessionStats stats;
  /// The last run's prediction while its minimum peak is not in `stats`
  /// yet: searched when the stats are read (a run without a memory limit
  /// does not need it), null otherwise.
  runtime::PredictionCache::Prediction *pendingMinimum = nullptr;
  /// The session's library-call module (oneDNN), made on first use: the
  /// host device's library calls and every prediction's temporaries.
  std::unique_ptr<runtime::cpu::LibraryCalls> library;
  runtime::cpu::LibraryCalls &cpuLibrary();

  std::unique_ptr<runtime::Device> device;
  runtime::TrackedAllocator allocator;
  runtime::RunErrors errors;
  runtime::RematRuntime remat;
  runtime::PredictionCache predictions;
  runtime::RalContext ral;
  /// CUDA graphs of the session, one per input shapes (after `device`:
  /// destroyed before it).
  runtime::cuda::GraphCache graphs;
  /// The recording of the current run (record_trace) and the last trace.
  std::unique_ptr<runtime::TraceRecorder> recorder;
  RunTrace trace;
  /// Starts recording a run of `inputs` (validated): the predicted live
  /// bytes per program point from the "remat" entry, when it evaluates.
  void beginTrace(const std::vector<Tensor> &inputs);
  /// Stops recording; the trace goes to `trace`.
  void endTrace();
  /// Appends the device times of the run's launches and library calls
  /// (Device::finishTiming) to `trace`, named by the signature's kernels.
  void addDeviceTimes(runtime::cuda::Device &kd);

  /// Training state: per signature input, the tensor the session holds
  /// for a state input (empty for the others, and for a state whose
  /// initial value could not be allocated).
  std::vector<Tensor> state;
  /// Number of state inputs.
  int64_t numStates = 0;
  /// Creates the state tensors from their initial values.
  void initState();
  /// The index of state input `name`, or an InvalidArgument naming it and
  /// listing the states.
  Status findState(const std::string &name, size_t *index) const;
  /// The state tensor of input `i`; ResourceExhausted when it is empty.
  Status heldState(size_t i, const Tensor **out) const;
  /// The file names of the states (npyFileName), or an InvalidArgument
  /// when two states share one.
  Status stateFiles(std::vector<std::string> *files) const;
  /// Every signature input of a model with state: `inputs` (the run
  /// inputs) with the state tensors in their places. Errors:
  /// InvalidArgument for a count other than the number of run inputs.
  Status allInputs(const std::vector<Tensor> &inputs,
                   std::vector<Tensor> *all) const;

  /// Plans the run: the feasibility check against the memory limit.
  Status planRemat(const std::vector<Tensor> &inputs);
  /// Frees every buffer of the run (live, kept, offloaded, device inputs).
  void releaseAll();
  /// Copies the allocator's counters of the run into `stats`.
  void finishStats(int64_t leaked);
  /// The status of a model call that returned `rc` (not 0).
  Status failedCall(int32_t rc);
  Status runImpl(const std::vector<Tensor> &inputs,
                 std::vector<Tensor> *outputs);
  /// A run of the model on `inputs` (validated, planned, device open): the
  /// outputs in signature order into `results`; frees every buffer of the
  /// run and fills the allocation statistics.
  /// `*hostBytes`: the bytes the model copied from the host to the device
  /// (Device::hostCopyBytes), 0 on the host.
  Status runPlain(const std::vector<Tensor> &inputs,
                  const std::vector<const void *> &inPlace,
                  std::vector<Tensor> *results, int64_t *hostBytes);
  /// The same run as a CUDA graph (docs/cuda.md, "Graph replay"): captured
  /// into `entry` first for `mode` Capture. Returns false, with nothing
  /// left allocated by the run, when it must be redone plainly (the capture
  /// was invalidated or the model failed during it, a run-time check
  /// failed, whose message the plain run reports); true with `*status` the
  /// run's status otherwise.
  bool runGraph(runtime::cuda::GraphCache::Mode mode,
                runtime::cuda::GraphEntry *entry,
                const std::vector<Tensor> &inputs,
                const std::vector<const void *> &inPlace,
                std::vector<Tensor> *results, Status *status);
};

namespace {

/// The signature of `exe`, or an empty one without an executable.
const Signature &signatureOf(const std::shared_ptr<const Executable> &exe) {
  static const Signature kNone;
  return exe ? exe->signature() : kNone;
}

} // namespace

Session::Impl::Impl(std::shared_ptr<const Executable> executable,
                    SessionOptions opts)
    : exe(std::move(executable)), options(opts),
      device(signatureOf(exe).target == "cuda"
                 ? runtime::makeCudaDevice()
                 : runtime::makeHostDevice(
                       [this]() -> runtime::cpu::LibraryCalls & {
                         return cpuLibrary();
                       })),
      allocator(*device, options.memory_limit_bytes), errors(allocator.mutex()),
      remat(allocator, *device, options, stats, errors),
      predictions(
          signatureOf(exe), options,
          [this]() -> runtime::cpu::LibraryCalls & { return cpuLibrary(); }),
      ral(allocator, *device, remat, errors, options.num_threads,
          signatureOf(exe).target == "cuda"),
      graphs(signatureOf(exe).target == "cuda" ? options.cuda_graph_cache_size
                                               : 0) {}

runtime::cpu::LibraryCalls &Session::Impl::cpuLibrary() {
  if (!library)
    library = std::make_unique<runtime::cpu::LibraryCalls>(
        /*maxPrimitives=*/512, options.num_threads,
        /*winograd=*/signatureOf(exe).numStates() == 0);
  return *library;
}

Status Session::Impl::planRemat(const std::vector<Tensor> &inputs) {
  remat.begin(nullptr);
  runtime::PredictionCache::Prediction *p = nullptr;
  if (Status s = predictions.lookup(inputs, &p); !s)
    return s;
  stats.predicted_peak_bytes = p->predicted;
  const MemorySpec &mem = signatureOf(exe).memory;
  stats.predicted_peak_is_upper_bound = p->predicted >= 0 && mem.upperBound;
  if (p->planner) {
    p->planner->reset();
    remat.begin(p->planner.get());
  }
  int64_t limit = options.memory_limit_bytes;
  // No limit, or one the run holds with nothing evicted: the minimum is
  // searched only if the stats are read.
  if (limit <= 0 || (p->predicted >= 0 && limit >= p->predicted)) {
    pendingMinimum = p;
    return Status::ok();
  }
  int64_t minimum = p->minimum();
  stats.remat_minimum_peak_bytes = minimum;
  // Nothing to evict and only an upper bound: the runtime cannot tell
  // whether a lower limit holds, so it does not accept one.
  if (mem.upperBound && !p->planner && minimum >= 0 && limit < minimum)
    return Status::resourceExhausted(
        "memory limit " + std::to_string(limit) +
        " bytes is below the upper bound of the peak for these input shapes, " +
        std::to_string(minimum) + " bytes (" + mem.boundReason +
        "); nothing ran");
  if (minimum >= 0 && limit < minimum)
    return Status::resourceExhausted(
        "memory limit " + std::to_string(limit) +
        " bytes is below the minimum peak " + std::to_string(minimum) +
        " bytes these input shapes can reach by rematerialization (" +
        std::to_string(p->predicted) +
        " bytes with nothing evicted); nothing ran");
  return Status::ok();
}

void Session::Impl::beginTrace(const std::vector<Tensor> &inputs) {
  const Signature &sig = exe->signature();
  std::vector<int64_t> predicted;
  int64_t numOps = 0;
  std::vector<std::vector<int64_t>> shapes;
  for (const Tensor &t : inputs)
    shapes.push_back(t.shape());
  std::map<std::string, int64_t> dims;
  runtime::RematProfile profile;
  if (!sig.remat.liveBefore.empty() && sig.bindDims(shapes, &dims) &&
      runtime::rematProfileAt(
          sig, dims,
          [this]() -> runtime::cpu::LibraryCalls & { return cpuLibrary(); },
          &profile)) {
    numOps = static_cast<int64_t>(profile.liveBefore.size());
    for (size_t i = 0; i < profile.liveBefore.size(); ++i) {
      int64_t v = profile.liveBefore[i];
      for (int64_t p : profile.points[i])
        v = std::max(v, p);
      predicted.push_back(v);
    }
    int64_t exit = 0;
    for (int64_t p : profile.exitPoints)
      exit = std::max(exit, p);
    predicted.push_back(profile.exitPoints.empty() && !predicted.empty()
                            ? predicted.back()
                            : exit);
  }
  if (!recorder)
    recorder = std::make_unique<runtime::TraceRecorder>();
  recorder->begin(sig, numOps, std::move(predicted), options.memory_limit_bytes,
                  stats.predicted_peak_bytes);
  allocator.setRecorder(recorder.get());
  remat.setRecorder(recorder.get());
  ral.setRecorder(recorder.get());
}

void Session::Impl::endTrace() {
  allocator.setRecorder(nullptr);
  remat.setRecorder(nullptr);
  ral.setRecorder(nullptr);
  trace = recorder->finish(allocator.counters().peakBytes);
}

void Session::Impl::addDeviceTimes(runtime::cuda::Device &kd) {
  std::string error;
  std::vector<runtime::cuda::Device::TimedCall> calls = kd.finishTiming(&error);
  // Kernels by symbol; library calls in program order, matched one to one
  // when the run made as many as the signature lists (no recompute).
  const Signature &sig = exe->signature();
  std::map<std::string, const KernelSpec *> kernels;
  std::vector<const KernelSpec *> libraryCalls;
  for (const KernelSpec &k : sig.kernels) {
    if (!k.library)
      kernels.emplace(k.name, &k);
    else if (k.runs == "always")
      libraryCalls.push_back(&k);
  }
  size_t numLibrary = 0;
  for (const auto &c : calls)
    numLibrary += c.library;
  bool matchLibrary = numLibrary == libraryCalls.size();
  size_t nextLibrary = 0;
  for (const auto &c : calls) {
    const KernelSpec *k = nullptr;
    if (c.library) {
      if (matchLibrary)
        k = libraryCalls[nextLibrary];
      ++nextLibrary;
    } else if (auto it = kernels.find(c.name); it != kernels.end()) {
      k = it->second;
    }
    RunTrace::Slice slice;
    slice.name = k && !k->node.empty() ? k->node : c.name;
    slice.kind = c.library ? "library" : "kernel";
    slice.startUs = c.startUs;
    slice.durationUs = c.durationUs;
    slice.callee = c.name;
    slice.device = true;
    trace.slices.push_back(std::move(slice));
  }
}

void Session::Impl::releaseAll() {
  allocator.releaseAll();
  remat.releaseAll();
  device->releaseInputs();
}

void Session::Impl::finishStats(int64_t leaked) {
  runtime::AllocCounters c = allocator.counters();
  stats.peak_bytes = c.peakBytes;
  stats.reserved_peak_bytes = c.reservedPeakBytes;
  stats.current_bytes = c.currentBytes;
  stats.num_allocs = c.numAllocs;
  stats.leaked_allocs = leaked;
}

Status Session::Impl::failedCall(int32_t rc) {
  if (rc == -1) {
    const runtime::AllocRefusal &r = allocator.refusal();
    if (r.outOfMemory)
      return Status::resourceExhausted(
          device->outOfMemoryMessage(r.requestedBytes, r.liveBytes, r.error));
    return Status::resourceExhausted(
        "memory limit exceeded: requested " + std::to_string(r.requestedBytes) +
        " bytes with " + std::to_string(r.liveBytes) + " bytes live, limit " +
        std::to_string(r.limitBytes) + " bytes");
  }
  if (errors.status() != 0) {
    // A run-time contract check failed.
    int32_t e = errors.status();
    StatusCode code =
        (e >= 1 && e <= 4) ? static_cast<StatusCode>(e) : StatusCode::Internal;
    return Status(code, errors.message());
  }
  const Signature &sig = exe->signature();
  StatusCode code =
      (rc >= 1 && rc <= 4) ? static_cast<StatusCode>(rc) : StatusCode::Internal;
  return Status(code, "model '" +
                          (sig.model.empty() ? exe->path() : sig.model) +
                          "' returned status " + std::to_string(rc));
}

void Session::Impl::initState() {
  const Signature &sig = signatureOf(exe);
  state.assign(sig.inputs.size(), Tensor());
  numStates = sig.numStates();
  for (size_t i = 0; i < sig.inputs.size(); ++i) {
    const TensorSpec &spec = sig.inputs[i];
    if (!spec.isState)
      continue;
    const void *init = exe->stateInitValue(static_cast<int64_t>(i));
    state[i] = init ? Tensor::fromData(spec.dtype, spec.staticShape(), init)
                    : Tensor::zeros(spec.dtype, spec.staticShape());
  }
}

Status Session::Impl::findState(const std::string &name, size_t *index) const {
  const Signature &sig = signatureOf(exe);
  std::string names;
  for (size_t i = 0; i < sig.inputs.size(); ++i) {
    if (!sig.inputs[i].isState)
      continue;
    if (sig.inputs[i].name == name) {
      *index = i;
      return Status::ok();
    }
    names += (names.empty() ? "" : ", ") + sig.inputs[i].name;
  }
  return Status::invalidArgument("unknown state '" + name + "' (" +
                                 (names.empty()
                                      ? std::string("the model has no state")
                                      : "session states: " + names) +
                                 ")");
}

Status Session::Impl::heldState(size_t i, const Tensor **out) const {
  const TensorSpec &spec = exe->signature().inputs[i];
  if (!state[i].isValid())
    return Status::resourceExhausted(
        "state '" + spec.name + "': cannot allocate " +
        std::to_string(numElementsOf(spec.staticShape()) *
                       dtypeSize(spec.dtype)) +
        " bytes for its value");
  *out = &state[i];
  return Status::ok();
}

Status Session::Impl::stateFiles(std::vector<std::string> *files) const {
  const Signature &sig = exe->signature();
  files->assign(sig.inputs.size(), std::string());
  std::map<std::string, std::string> owner;
  for (size_t i = 0; i < sig.inputs.size(); ++i) {
    const TensorSpec &spec = sig.inputs[i];
    if (!spec.isState)
      continue;
    (*files)[i] = npyFileName(spec.name);
    auto [it, fresh] = owner.emplace((*files)[i], spec.name);
    if (!fresh)
      return Status::invalidArgument("states '" + it->second + "' and '" +
                                     spec.name + "' would share the file '" +
                                     it->first + "'");
  }
  return Status::ok();
}

Status Session::Impl::allInputs(const std::vector<Tensor> &inputs,
                                std::vector<Tensor> *all) const {
  const Signature &sig = exe->signature();
  size_t expected = sig.inputs.size() - static_cast<size_t>(numStates);
  if (inputs.size() != expected) {
    std::string names;
    for (const TensorSpec &spec : sig.inputs)
      if (spec.isState)
        names += (names.empty() ? "'" : ", '") + spec.name + "'";
    return Status::invalidArgument(
        "expected " + std::to_string(expected) + " inputs but got " +
        std::to_string(inputs.size()) + " (the session holds the state " +
        "inputs " + names + ")");
  }
  all->clear();
  all->reserve(sig.inputs.size());
  size_t next = 0;
  for (size_t i = 0; i < sig.inputs.size(); ++i) {
    if (!sig.inputs[i].isState) {
      all->push_back(inputs[next++]);
      continue;
    }
    const Tensor *held = nullptr;
    if (Status s = heldState(i, &held); !s)
      return s;
    all->push_back(*held);
  }
  return Status::ok();
}

/// The key of the buffer plan of a run at `inputs` (TrackedAllocator.h):
/// a hash (FNV-1a) of their dtypes and shapes, never 0.
static uint64_t shapeKey(const std::vector<Tensor> &inputs) {
  uint64_t h = 1469598103934665603ull;
  auto mix = [&](int64_t v) {
    h = (h ^ static_cast<uint64_t>(v)) * 1099511628211ull;
  };
  for (const Tensor &t : inputs) {
    mix(static_cast<int64_t>(t.dtype()));
    mix(static_cast<int64_t>(t.shape().size()));
    for (int64_t d : t.shape())
      mix(d);
  }
  return h == 0 ? 1 : h;
}

Status Session::Impl::runPlain(const std::vector<Tensor> &inputs,
                               const std::vector<const void *> &inPlace,
                               std::vector<Tensor> *results,
                               int64_t *hostBytes) {
  const Signature &sig = exe->signature();
  runtime::Invocation call(sig);
  if (Status s = call.bindInputs(inputs, *device); !s)
    return s;

  allocator.beginRun(shapeKey(inputs));
  errors.reset();
  if (options.record_trace)
    beginTrace(inputs);
  runtime::cuda::Device *kd = device->kernelDevice();
  if (options.record_trace && kd)
    kd->startTiming();
  int64_t hostBefore = kd ? kd->hostCopyBytes() : 0;
  auto fn = reinterpret_cast<disc_model_run_fn>(exe->runFunction());
  int32_t rc = ral.callModel(fn, call.inputs(), call.outputs());
  *hostBytes = kd ? kd->hostCopyBytes() - hostBefore : 0;
  if (rc != 0) {
    // Every buffer the model still holds goes back, and the session stays
    // usable.
    if (options.record_trace)
      endTrace();
    if (options.record_trace && kd) {
      std::string ignored;
      kd->finishTiming(&ignored);
    }
    Status status = failedCall(rc);
    releaseAll();
    allocator.endRun(false);
    finishStats(0);
    return status;
  }

  Status status = call.readOutputs(*device, allocator, results, inPlace);
  if (options.record_trace)
    endTrace();
  if (options.record_trace && kd)
    addDeviceTimes(*kd);
  // Whatever is still live was leaked by the model, or backs an output we
  // copied (e.g. a strided view of a temporary): free it now, counting only
  // the former as leaks.
  int64_t leaked =
      allocator.countLive([&](void *p) { return !call.references(p); });
  releaseAll();
  allocator.endRun(status.isOk());
  finishStats(leaked);
  return status;
}

bool Session::Impl::runGraph(runtime::cuda::GraphCache::Mode mode,
                             runtime::cuda::GraphEntry *entry,
                             const std::vector<Tensor> &inputs,
                             const std::vector<const void *> &inPlace,
                             std::vector<Tensor> *results, Status *status) {
  using GraphMode = runtime::cuda::GraphCache::Mode;
  runtime::cuda::Device &kd = *device->kernelDevice();
  const Signature &sig = exe->signature();
  // The inputs go to the graph's buffers, outside the graph.
  runtime::Invocation call(sig);
  device->pinInputs(&entry->inputs);
  Status bound = call.bindInputs(inputs, *device);
  device->pinInputs(nullptr);
  if (!bound) {
    if (mode == GraphMode::Capture)
      graphs.discard(entry);
    return false;
  }
  std::string why;
  if (mode == GraphMode::Capture) {
    allocator.beginRun();
    errors.reset();
    if (kd.beginCapture(entry->staging, entry->stagingBytes, &why) != 0) {
      graphs.discard(entry);
      return false;
    }
    auto fn = reinterpret_cast<disc_model_run_fn>(exe->runFunction());
    int32_t rc = ral.callModel(fn, call.inputs(), call.outputs());
    runtime::cuda::CUgraphExec exec = nullptr;
    int32_t ended = kd.endCapture(&exec, &why);
    if (rc != 0 || ended != 0) {
      // Nothing the capture recorded ran: its buffers were never
      // allocated.
      kd.destroyGraph(exec);
      allocator.abandonAll();
      if (ended == 1)
        graphs.notCapturable(entry->key);
      graphs.discard(entry);
      return false;
    }
    entry->exec = exec;
    entry->outputs = call.outputDescriptors();
    entry->checkAtEnd = kd.checkDeferred();
    runtime::AllocCounters c = allocator.counters();
    entry->peakBytes = c.peakBytes;
    entry->reservedPeakBytes = c.reservedPeakBytes;
    entry->numAllocs = c.numAllocs;
    entry->liveAtEnd.clear();
    entry->leakedAllocs = allocator.countLive([&](void *p) {
      entry->liveAtEnd.push_back(p);
      return !call.references(p);
    });
    // The graph's allocations are freed after each launch (below).
    allocator.abandonAll();
    graphs.insert(entry);
  } else {
    call.setOutputDescriptors(entry->outputs);
  }
  auto freeGraphBuffers = [&] {
    for (void *p : entry->liveAtEnd)
      device->release(p);
  };
  if (kd.launchGraph(entry->exec, &why) != 0) {
    *status = Status::internal(why);
    return true;
  }
  if (entry->checkAtEnd) {
    int64_t words[5] = {0, 0, 0, 0, 0};
    int32_t read = kd.readCheckWord(DISC_CHECK_END_OF_RUN, words, &why);
    if (read == 4) {
      freeGraphBuffers();
      *status = Status::internal(why);
      return true;
    }
    if (read == 1) {
      // A run-time check failed: the plain run reports it with the
      // model's message.
      freeGraphBuffers();
      return false;
    }
  }
  *status = call.readOutputs(*device, allocator, results, inPlace);
  freeGraphBuffers();
  stats.peak_bytes = entry->peakBytes;
  stats.reserved_peak_bytes = entry->reservedPeakBytes;
  stats.current_bytes = 0;
  stats.num_allocs = entry->numAllocs;
  stats.leaked_allocs = entry->leakedAllocs;
  (mode == GraphMode::Capture ? stats.cuda_graph_captures
                              : stats.cuda_graph_replays) = 1;
  return true;
}

Status Session::Impl::runImpl(const std::vector<Tensor> &runInputs,
                              std::vector<Tensor> *outputs) {
  const Signature &sig = exe->signature();
  stats = SessionStats();
  pendingMinimum = nullptr;
  trace = RunTrace();
  // A model with state: the run inputs and the held state tensors.
  std::vector<Tensor> withState;
  if (numStates > 0)
    if (Status s = allInputs(runInputs, &withState); !s)
      return s;
  const std::vector<Tensor> &inputs = numStates > 0 ? withState : runInputs;
  if (Status s = runtime::validateInputs(sig, inputs); !s)
    return s;
  // Feasibility first: a limit below the lowest reachable peak fails here,
  // before anything is allocated or run.
  if (Status s = planRemat(inputs); !s)
    return s;
  if (Status s = device->open(); !s)
    return s;
  allocator.releaseLive();
  device->releaseInputs();
  // Host arithmetic of a CPU model: subnormals flushed on the run's threads.
  runtime::cpu::SubnormalFlushScope flush(
      options.flush_subnormals && !device->kernelDevice(), options.num_threads);

  // A state update the model wrote into the state's own buffer (the CPU
  // session passes its state tensors as they are) stays there.
  std::vector<const void *> inPlace(sig.outputs.size(), nullptr);
  for (size_t i = 0; i < sig.outputs.size(); ++i)
    if (!sig.outputs[i].updates.empty())
      inPlace[i] =
          state[static_cast<size_t>(sig.findInput(sig.outputs[i].updates))]
              .data();
  // CUDA graphs: not under a memory limit (evictions depend on the run),
  // nor while recording a trace (the model's host code does not run in a
  // replay).
  using GraphMode = runtime::cuda::GraphCache::Mode;
  runtime::cuda::ShapeKey key;
  GraphMode mode = GraphMode::Plain;
  runtime::cuda::GraphEntry *entry = nullptr;
  bool graphable = options.cuda_graph_cache_size > 0 &&
                   options.memory_limit_bytes <= 0 && !options.record_trace &&
                   device->kernelDevice();
  if (graphable) {
    std::vector<int64_t> bytes;
    for (const Tensor &t : inputs) {
      key.push_back(t.shape());
      bytes.push_back(t.byteSize());
    }
    mode = graphs.plan(*device->kernelDevice(), key, bytes, &entry);
  }
  std::vector<Tensor> results;
  Status status;
  if (mode == GraphMode::Plain ||
      !runGraph(mode, entry, inputs, inPlace, &results, &status)) {
    results.clear();
    int64_t hostBytes = 0;
    status = runPlain(inputs, inPlace, &results, &hostBytes);
    if (graphable && status)
      graphs.ranPlainly(key, hostBytes);
  }
  if (!status)
    return status;
  // Training state: check every update, then commit them all (a state
  // takes over the output's buffer) and return the other outputs.
  std::vector<size_t> updated(sig.outputs.size(), sig.inputs.size());
  for (size_t i = 0; i < sig.outputs.size(); ++i) {
    const TensorSpec &spec = sig.outputs[i];
    if (spec.updates.empty())
      continue;
    size_t in = static_cast<size_t>(sig.findInput(spec.updates));
    updated[i] = in;
    if (!results[i].isValid())
      continue; // written in place
    if (results[i].shape() != state[in].shape())
      return Status::internal(
          "output '" + spec.name + "' updates state '" + spec.updates +
          "' of shape " + shapeToString(sig.inputs[in].staticShape()) +
          " but the model produced shape " + shapeToString(results[i].shape()));
  }
  outputs->clear();
  for (size_t i = 0; i < sig.outputs.size(); ++i) {
    if (updated[i] < sig.inputs.size()) {
      if (results[i].isValid())
        state[updated[i]] = std::move(results[i]);
    } else {
      outputs->push_back(std::move(results[i]));
    }
  }
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// Session
//===----------------------------------------------------------------------===//

Session::Session(std::shared_ptr<const Executable> executable,
                 SessionOptions options)
    : impl_(std::make_unique<Impl>(std::move(executable), options)) {
  if (impl_->exe)
    impl_->initState();
}

Session::~Session() {
  if (impl_) {
    impl_->releaseAll();
    impl_->allocator.releaseBlockCache();
    impl_->allocator.releasePlans();
  }
}

Session::Session(Session &&) noexcept = default;
Session &Session::operator=(Session &&other) noexcept {
  if (this != &other) {
    if (impl_) {
      impl_->releaseAll();
      impl_->allocator.releaseBlockCache();
      impl_->allocator.releasePlans();
    }
    impl_ = std::move(other.impl_);
  }
  return *this;
}

const SessionStats &Session::stats() const {
  if (impl_->pendingMinimum) {
    impl_->stats.remat_minimum_peak_bytes = impl_->pendingMinimum->minimum();
    impl_->pendingMinimum = nullptr;
  }
  return impl_->stats;
}
const RunTrace &Session::lastTrace() const { return impl_->trace; }
const SessionOptions &Session::options() const { return impl_->options; }
const Executable &Session::executable() const { return *impl_->exe; }

Status Session::validateInputs(const std::vector<Tensor> &inputs) const {
  if (!impl_ || !impl_->exe)
    return Status::internal("session has no executable");
  if (impl_->numStates == 0)
    return runtime::validateInputs(impl_->exe->signature(), inputs);
  std::vector<Tensor> all;
  if (Status s = impl_->allInputs(inputs, &all); !s)
    return s;
  return runtime::validateInputs(impl_->exe->signature(), all);
}

namespace {

/// The checks both forms of Session::run begin with; clears `*outputs`.
Status checkRun(const Session::Impl *impl, std::vector<Tensor> *outputs) {
  if (!outputs)
    return Status::invalidArgument("outputs must not be null");
  outputs->clear();
  if (!impl || !impl->exe)
    return Status::internal("session has no executable");
  return Status::ok();
}

} // namespace

Status Session::run(const std::vector<Tensor> &inputs,
                    std::vector<Tensor> *outputs) {
  if (Status s = checkRun(impl_.get(), outputs); !s)
    return s;
  auto start = std::chrono::steady_clock::now();
  Status status;
  try {
    status = impl_->runImpl(inputs, outputs);
  } catch (const std::bad_alloc &) {
    status = Status::resourceExhausted("host out of memory in the runtime");
  } catch (const std::exception &e) {
    status = Status::internal(std::string("runtime exception: ") + e.what());
  }
  if (!status)
    outputs->clear();
  std::chrono::duration<double, std::milli> elapsed =
      std::chrono::steady_clock::now() - start;
  impl_->stats.last_latency_ms = elapsed.count();
  return status;
}

Status Session::run(const std::map<std::string, Tensor> &inputs,
                    std::vector<Tensor> *outputs) {
  if (Status s = checkRun(impl_.get(), outputs); !s)
    return s;
  const Signature &sig = impl_->exe->signature();
  for (const auto &entry : inputs) {
    int64_t index = sig.findInput(entry.first);
    if (index >= 0 && sig.inputs[index].isState)
      return Status::invalidArgument("input '" + entry.first +
                                     "' is a state the session holds "
                                     "(Session::setState sets it)");
    if (index < 0) {
      std::string names;
      for (const TensorSpec &spec : sig.inputs)
        if (!spec.isState)
          names += (names.empty() ? "" : ", ") + spec.name;
      return Status::invalidArgument("unknown input '" + entry.first +
                                     "' (model inputs: " + names + ")");
    }
  }
  std::vector<Tensor> ordered;
  ordered.reserve(sig.inputs.size());
  for (const TensorSpec &spec : sig.inputs) {
    if (spec.isState)
      continue;
    auto it = inputs.find(spec.name);
    if (it == inputs.end())
      return Status::invalidArgument("missing input '" + spec.name + "'");
    ordered.push_back(it->second);
  }
  return run(ordered, outputs);
}

//===----------------------------------------------------------------------===//
// Training state
//===----------------------------------------------------------------------===//

namespace {

/// "float32 [3, 4]".
std::string describe(DType dtype, const std::vector<int64_t> &shape) {
  return std::string(dtypeName(dtype)) + " " + shapeToString(shape);
}

} // namespace

std::vector<std::string> Session::stateNames() const {
  std::vector<std::string> names;
  if (!impl_ || !impl_->exe)
    return names;
  for (const TensorSpec &spec : impl_->exe->signature().inputs)
    if (spec.isState)
      names.push_back(spec.name);
  return names;
}

Status Session::getState(const std::string &name, Tensor *out) const {
  if (!out)
    return Status::invalidArgument("getState: out must not be null");
  if (!impl_ || !impl_->exe)
    return Status::internal("session has no executable");
  size_t i = 0;
  const Tensor *held = nullptr;
  if (Status s = impl_->findState(name, &i); !s)
    return s;
  if (Status s = impl_->heldState(i, &held); !s)
    return s;
  Tensor copy = held->clone();
  if (!copy.isValid())
    return Status::resourceExhausted("state '" + name + "': cannot allocate " +
                                     std::to_string(held->byteSize()) +
                                     " bytes for a copy");
  *out = std::move(copy);
  return Status::ok();
}

Status Session::setState(const std::string &name, const Tensor &value) {
  if (!impl_ || !impl_->exe)
    return Status::internal("session has no executable");
  size_t i = 0;
  if (Status s = impl_->findState(name, &i); !s)
    return s;
  const TensorSpec &spec = impl_->exe->signature().inputs[i];
  std::string who = "state '" + name + "'";
  if (!value.isValid())
    return Status::invalidArgument(who + ": tensor is empty (no buffer)");
  if (value.dtype() != spec.dtype)
    return Status::invalidArgument(who + ": expected dtype " +
                                   dtypeName(spec.dtype) + " but got " +
                                   dtypeName(value.dtype()));
  if (value.shape() != spec.staticShape())
    return Status::invalidArgument(who + ": expected shape " +
                                   shapeToString(spec.staticShape()) +
                                   " but got " + shapeToString(value.shape()));
  if (value.numElements() > 0 && !value.data())
    return Status::invalidArgument(who + ": no data");
  Tensor copy = value.clone();
  if (!copy.isValid())
    return Status::resourceExhausted(who + ": cannot allocate " +
                                     std::to_string(value.byteSize()) +
                                     " bytes for a copy");
  impl_->state[i] = std::move(copy);
  return Status::ok();
}

Status Session::saveState(const std::string &dir) const {
  if (!impl_ || !impl_->exe)
    return Status::internal("session has no executable");
  std::vector<std::string> files;
  if (Status s = impl_->stateFiles(&files); !s)
    return s;
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec || !std::filesystem::is_directory(dir, ec))
    return Status::invalidArgument(
        "cannot create the state folder '" + dir + "'" +
        (ec ? ": " + ec.message() : std::string(": not a folder")));
  // Each file is written next to its place and renamed over it once all
  // are written, so a save that fails to write leaves the files of an
  // earlier save whole.
  const Signature &sig = impl_->exe->signature();
  std::vector<std::string> written;
  auto removeWritten = [&] {
    for (const std::string &path : written)
      std::filesystem::remove(path, ec);
  };
  for (size_t i = 0; i < sig.inputs.size(); ++i) {
    if (!sig.inputs[i].isState)
      continue;
    const Tensor *held = nullptr;
    Status s = impl_->heldState(i, &held);
    if (s)
      s = writeNpy(dir + "/" + files[i] + ".tmp", *held);
    if (!s) {
      removeWritten();
      return Status(s.code(),
                    "state '" + sig.inputs[i].name + "': " + s.message());
    }
    written.push_back(dir + "/" + files[i] + ".tmp");
  }
  for (size_t i = 0; i < sig.inputs.size(); ++i) {
    if (!sig.inputs[i].isState)
      continue;
    std::string path = dir + "/" + files[i];
    std::filesystem::rename(path + ".tmp", path, ec);
    if (ec) {
      removeWritten();
      return Status::invalidArgument("state '" + sig.inputs[i].name +
                                     "': cannot write '" + path +
                                     "': " + ec.message());
    }
  }
  return Status::ok();
}

Status Session::loadState(const std::string &dir) {
  if (!impl_ || !impl_->exe)
    return Status::internal("session has no executable");
  std::vector<std::string> files;
  if (Status s = impl_->stateFiles(&files); !s)
    return s;
  const Signature &sig = impl_->exe->signature();
  std::error_code ec;
  if (sig.numStates() > 0 && !std::filesystem::is_directory(dir, ec))
    return Status::invalidArgument("state folder '" + dir +
                                   "' does not exist or is not a folder");
  // Read and check every file before any state changes.
  std::vector<Tensor> loaded(sig.inputs.size());
  for (size_t i = 0; i < sig.inputs.size(); ++i) {
    const TensorSpec &spec = sig.inputs[i];
    if (!spec.isState)
      continue;
    std::string who = "state '" + spec.name + "'";
    std::string path = dir + "/" + files[i];
    if (Status s = readNpy(path, &loaded[i]); !s)
      return Status(s.code(), who + ": " + s.message());
    const Tensor &t = loaded[i];
    if (t.dtype() != spec.dtype || t.shape() != spec.staticShape())
      return Status::invalidArgument(
          who + ": '" + path + "' holds " + describe(t.dtype(), t.shape()) +
          ", the state is " + describe(spec.dtype, spec.staticShape()));
  }
  for (size_t i = 0; i < sig.inputs.size(); ++i)
    if (sig.inputs[i].isState)
      impl_->state[i] = std::move(loaded[i]);
  return Status::ok();
}

const std::string &Session::lossName() const {
  static const std::string kNone;
  return impl_ && impl_->exe ? impl_->exe->signature().loss : kNone;
}

} // namespace disc
