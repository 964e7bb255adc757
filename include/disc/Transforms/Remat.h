//===- Remat.h - rematerialization candidates and their evict/regenerate points
//-===//
//
// Compile-time half of rematerialization (ARCHITECTURE.md §3, BladeDISC++):
// after scheduling, a tensor that stays live across a long gap between two
// uses, and whose producer subgraph can be recomputed from values that are
// live at the second use anyway, becomes a *candidate*. The compiler inserts
// an evict point after the last use before the gap and a regenerate point
// before the next use; the runtime decides at run time, from the actual
// sizes and the memory limit, whether the candidate is really evicted.
// docs/memory.md, "Rematerialization", describes the rules and the ABI.
//
//===----------------------------------------------------------------------===//
#ifndef DISC_TRANSFORMS_REMAT_H
#define DISC_TRANSFORMS_REMAT_H

#include "disc/Transforms/MemoryModel.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/JSON.h"

#include <string>

namespace mlir::disc {

/// Cost bound of a candidate's recompute subgraph.
struct RematOptions {
  /// At most this many ops are recomputed for one candidate.
  unsigned maxOps = 12;
  /// The recompute FLOPs (a symbolic estimate, see RematCandidate::flops)
  /// must be provably at most this many per payload byte of the candidate
  /// under the `--dim` ranges; UNKNOWN rejects the candidate.
  int64_t maxFlopsPerByte = 512;
  /// At least this many ops run between the last use before the gap and the
  /// next use.
  unsigned minGapOps = 3;
  /// MemoryModel::setLibraryTemporaries: false for cuBLAS/cuDNN calls.
  bool libraryTemporaries = true;
};

/// One rematerialization candidate of a function under an op order.
/// Unit attribute on the `bufferization.materialize_in_destination` of a
/// regenerate point whose source is to be computed in the destination
/// (RematCandidate::writesInPlace).
inline constexpr llvm::StringLiteral kRegenerateInPlaceAttr =
    "disc.regenerate_in_place";

struct RematCandidate {
  /// The tensor that may be evicted: an Alloc result of a top-level op.
  Value value;
  /// Order index of the last use before the gap: the evict point follows it.
  unsigned evictAfter = 0;
  /// Order index of the op the regenerate point precedes: the next use, or
  /// an earlier point where another candidate's recompute reads this one
  /// (nested regeneration).
  unsigned regenerateBefore = 0;
  /// Position of this candidate's regeneration among all of them: by
  /// regenerate point, then by program order of the values, so a candidate
  /// read by another's recompute at the same point comes first.
  unsigned regenerateOrder = 0;
  /// Ops that recompute `value`, in order; the last one produces it. Their
  /// other operands are live at the regenerate point with nothing evicted
  /// (inputs, constants, buffers used at or after it); an operand that is
  /// itself a candidate is regenerated at or before that point.
  SmallVector<Operation *> recompute;
  /// Allocator bytes of `value` (payload + kAllocPaddingBytes).
  AffineExpr bytes;
  /// Extra bytes live at the regenerate point while recomputing, on top of
  /// the live bytes just before the next use without eviction: the peak of
  /// the recomputed intermediates, scratch and result (which is then copied
  /// into the regenerated buffer).
  AffineExpr recomputePeakBytes;
  /// The same bytes at every point of the recompute (the largest is the
  /// exact peak when the points are not comparable symbolically, where
  /// recomputePeakBytes is their sum, an upper bound).
  SmallVector<AffineExpr> recomputePoints;
  /// The library calls of the recompute (MemoryModel::libraryCallJson),
  /// each with `at` its recompute point: the runtime adds the temporaries
  /// oneDNN takes for the actual shapes there.
  llvm::json::Array libraryCalls;
  /// Whether the recompute's last op writes the regenerated buffer itself
  /// (an elementwise op lowered to one loop nest: the materialization into
  /// the buffer carries kRegenerateInPlaceAttr, and
  /// disc-regenerate-in-place makes the loop nest write it); else the
  /// result is a buffer of its own, copied in. The recompute points count
  /// the result only in the second case.
  bool writesInPlace = false;
  /// Ids of the other candidates the recompute reads, in program order of
  /// their definitions. One evicted at this candidate's regenerate point
  /// (its gap covers it) is recomputed there first, recursively, into a
  /// transient buffer given up again after this recompute (nested
  /// regeneration); a kept one's block is lent and kept again.
  SmallVector<unsigned, 2> reads;
  /// Estimated FLOPs of the recompute: 2*MACs for conv and dot_general,
  /// window*outputs for pooling, elements read for reductions, elements
  /// written for other ops.
  AffineExpr flops;
};

/// A tensor with a long gap that was not made a candidate, and why.
struct RematRejection {
  Value value;
  unsigned evictAfter = 0;
  unsigned regenerateBefore = 0;
  std::string reason;
};

/// Candidates of `p` (a profile of `mm`'s function), ordered by evict point.
/// Long-gap tensors are taken by decreasing bytes at the LIKELY dims; a
/// recompute may read another candidate, whose regenerate point then moves
/// up to the reader's (nested regeneration). `rejected`, when given, gets
/// the long-gap tensors that were turned down.
SmallVector<RematCandidate>
findRematCandidates(MemoryModel &mm, const MemoryProfile &p,
                    const RematOptions &options,
                    SmallVectorImpl<RematRejection> *rejected = nullptr);

/// The signature's "remat" object (docs/runtime-abi.md): the live bytes of
/// every program point of `p` (the runtime's projection) and the candidates
/// with their evict/regenerate points, symbolic bytes, recompute peak and
/// FLOPs. Candidate ids are positions in the list.
llvm::json::Object rematToJson(MemoryModel &mm, const MemoryProfile &p,
                               ArrayRef<RematCandidate> candidates);

/// Inserts the evict and regenerate points of `candidates` into `func`
/// (whose top-level ops are `p.order`): after the op at `evictAfter`, a call
/// `disc_remat_evict_<id>(id, value)` (the value's last use before the
/// gap); before the op at `regenerateBefore`, a call
/// `disc_remat_regenerate(id)`, a fresh buffer of the value's shape, and an
/// `scf.if` that recomputes into it when the runtime evicted the value.
/// Later uses read the regenerated value.
void applyRemat(func::FuncOp func, const MemoryProfile &p,
                ArrayRef<RematCandidate> candidates);

/// For `entry` of `module` in its current op order: finds the candidates,
/// returns the "remat" JSON and inserts the points. Data-dependent sizes
/// (an unpredictable peak) give no candidates.
FailureOr<llvm::json::Object> applyRematToEntry(ModuleOp module,
                                                StringRef entry,
                                                const RematOptions &options);

/// `disc-compile --emit=memory`: one line per candidate (symbolic bytes,
/// FLOPs, recompute ops, points) and per rejected long-gap tensor.
void printRematCandidates(ModuleOp module, StringRef entry,
                          const RematOptions &options, llvm::raw_ostream &os);

} // namespace mlir::disc

#endif // DISC_TRANSFORMS_REMAT_H
