//===- Session.cpp - Runs of a model: the parts of a session together -----===//
//
// A Session owns one of each part of a run (docs/runtime-api.md): the
// Device the model runs on (Device.h), the TrackedAllocator of its buffers,
// the PredictionCache of its memory predictions, the RematRuntime of its
// rematerialization steps, the RunErrors the model reports and the
// RalContext that hands all of them to the model. A run validates and
// stages the inputs (Invocation.h), plans against the memory limit, calls
// the model and turns its outputs into Tensors.
//
//===----------------------------------------------------------------------===//

#include "disc/runtime/Runtime.h"
#include "disc/runtime/abi.h"

#include "../cpu/LibraryCalls.h"
#include "Device.h"
#include "Invocation.h"
#include "PredictionCache.h"
#include "RalContext.h"
#include "RematPlanner.h"
#include "RematRuntime.h"
#include "RunErrors.h"
#include "TrackedAllocator.h"

#include <chrono>

namespace disc {

/// Per-session state; its parts point at each other, so it never moves.
/// Hidden: Runtime.h declares it, but it is no part of the library's API.
struct __attribute__((visibility("hidden"))) Session::Impl {
  Impl(std::shared_ptr<const Executable> executable, SessionOptions opts);

  std::shared_ptr<const Executable> exe;
  SessionOptions options;
  SessionStats stats;
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
          signatureOf(exe).target == "cuda") {}

runtime::cpu::LibraryCalls &Session::Impl::cpuLibrary() {
  if (!library)
    library = std::make_unique<runtime::cpu::LibraryCalls>(
        /*maxPrimitives=*/512, options.num_threads);
  return *library;
}

Status Session::Impl::planRemat(const std::vector<Tensor> &inputs) {
  remat.begin(nullptr);
  runtime::PredictionCache::Prediction *p = nullptr;
  if (Status s = predictions.lookup(inputs, &p); !s)
    return s;
  stats.predicted_peak_bytes = p->predicted;
  stats.remat_minimum_peak_bytes = p->minimum;
  if (p->planner) {
    p->planner->reset();
    remat.begin(p->planner.get());
  }
  int64_t limit = options.memory_limit_bytes;
  if (limit > 0 && p->minimum >= 0 && limit < p->minimum)
    return Status::resourceExhausted(
        "memory limit " + std::to_string(limit) +
        " bytes is below the minimum peak " + std::to_string(p->minimum) +
        " bytes these input shapes can reach by rematerialization (" +
        std::to_string(p->predicted) +
        " bytes with nothing evicted); nothing ran");
  return Status::ok();
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

Status Session::Impl::runImpl(const std::vector<Tensor> &inputs,
                              std::vector<Tensor> *outputs) {
  const Signature &sig = exe->signature();
  stats = SessionStats();
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
  runtime::Invocation call(sig);
  if (Status s = call.bindInputs(inputs, *device); !s)
    return s;

  allocator.beginRun();
  errors.reset();
  auto fn = reinterpret_cast<disc_model_run_fn>(exe->runFunction());
  int32_t rc = ral.callModel(fn, call.inputs(), call.outputs());
  if (rc != 0) {
    // Every buffer the model still holds goes back, and the session stays
    // usable.
    Status status = failedCall(rc);
    releaseAll();
    finishStats(0);
    return status;
  }

  std::vector<Tensor> results;
  Status status = call.readOutputs(*device, allocator, &results);
  // Whatever is still live was leaked by the model, or backs an output we
  // copied (e.g. a strided view of a temporary): free it now, counting only
  // the former as leaks.
  int64_t leaked =
      allocator.countLive([&](void *p) { return !call.references(p); });
  releaseAll();
  finishStats(leaked);
  if (!status)
    return status;
  *outputs = std::move(results);
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// Session
//===----------------------------------------------------------------------===//

Session::Session(std::shared_ptr<const Executable> executable,
                 SessionOptions options)
    : impl_(std::make_unique<Impl>(std::move(executable), options)) {}

Session::~Session() {
  if (impl_) {
    impl_->releaseAll();
    impl_->allocator.releaseBlockCache();
  }
}

Session::Session(Session &&) noexcept = default;
Session &Session::operator=(Session &&other) noexcept {
  if (this != &other) {
    if (impl_) {
      impl_->releaseAll();
      impl_->allocator.releaseBlockCache();
    }
    impl_ = std::move(other.impl_);
  }
  return *this;
}

const SessionStats &Session::stats() const { return impl_->stats; }
const SessionOptions &Session::options() const { return impl_->options; }
const Executable &Session::executable() const { return *impl_->exe; }

Status Session::validateInputs(const std::vector<Tensor> &inputs) const {
  if (!impl_ || !impl_->exe)
    return Status::internal("session has no executable");
  return runtime::validateInputs(impl_->exe->signature(), inputs);
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
    if (sig.findInput(entry.first) < 0) {
      std::string names;
      for (const TensorSpec &spec : sig.inputs)
        names += (names.empty() ? "" : ", ") + spec.name;
      return Status::invalidArgument("unknown input '" + entry.first +
                                     "' (model inputs: " + names + ")");
    }
  }
  std::vector<Tensor> ordered;
  ordered.reserve(sig.inputs.size());
  for (const TensorSpec &spec : sig.inputs) {
    auto it = inputs.find(spec.name);
    if (it == inputs.end())
      return Status::invalidArgument("missing input '" + spec.name + "'");
    ordered.push_back(it->second);
  }
  return run(ordered, outputs);
}

} // namespace disc
