//===- Runtime.h - DISC runtime C++ API: tensors, executables, sessions ---===//
//
// Loads a compiled `model.so` (see docs/runtime-abi.md), validates inputs
// against its signature and runs it with a tracked, optionally limited,
// allocator. No exception escapes this API: every fallible call returns a
// `disc::Status`. See docs/runtime-api.md for a guided tour.
//
//===----------------------------------------------------------------------===//
#ifndef DISC_RUNTIME_RUNTIME_H
#define DISC_RUNTIME_RUNTIME_H

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace disc {

//===----------------------------------------------------------------------===//
// Status
//===----------------------------------------------------------------------===//

/// Status codes; the numeric values are those of the C API and of
/// `disc_model_run` (docs/runtime-abi.md).
enum class StatusCode : int32_t {
  Ok = 0,
  InvalidArgument = 1,   ///< Bad input: count, rank, dtype, dim, range.
  ResourceExhausted = 2, ///< Out of memory or over the session memory limit.
  LoadFailed = 3,        ///< dlopen, missing symbol, ABI version, signature.
  Internal = 4,          ///< Model error or runtime bug.
};

/// Returns "ok", "invalid argument", ... for `code`.
const char *statusCodeName(StatusCode code);

/// A status code plus a human-readable message (empty when ok). Cheap to
/// copy. Thread-safety: a value type, no shared state.
class Status {
public:
  Status() = default;
  Status(StatusCode code, std::string message)
      : code_(code), message_(std::move(message)) {}
  static Status ok() { return Status(); }
  static Status invalidArgument(std::string msg) {
    return Status(StatusCode::InvalidArgument, std::move(msg));
  }
  static Status resourceExhausted(std::string msg) {
    return Status(StatusCode::ResourceExhausted, std::move(msg));
  }
  static Status loadFailed(std::string msg) {
    return Status(StatusCode::LoadFailed, std::move(msg));
  }
  static Status internal(std::string msg) {
    return Status(StatusCode::Internal, std::move(msg));
  }

  bool isOk() const { return code_ == StatusCode::Ok; }
  explicit operator bool() const { return isOk(); }
  StatusCode code() const { return code_; }
  const std::string &message() const { return message_; }
  /// "ok" or "<code name>: <message>".
  std::string toString() const;

private:
  StatusCode code_ = StatusCode::Ok;
  std::string message_;
};

//===----------------------------------------------------------------------===//
// Element types
//===----------------------------------------------------------------------===//

/// Element types of the ABI. The numeric values are those of the C API
/// (`disc_dtype` in c_api.h).
enum class DType : int32_t {
  Float16 = 0,
  Float32,
  Float64,
  Int8,
  Int16,
  Int32,
  Int64,
  UInt8,
  UInt16,
  UInt32,
  UInt64,
  Bool,
};

/// Signature spelling: "float32", "int64", "bool", ...
const char *dtypeName(DType dtype);
/// Parses a signature spelling; returns false for an unknown name.
bool parseDType(std::string_view name, DType *out);
/// Size of one element in bytes (bool: 1).
int64_t dtypeSize(DType dtype);
bool isFloatingPoint(DType dtype);
bool isSigned(DType dtype);

/// IEEE half <-> float conversions (round to nearest even).
float halfToFloat(uint16_t h);
uint16_t floatToHalf(float f);

/// "[2, 3, 4]"; "[]" for a scalar.
std::string shapeToString(const std::vector<int64_t> &shape);
/// Product of the dims (1 for a scalar); -1 on a negative dim or overflow.
int64_t numElementsOf(const std::vector<int64_t> &shape);

//===----------------------------------------------------------------------===//
// Tensor
//===----------------------------------------------------------------------===//

/// A dense, contiguous, row-major tensor on the host. The buffer is
/// reference counted: copying a Tensor is cheap and the copies share the
/// buffer (use `clone()` for a deep copy). Buffers are aligned to 64 bytes
/// when the Tensor allocates them.
/// Thread-safety: distinct Tensor objects may be used from different threads;
/// concurrent writes to a shared buffer must be synchronized by the caller.
class Tensor {
public:
  /// An empty tensor (float32, rank 0, no buffer); `isValid()` is false.
  Tensor() = default;

  /// A zero-filled tensor. Returns an empty tensor if the shape has a
  /// negative dim or the allocation fails.
  static Tensor zeros(DType dtype, std::vector<int64_t> shape);
  /// Copies numElements*dtypeSize bytes from `data` (row-major).
  static Tensor fromData(DType dtype, std::vector<int64_t> shape,
                         const void *data);
  /// Typed convenience: `Tensor::fromVector<float>({2, 2}, {1, 2, 3, 4})`.
  /// `values.size()` must equal the number of elements.
  template <typename T>
  static Tensor fromVector(std::vector<int64_t> shape,
                           const std::vector<T> &values);
  /// Wraps external memory: `data` stays valid until `owner` is released
  /// (the last copy of the Tensor is destroyed). `owner` may be null for
  /// memory the caller keeps alive for the Tensor's lifetime.
  static Tensor adopt(DType dtype, std::vector<int64_t> shape, void *data,
                      std::shared_ptr<void> owner);

  bool isValid() const { return valid_; }
  DType dtype() const { return dtype_; }
  const std::vector<int64_t> &shape() const { return shape_; }
  int64_t rank() const { return static_cast<int64_t>(shape_.size()); }
  int64_t numElements() const { return numElementsOf(shape_); }
  /// numElements() * dtypeSize(dtype()), in bytes.
  int64_t byteSize() const { return numElements() * dtypeSize(dtype_); }
  void *data() { return data_; }
  const void *data() const { return data_; }
  template <typename T>
  T *data() {
    return static_cast<T *>(data_);
  }
  template <typename T>
  const T *data() const {
    return static_cast<const T *>(data_);
  }
  /// Element `i` (flat row-major index) converted to double; for summaries.
  double elementAsDouble(int64_t i) const;
  /// Deep copy into a freshly allocated buffer.
  Tensor clone() const;

private:
  bool valid_ = false;
  DType dtype_ = DType::Float32;
  std::vector<int64_t> shape_;
  void *data_ = nullptr;
  std::shared_ptr<void> owner_;
};

template <typename T>
Tensor Tensor::fromVector(std::vector<int64_t> shape,
                          const std::vector<T> &values) {
  DType dt;
  if constexpr (std::is_same_v<T, float>)
    dt = DType::Float32;
  else if constexpr (std::is_same_v<T, double>)
    dt = DType::Float64;
  else if constexpr (std::is_same_v<T, int8_t>)
    dt = DType::Int8;
  else if constexpr (std::is_same_v<T, int16_t>)
    dt = DType::Int16;
  else if constexpr (std::is_same_v<T, int32_t>)
    dt = DType::Int32;
  else if constexpr (std::is_same_v<T, int64_t>)
    dt = DType::Int64;
  else if constexpr (std::is_same_v<T, uint8_t>)
    dt = DType::UInt8;
  else if constexpr (std::is_same_v<T, uint16_t>)
    dt = DType::UInt16;
  else if constexpr (std::is_same_v<T, uint32_t>)
    dt = DType::UInt32;
  else if constexpr (std::is_same_v<T, uint64_t>)
    dt = DType::UInt64;
  else if constexpr (std::is_same_v<T, bool>)
    dt = DType::Bool;
  else
    static_assert(sizeof(T) == 0, "unsupported element type");
  if (numElementsOf(shape) != static_cast<int64_t>(values.size()))
    return Tensor();
  if constexpr (std::is_same_v<T, bool>) {
    std::vector<uint8_t> bytes(values.begin(), values.end());
    return fromData(dt, std::move(shape), bytes.data());
  } else {
    return fromData(dt, std::move(shape), values.data());
  }
}

//===----------------------------------------------------------------------===//
// Signature
//===----------------------------------------------------------------------===//

/// One dim of a signature shape: static (`size >= 0`), named dynamic
/// (`symbol` non-empty) or unknown ("?", outputs only).
struct DimSpec {
  int64_t size = -1;
  std::string symbol;
  bool isStatic() const { return size >= 0; }
  bool isSymbolic() const { return !symbol.empty(); }
  bool isUnknown() const { return size < 0 && symbol.empty(); }
  /// "4", "batch" or "?".
  std::string toString() const;
};

struct TensorSpec {
  std::string name;
  DType dtype = DType::Float32;
  std::vector<DimSpec> shape;
  int64_t rank() const { return static_cast<int64_t>(shape.size()); }
};

/// Valid range of a named dim: min <= size <= max (max absent = unbounded).
struct SymbolSpec {
  std::string name;
  int64_t min = 0;
  std::optional<int64_t> max;
};

/// A size expression of the memory model (docs/memory.md): an integer, a
/// named input dim, or an operation on two sub-expressions.
struct SizeExpr {
  enum class Kind { Constant, Symbol, Add, Mul, FloorDiv, CeilDiv, Mod };
  Kind kind = Kind::Constant;
  int64_t value = 0;              ///< Constant
  std::string symbol;             ///< Symbol: an input dim name
  std::vector<SizeExpr> operands; ///< Add..Mod: exactly two

  /// Value with the named dims bound; nullopt when a name is unbound, on a
  /// division by zero or on overflow.
  std::optional<int64_t>
  evaluate(const std::map<std::string, int64_t> &dims) const;
};

/// A library call site of the memory model (docs/memory.md): the live
/// bytes at its program point and the operands it passes (sizes and
/// strides in elements), so the prediction can add the temporaries oneDNN
/// takes for the actual shapes.
struct LibraryCallSpec {
  int32_t call = 0; ///< DISC_LIB_* (abi.h)
  SizeExpr at;
  std::vector<std::vector<SizeExpr>> sizes, strides; ///< per operand
  std::vector<int64_t> attrs;
};

/// The "memory" entry of the signature: the compiler's prediction of the
/// peak bytes live through the context allocator during one run.
struct MemorySpec {
  /// False for a model compiled without a memory model.
  bool present = false;
  /// False when the peak depends on sizes known only while running (a
  /// data-dependent size such as NonZero's count); `reason` says which.
  bool predictable = false;
  std::string reason;
  /// The predicted peak is the max of these, in bytes.
  std::vector<SizeExpr> peakBytes;
  /// The same expressions as text (`N*H*W*256 + 64`).
  std::vector<std::string> peakBytesText;
  /// Allocator calls of one run, as counted by the compiler.
  int64_t numAllocs = -1;
  /// Library calls (oneDNN) and where they run; their temporaries add to
  /// the live bytes at that point.
  std::vector<LibraryCallSpec> libraryCalls;
};

/// One rematerialization candidate (the signature's "remat" list): a
/// buffer the model can give up after its last use before a long gap and
/// recompute before its next use (docs/memory.md, "Rematerialization").
struct RematCandidateSpec {
  /// The op that produces it (name and ONNX node, for reports).
  std::string producer;
  /// Op index of its last use before the gap, and of the op its
  /// regenerate point precedes (its next use, or earlier when another
  /// candidate's recompute reads it).
  int64_t evictAfter = 0;
  int64_t regenerateBefore = 0;
  /// Position among all regenerations (several can precede one op; a
  /// candidate read by another's recompute comes first). Default: the id.
  int64_t regenerateOrder = 0;
  /// Allocator bytes of its buffer.
  SizeExpr bytes;
  std::string bytesText;
  /// Bytes on top of the live bytes before its next use while the model
  /// recomputes it.
  SizeExpr recomputePeakBytes;
  /// The same at every point of the recompute, when given: the largest is
  /// the exact peak (recomputePeakBytes may be an upper bound).
  std::vector<SizeExpr> recomputePoints;
  /// Estimated FLOPs of the recompute.
  SizeExpr flops;
  std::string flopsText;
};

/// The "remat" entry of the signature: the live bytes of every program
/// point of a run with nothing evicted (op by op) and the candidates.
struct RematSpec {
  bool present = false;
  std::vector<SizeExpr> liveBefore;
  std::vector<std::vector<SizeExpr>> points;
  std::vector<SizeExpr> exitPoints;
  std::vector<RematCandidateSpec> candidates;
};

/// The parsed `disc_model_signature()` JSON (docs/runtime-abi.md).
struct Signature {
  int32_t abiVersion = 1;
  std::string model;
  /// Where the model runs: "cpu" or "cuda" (docs/cuda.md); a "cuda" model
  /// loads only where the CUDA driver reports a device.
  std::string target = "cpu";
  /// GPU architecture a "cuda" model was compiled for ("sm_80"); else empty.
  std::string gpuArch;
  std::vector<TensorSpec> inputs;
  std::vector<TensorSpec> outputs;
  std::vector<SymbolSpec> symbols;
  MemorySpec memory;
  RematSpec remat;

  /// Null when `name` is not listed in `symbols`.
  const SymbolSpec *findSymbol(std::string_view name) const;
  /// Index of the input named `name`, or -1.
  int64_t findInput(std::string_view name) const;
  /// Index of the output named `name`, or -1.
  int64_t findOutput(std::string_view name) const;

  /// Parses signature JSON. Errors: LoadFailed naming the offending field.
  static Status parse(std::string_view json, Signature *out);

  /// Binds every named dim to its size in `inputShapes` (one shape per
  /// input, in signature order), checking counts, ranks, static dims,
  /// agreement of dims with the same name and the symbol ranges, exactly as
  /// `Session::run` does. Errors: InvalidArgument naming the input and dim.
  Status bindDims(const std::vector<std::vector<int64_t>> &inputShapes,
                  std::map<std::string, int64_t> *out) const;
};

//===----------------------------------------------------------------------===//
// Executable
//===----------------------------------------------------------------------===//

/// A loaded `model.so`: the dlopen handle, its entry points and its parsed
/// signature. Thread-safety: immutable after `load`; share it freely
/// (through the shared_ptr) between threads and sessions. The library is
/// dlclose'd when the last reference goes away.
class Executable {
public:
  /// dlopen(path, RTLD_LOCAL | RTLD_NOW), checks `disc_model_abi_version()
  /// == DISC_MODEL_ABI_VERSION` and parses `disc_model_signature()`. A CUDA
  /// model also needs the CUDA driver and a device. Errors: LoadFailed with
  /// the dlerror text, the missing symbol, the bad version, the JSON error
  /// or "no CUDA device: <reason>".
  static Status load(const std::string &path,
                     std::shared_ptr<const Executable> *out);

  ~Executable();
  Executable(const Executable &) = delete;
  Executable &operator=(const Executable &) = delete;

  const Signature &signature() const { return signature_; }
  /// The raw signature JSON as returned by the model.
  const std::string &signatureJson() const { return signatureJson_; }
  const std::string &path() const { return path_; }

  /// Predicts the peak bytes live through the context allocator when the
  /// model runs on inputs of these shapes (one per input, signature order),
  /// without running it: the max of `signature().memory.peakBytes` with
  /// the dims bound (docs/memory.md). On success `*bytes` is the peak, or
  /// -1 when the model's peak cannot be predicted before running
  /// (`signature().memory.reason` says why, e.g. a data-dependent size).
  /// Errors: InvalidArgument for shapes the model rejects (same messages
  /// as Session::run); Internal when an expression cannot be evaluated.
  /// Library calls (oneDNN) add their temporaries (scratchpad, reordered
  /// operands) at their program points: their primitives are created (not
  /// run) for these shapes on `numThreads` threads (0 = the OpenMP
  /// default), which must match the session's SessionOptions::num_threads.
  Status predictPeakBytes(const std::vector<std::vector<int64_t>> &inputShapes,
                          int64_t *bytes) const;
  Status predictPeakBytes(const std::vector<std::vector<int64_t>> &inputShapes,
                          int64_t *bytes, int32_t numThreads) const;

  /// The lowest peak a run on these shapes can reach by evicting
  /// rematerialization candidates (the lowest of evicting none, all, and a
  /// greedy descent; docs/memory.md). Equals the predicted peak for a model
  /// without candidates; -1 when the peak cannot
  /// be predicted. A memory limit below it cannot be met. Errors as
  /// predictPeakBytes.
  Status
  predictMinimumPeakBytes(const std::vector<std::vector<int64_t>> &inputShapes,
                          int64_t *bytes) const;

  /// The model entry point (`disc_model_run_fn` from abi.h).
  void *runFunction() const { return runFn_; }

private:
  Executable() = default;
  static Status loadImpl(const std::string &path,
                         std::shared_ptr<const Executable> *out);
  std::string path_;
  void *handle_ = nullptr;
  void *runFn_ = nullptr;
  std::string signatureJson_;
  Signature signature_;
};

//===----------------------------------------------------------------------===//
// Session
//===----------------------------------------------------------------------===//

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
  /// Peak bytes the session held from the OS (or the device) during the
  /// last run: the blocks of live buffers (a reused block may be larger
  /// than its request) plus the freed blocks kept for reuse. At least
  /// `peak_bytes`; below twice the highest peak of the session's runs
  /// (docs/runtime-api.md, "Freed host blocks").
  int64_t reserved_peak_bytes = 0;
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

  /// Runs the model. `inputs` are in signature order; on success `*outputs`
  /// receives one tensor per signature output (contiguous, owning its
  /// buffer, independent of the session's lifetime).
  /// Errors: InvalidArgument for a bad input (message names the input and
  /// dim), ResourceExhausted when the memory limit is exceeded or the host is
  /// out of memory (message gives requested bytes, live bytes, limit),
  /// Internal or the model's status when `disc_model_run` fails. On error
  /// `*outputs` is cleared and every allocation of the run is freed.
  Status run(const std::vector<Tensor> &inputs, std::vector<Tensor> *outputs);
  /// Same; lets `session.run({a, b}, &outputs)` pick the positional form.
  Status run(std::initializer_list<Tensor> inputs,
             std::vector<Tensor> *outputs) {
    return run(std::vector<Tensor>(inputs), outputs);
  }
  /// Same, with inputs given by name. Errors additionally: a missing or an
  /// unknown input name (InvalidArgument).
  Status run(const std::map<std::string, Tensor> &inputs,
             std::vector<Tensor> *outputs);

  /// Checks `inputs` against the signature without running the model.
  Status validateInputs(const std::vector<Tensor> &inputs) const;

  const SessionStats &stats() const;
  const SessionOptions &options() const;
  const Executable &executable() const;

  struct Impl;

private:
  std::unique_ptr<Impl> impl_;
};

} // namespace disc

#endif // DISC_RUNTIME_RUNTIME_H
