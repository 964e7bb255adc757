//===- MemoryModel.h - symbolic bytes, liveness and peak of a function -*- C++
//-*-===//
//
// The memory model of one disc-dialect function (ARCHITECTURE.md §3, "one
// truth about memory"): which op results allocate how many bytes (an
// AffineExpr over the ShapeAnalysis symbols), which results are views or
// in-place updates of an operand (no new bytes), the scratch buffers an op's
// lowering allocates while it runs, the live range of every buffer under a
// given op order, the live bytes at every program point and the peak as a
// symbolic max (a list of candidate expressions).
//
// The byte counts are the ones the runtime's tracked allocator sees for the
// CPU pipeline (lib/Pipelines/CpuPipeline.cpp): every allocation requests
// its payload plus `kAllocPaddingBytes` (the compiled code aligns the data
// pointer itself), deallocations follow the last use of a buffer and its
// views, function inputs and constants are never allocated. docs/memory.md
// describes the rules and how they are checked against the runtime.
//
// Typical use (a scheduler comparing orders):
//
//   ShapeAnalysis sa(func, collectDimRanges(module));
//   sa.run();
//   sa.mergeEqualSymbols();
//   MemoryModel mm(func, sa);
//   MemoryProfile p = mm.profile(order);   // order: the top-level ops
//   for (AffineExpr e : p.peakCandidates) ... sa.getSolver().compare(e, f)
//   std::optional<int64_t> peak = mm.evaluatePeak(p, bindings);
//
//===----------------------------------------------------------------------===//
#ifndef DISC_TRANSFORMS_MEMORYMODEL_H
#define DISC_TRANSFORMS_MEMORYMODEL_H

#include "disc/Transforms/ShapeAnalysis.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/AffineExpr.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/JSON.h"

#include <memory>
#include <optional>
#include <string>

namespace mlir::disc {

/// Bytes every allocation requests on top of its payload: the generated code
/// over-allocates by the 64-byte alignment of `memref.alloc` and aligns the
/// data pointer inside the block.
constexpr int64_t kAllocPaddingBytes = 64;

/// Buffers with a static shape of at most this many payload bytes that the
/// function does not return live on the stack (disc-promote-small-buffers):
/// shape tensors, index shapes of reshapes. They never reach the allocator.
constexpr int64_t kMaxStackBufferBytes = 1024;

/// Where an op result's storage comes from.
enum class BufferKind {
  /// A fresh allocation of `ResultMemory::bytes` bytes, made when the op
  /// runs and freed after the last use of the result and of its views.
  Alloc,
  /// A view of operand `ResultMemory::operand` (reshape-like): no new
  /// bytes; keeps the operand's buffer alive while the view is used.
  View,
  /// Written into the buffer of operand `ResultMemory::operand`, whose last
  /// use this op is: no new bytes; the buffer lives on as this result.
  InPlace,
  /// Not allocated by the compiled code: a constant (a global of the
  /// model.so), a value that is not a tensor, or the result of a dead op.
  External,
  /// A small static buffer on the stack (see kMaxStackBufferBytes): no
  /// allocator bytes.
  Stack,
  /// Computed inside the loop nest of the consumer it is fused into
  /// (disc-fusion, Fusion.h): never stored, no bytes. The op's operands are
  /// read when that consumer runs, so their buffers live until then. With
  /// `ResultMemory::operand` set (a producer marked in place), the root
  /// that reads it writes the buffer of that operand: the value passes
  /// through to the root's result like an InPlace one.
  Fused,
};

/// Returns "alloc", "view", "in-place", "external", "stack" or "fused".
const char *stringifyBufferKind(BufferKind kind);

/// Storage of one op result.
struct ResultMemory {
  Value value;
  BufferKind kind = BufferKind::External;
  /// Bytes the allocator sees for an Alloc (payload + kAllocPaddingBytes),
  /// 0 otherwise. Normalized AffineExpr over the ShapeAnalysis symbols.
  AffineExpr bytes;
  /// Operand index a View/InPlace result aliases (or whose buffer a Fused
  /// producer's root writes), -1 otherwise.
  int operand = -1;
};

/// Whether `rm`'s value lives in the buffer of operand `rm.operand`, which
/// its op (or, for a fused producer, the root reading it) writes: an
/// InPlace result, or a Fused one with an operand.
inline bool writesOperandBuffer(const ResultMemory &rm) {
  return rm.kind == BufferKind::InPlace ||
         (rm.kind == BufferKind::Fused && rm.operand >= 0);
}

/// What one top-level op allocates, independent of the op order.
struct OpMemory {
  Operation *op = nullptr;
  SmallVector<ResultMemory> results;
  /// Bytes of temporaries the lowering allocates before the results (the
  /// padded copy of a conv or pool input), freed at the end of the op;
  /// allocator bytes, like ResultMemory::bytes.
  AffineExpr preScratchBytes;
  /// Operands read only through those copies: when this op is the last use
  /// of their buffer, it is freed before the results are allocated.
  SmallVector<unsigned> consumedByPreScratch;
  /// Bytes of temporaries allocated after the results (the index shape of a
  /// dynamic reshape), freed at the end of the op.
  AffineExpr scratchBytes;
  /// Temporaries allocated after the pre-scratch and scratch are freed,
  /// while the results are live (the per-position counts of an average
  /// pool that does not count padding): the bytes of each internal phase,
  /// each a program point of its own.
  SmallVector<AffineExpr> postPhaseBytes;
  /// Number of allocator calls this op makes (results + scratch).
  int64_t numAllocs = 0;
  /// An op with regions that allocate (scf.if, scf.for, scf.while): the
  /// bytes its regions may hold at once on top of the op's own point, one
  /// entry per alternative (each branch of an scf.if; a loop's regions
  /// together, for one iteration: the carried values are the results').
  /// Every tensor allocated in a region is counted as live for the whole
  /// region, so these are upper bounds (docs/memory.md, "Upper bounds").
  SmallVector<AffineExpr> regionBytes;
  /// Library calls nested in those regions, each with its alternative.
  SmallVector<std::pair<Operation *, unsigned>> regionCalls;
  /// The sizes above are upper bounds for this op (a ceil_mode pool's
  /// run-time padding, counted at its largest).
  bool upperBound = false;
};

/// Live range of one allocated buffer under an order: allocated when op
/// `def` runs, freed right after op `lastUse` (== def when nothing reads
/// it); `lastUse` == order.size() + 1 for a buffer the function returns as
/// itself (never freed), order.size() for one returned only through a view
/// (freed after the return's clone of the view).
struct BufferLiveRange {
  Value root; ///< the Alloc result that owns the buffer
  AffineExpr bytes;
  unsigned def = 0;
  unsigned lastUse = 0;
};

/// Liveness and live bytes of an order. Program point i is "while
/// order[i] runs": every buffer allocated by an earlier op and not yet
/// freed, plus order[i]'s own results and scratch. An op with pre-scratch
/// has two points: after the pre-scratch is allocated, and after its
/// results are (with the operands it consumed through the pre-scratch
/// already freed); both are in `livePoints`, followed by the points of
/// OpMemory::postPhaseBytes.
struct MemoryProfile {
  SmallVector<Operation *> order;
  SmallVector<BufferLiveRange> buffers;
  /// Bytes live just before order[i] runs.
  SmallVector<AffineExpr> liveBefore;
  /// Bytes live while order[i] runs, once its results are allocated.
  SmallVector<AffineExpr> liveAt;
  /// Every program point inside order[i]: the pre-scratch point (if any),
  /// liveAt[i], then the post phases (if any).
  SmallVector<SmallVector<AffineExpr, 2>> livePoints;
  /// Live bytes after each clone the return makes: a returned value that
  /// is not a buffer of its own (a view, an input, a constant) is copied
  /// into a fresh allocation of exactly its payload bytes (the function
  /// owns its results); these points follow the last op.
  SmallVector<AffineExpr> exitPoints;
  /// Bytes still live when the function returns (its results).
  AffineExpr liveAtExit;
  /// The peak is the max of these (distinct liveAt expressions, the ones
  /// that are provably below another one removed by canonical form).
  SmallVector<AffineExpr> peakCandidates;
  /// For each peak candidate, the first program point with that live-byte
  /// expression (order.size() for a point of the return).
  SmallVector<unsigned> peakCandidatePoints;
  /// Total allocator calls of one run.
  int64_t numAllocs = 0;
};

/// The memory model of one function. Holds a reference to the shape
/// analysis, which must have run (and, usually, merged equal symbols) and
/// must outlive the model. Not thread-safe.
class MemoryModel {
public:
  MemoryModel(func::FuncOp func, ShapeAnalysis &shapes);

  /// With `false`, small static buffers count as heap allocations (kind
  /// `Alloc`, padding included) instead of `Stack`: what the program would
  /// allocate if the CPU pipeline left them on the heap, as it must for a
  /// dynamic buffer. Used to compare the schedules of a specialized and a
  /// symbolic compile under one placement rule (benchmarks/). Call before
  /// the first query.
  void setStackPlacement(bool enabled) { stackPlacement = enabled; }
  /// False for cuBLAS/cuDNN calls (the CUDA target): the runtime takes their
  /// workspaces only where the allocator grants them under a limit, so they
  /// add no required temporaries, and their strided operands are passed as
  /// they are; libraryCallJson then appends nothing. True (default) for
  /// oneDNN calls, whose temporaries the runtime asks oneDNN for.
  void setLibraryTemporaries(bool enabled) { libraryTemporaries = enabled; }

  /// The op-order-independent facts of a top-level op of the function
  /// (computed on first use and cached).
  const OpMemory &getOpMemory(Operation *op);

  /// The top-level ops of the function body in program order (the
  /// terminator excluded): the default order.
  SmallVector<Operation *> programOrder();

  /// Liveness and live bytes for `order`, a permutation of the top-level
  /// ops (see programOrder) that respects their dependencies (asserted).
  MemoryProfile profile(ArrayRef<Operation *> order);
  MemoryProfile profile() { return profile(programOrder()); }

  /// The buffer that backs `v` (following views and in-place updates), or
  /// a null Value when `v` is not allocated by the function (an input, a
  /// constant, a view of one of them).
  Value getBufferRoot(Value v);

  /// The value whose memory `v` views: `v` itself, or the source of the
  /// chain of views (reshapes and the like) that makes it, which may be a
  /// function argument.
  Value getViewSource(Value v);

  /// Bytes of the payload of a ranked tensor value: element count times
  /// element size (bool and i8: 1 byte, index: 8), normalized.
  AffineExpr payloadBytes(Value v);

  /// Value of `e` with symbol i bound to bindings[i] (ShapeAnalysis symbol
  /// positions); nullopt when a binding is missing.
  std::optional<int64_t> evaluate(AffineExpr e,
                                  ArrayRef<int64_t> bindings) const;
  /// Same with bindings by symbol name (the input dim names, as in the
  /// signature JSON); nullopt when a symbol has no binding.
  std::optional<int64_t> evaluate(AffineExpr e,
                                  const llvm::StringMap<int64_t> &byName) const;
  /// Max of the profile's peak candidates at the given bindings.
  std::optional<int64_t> evaluatePeak(const MemoryProfile &p,
                                      const llvm::StringMap<int64_t> &byName);

  /// Whether the peak can be evaluated from the input shapes alone: false
  /// when an expression involves a symbol that is not an input dim (a
  /// data-dependent size such as NonZero's count, or a dim the shape rules
  /// could not derive); `reason` then names the op and the symbol.
  bool isPredictable(const MemoryProfile &p, std::string *reason = nullptr);
  /// Whether the prediction of a predictable profile is an upper bound
  /// rather than the exact peak: tensors allocated in the regions of
  /// control flow, or a data-dependent size evaluated at its bound
  /// (ShapeAnalysis::getUpperBound). `why` says which.
  bool isUpperBound(const MemoryProfile &p, std::string *why = nullptr);
  /// `e` with every data-dependent size that has a usable bound replaced by
  /// the bound (an expression of input dims): an upper bound of `e` when
  /// `e` is a sum of buffer sizes. Other symbols stay.
  AffineExpr atBounds(AffineExpr e);

  /// Renders `e` with input dim names (`N*H*W*256 + 64`).
  std::string render(AffineExpr e) { return shapes.render(e); }

  /// The JSON object carried in the model signature under "memory":
  ///   {"predictable": true, "num_allocs": n,
  ///    "peak_bytes": [EXPR, ...], "peak_bytes_text": ["N*H*256 + 64", ...]}
  /// or {"predictable": false, "reason": "..."}. EXPR is an integer, a
  /// symbol name (a string) or [OP, EXPR, EXPR] with OP one of "+", "*",
  /// "floordiv", "ceildiv", "mod"; the predicted peak is the max of the
  /// list (docs/runtime-abi.md). Ops marked `disc.library_call` (oneDNN
  /// calls, markLibraryCalls) add "library_calls": [{"call": ID, "at":
  /// EXPR, "operands": [{"sizes": [EXPR..], "strides": [EXPR..]}..],
  /// "attrs": [INT..]}]: the runtime asks oneDNN for the temporaries of
  /// each call at the actual shapes and adds them to the live bytes `at`
  /// its program point.
  llvm::json::Object toJson(const MemoryProfile &p);

  ShapeAnalysis &getShapeAnalysis() { return shapes; }

  /// True when no result of `op` reaches the function's results (nor an op
  /// with side effects): the lowering erases it, so it allocates nothing
  /// (its results are External).
  bool isDead(Operation *op);

  /// False when `v` is a strided view (a slice) or a view of one: a
  /// reshape then copies it into a fresh buffer.
  bool isIdentityLayout(Value v);
  /// True for an expand that broadcasts nothing (same type, every dynamic
  /// dim proven equal): lowered to an identity copy that canonicalization
  /// folds away, so its result is a view.
  bool isIdentityExpand(Operation *op);
  /// True when `v` or a view of it is returned by the function.
  bool escapes(Value v);
  /// True when `v`'s buffer lives on the stack (kMaxStackBufferBytes).
  bool isStackBuffer(Value v);

  /// Appends the "library_calls" entry of `op` (marked `disc.library_call`)
  /// whose live bytes are `at` to `out` (docs/runtime-abi.md): the call,
  /// `at`, its operands' sizes and strides in elements and its attributes,
  /// so the runtime can size its temporaries; `index` (when >= 0) is its
  /// position in the order. False with `reason` set when an operand's
  /// layout is not known at compile time.
  bool libraryCallJson(Operation *op, AffineExpr at, llvm::json::Array &out,
                       std::string &reason, int64_t index = -1);

private:
  bool stackPlacement = true;
  bool libraryTemporaries = true;
  OpMemory describe(Operation *op);
  /// Fills m.regionBytes and m.regionCalls of an op with regions.
  void describeRegions(Operation *op, OpMemory &m);
  /// Bytes of every allocation of the ops of `r` (nested regions included,
  /// all their alternatives together); its library calls into `calls`.
  AffineExpr regionAllocBytes(Region &r, SmallVectorImpl<Operation *> &calls);
  AffineExpr cst(int64_t c);
  AffineExpr allocBytes(Value v);
  /// payloadBytes with elements of `elementBytes` bytes (a temporary of
  /// `v`'s shape and another element type).
  AffineExpr payloadBytes(Value v, int64_t elementBytes);
  /// Positions of the symbols of the function's input dims.
  llvm::DenseSet<unsigned> inputSymbols();
  /// Computes `bounds` once: each data-dependent size whose bound resolves
  /// to input dims and whose every dim expression grows with it.
  void computeBounds();

  std::optional<llvm::DenseMap<unsigned, AffineExpr>> bounds;

  func::FuncOp func;
  ShapeAnalysis &shapes;
  MLIRContext *ctx;
  llvm::DenseMap<Operation *, std::unique_ptr<OpMemory>> cache;
  llvm::DenseSet<Operation *> dead;
  bool deadComputed = false;
  /// A value whose dims the shape analysis has no expression for.
  Value missingDims;
};

/// The shape analysis and memory model of one function, built together
/// (`--emit=memory`, the signature's "memory" entry, disc-remat).
struct FunctionMemory {
  llvm::StringMap<DimRange> ranges;
  std::optional<ShapeAnalysis> shapes;
  std::optional<MemoryModel> model;

  /// Runs the shape analysis of `func` with the user's dim `ranges`
  /// (collectDimRanges), merges the symbols the solver proves equal, and
  /// builds the memory model (`stackPlacement` as
  /// MemoryModel::setStackPlacement).
  FunctionMemory(func::FuncOp func, llvm::StringMap<DimRange> ranges,
                 bool stackPlacement = true);
  /// The same with the dim ranges of `func`'s module.
  explicit FunctionMemory(func::FuncOp func, bool stackPlacement = true);
};

/// `disc-compile --emit=memory`: for each top-level op of `entry` in program
/// order, its allocations and the live bytes while it runs (an expression
/// and its value at the LIKELY dims, else at each dim's minimum), then the
/// peak candidates and the peak's value.
/// `stackPlacement` false (the CUDA target) counts small static buffers as
/// heap buffers: a kernel cannot read the host stack.
LogicalResult printMemory(ModuleOp module, StringRef entry,
                          llvm::raw_ostream &os, bool stackPlacement = true);

/// Builds the analysis for `entry` and returns the signature's "memory"
/// object (see MemoryModel::toJson); `stackPlacement` as for printMemory,
/// `libraryTemporaries` as MemoryModel::setLibraryTemporaries.
FailureOr<llvm::json::Object> buildMemoryJson(ModuleOp module, StringRef entry,
                                              bool stackPlacement = true,
                                              bool libraryTemporaries = true);

/// A size expression over the input dims in the signature's JSON form
/// (docs/runtime-abi.md): an integer, a dim name, or [op, lhs, rhs] with op
/// one of "+", "*", "floordiv", "ceildiv", "mod".
llvm::json::Value exprToJson(AffineExpr e, ShapeAnalysis &sa);

/// The JSON name of a binary affine expression's kind in exprToJson's form
/// ("+", "*", "floordiv", "ceildiv", "mod").
const char *affineOpName(AffineExprKind kind);

} // namespace mlir::disc

#endif // DISC_TRANSFORMS_MEMORYMODEL_H
