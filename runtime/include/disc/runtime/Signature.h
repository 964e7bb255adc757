//===- Signature.h - A model's signature ------------------------*- C++ -*-===//
//
// The parsed `disc_model_signature()` JSON of a model.so
// (docs/runtime-abi.md): its inputs and outputs with their static, named
// and unknown dims, the ranges of the named dims, the memory model
// (docs/memory.md: peak bytes as size expressions, library calls), the
// rematerialization candidates and the training state (state inputs, the
// outputs that update them, the loss output).
//
// Part of the C++ API; "disc/runtime/Runtime.h" includes every part.
//
//===----------------------------------------------------------------------===//
#ifndef DISC_RUNTIME_SIGNATURE_H
#define DISC_RUNTIME_SIGNATURE_H

#include "disc/runtime/DType.h"
#include "disc/runtime/Status.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace disc {

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
  /// Inputs only: the session holds this input (training state,
  /// docs/runtime-abi.md "Training state"); `Session::run` does not take
  /// it. Its shape is static.
  bool isState = false;
  /// State inputs only: the exported data symbol of model.so holding the
  /// initial value (row-major, numElements * dtypeSize bytes), or "zeros".
  std::string init;
  /// Outputs only: the name of the state input this output replaces after
  /// a successful run (`Session::run` does not return it); empty for an
  /// ordinary output.
  std::string updates;
  /// Inputs only: an ONNX optional tensor, passed as [count, dims...] with
  /// count 1 (the tensor) or 0 (an empty optional); the first dim is the
  /// count (docs/runtime-abi.md).
  bool optional = false;

  int64_t rank() const { return static_cast<int64_t>(shape.size()); }
  /// The dims as sizes, -1 for a named or unknown dim.
  std::vector<int64_t> staticShape() const;
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
  /// Live bytes at the call: in the memory entry, at its program point; in
  /// a remat candidate, on top of the live bytes before the op it is
  /// regenerated for (a point of its recompute).
  SizeExpr at;
  /// Op index of the call in the order (memory entry); -1 when not given.
  int64_t index = -1;
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
  /// True when the prediction is an upper bound of the peak rather than
  /// the peak itself (tensors allocated in the regions of If/Loop, or a
  /// data-dependent size at its bound); `boundReason` says which.
  bool upperBound = false;
  std::string boundReason;
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
  /// Ids of the candidates the recompute reads (definition order): one
  /// away at the regenerate point is regenerated first, into a transient
  /// buffer given back after the recompute (nested regeneration).
  std::vector<int64_t> reads;
  /// The library calls of the recompute, each at its recompute point: the
  /// runtime adds their temporaries there.
  std::vector<LibraryCallSpec> libraryCalls;
  /// Estimated FLOPs of the recompute.
  SizeExpr flops;
  std::string flopsText;
};

/// The "remat" entry of the signature: the live bytes of every program
/// point of a run with nothing evicted (op by op) and the candidates.
struct RematSpec {
  /// True when there are candidates. The live bytes per program point may
  /// be given without (the timeline's prediction).
  bool present = false;
  std::vector<SizeExpr> liveBefore;
  std::vector<std::vector<SizeExpr>> points;
  std::vector<SizeExpr> exitPoints;
  std::vector<RematCandidateSpec> candidates;
};

/// One trace point of the signature's "trace_points" (ABI v6): a kernel or
/// library call the compiled code brackets with `trace_op` calls
/// (docs/memory.md, "Timeline").
struct TracePointSpec {
  /// The ONNX node it came from (else the callee's name), and its op type
  /// ("" when unknown).
  std::string name;
  std::string opType;
  /// "kernel" or "library".
  std::string kind;
  /// Index of its op in the memory model's order (the program point of
  /// RematSpec::liveBefore); -1 when unknown.
  int64_t op = -1;
};

/// One entry of a CUDA model's "kernels" (disc-gpu-kernel-cost,
/// docs/cuda.md "Roofline"): a kernel or a cuBLAS/cuDNN call, in program
/// order. Only what the runtime uses is kept (the names of the device
/// times of a trace, docs/cuda.md "Kernel times"); the bytes and FLOPs
/// expressions are read by the roofline script.
struct KernelSpec {
  /// The kernel's symbol ("disc_entry_kernel_3") or the library call's
  /// callee, and the ONNX node it came from ("" when unknown).
  std::string name;
  std::string node;
  bool library = false;
  /// "always", or "recompute" for a kernel that runs only to regenerate an
  /// evicted buffer.
  std::string runs = "always";
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
  /// Trace points by id (empty for a model compiled before ABI v6).
  std::vector<TracePointSpec> tracePoints;
  /// CUDA models: "kernels" (empty for CPU models).
  std::vector<KernelSpec> kernels;
  /// The name of the output holding the training loss; empty when the
  /// model names none.
  std::string loss;

  /// Null when `name` is not listed in `symbols`.
  const SymbolSpec *findSymbol(std::string_view name) const;
  /// Index of the input named `name`, or -1.
  int64_t findInput(std::string_view name) const;
  /// Index of the output named `name`, or -1.
  int64_t findOutput(std::string_view name) const;

  /// Number of state inputs (0 for a model without training state).
  int64_t numStates() const;
  /// Indices into `inputs` of the inputs `Session::run` takes, in
  /// signature order: every input but the state inputs.
  std::vector<int64_t> runInputs() const;
  /// Indices into `outputs` of the outputs `Session::run` returns, in
  /// signature order: every output but those that update a state.
  std::vector<int64_t> runOutputs() const;

  /// Parses signature JSON. Errors: LoadFailed naming the offending field;
  /// for the training fields: a state input with a dynamic dim, an
  /// `updates` that names no state input (or a state updated twice) or
  /// whose dtype or static dims differ from the state's, a `loss` that
  /// names no output.
  static Status parse(std::string_view json, Signature *out);

  /// Binds every named dim to its size in `inputShapes` (one shape per
  /// input, in signature order; for a model with state, either that or one
  /// per run input, `runInputs()`, the state shapes being static), checking
  /// counts, ranks, static dims, agreement of dims with the same name and
  /// the symbol ranges, exactly as `Session::run` does. Errors:
  /// InvalidArgument naming the input and dim.
  Status bindDims(const std::vector<std::vector<int64_t>> &inputShapes,
                  std::map<std::string, int64_t> *out) const;
};

} // namespace disc

#endif // DISC_RUNTIME_SIGNATURE_H
