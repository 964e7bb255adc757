//===- MemorySchedule.h - op orders that lower the symbolic peak -*- C++
//-*-===//
//
// Memory-aware op scheduling on a small abstract graph: nodes in program
// order, dependence edges, and allocations whose byte sizes are symbolic
// expressions (AffineExpr over the solver's symbols). The disc-memory-schedule
// pass builds this graph from the memory model (views and in-place results
// are folded into the allocation they share, so an allocation's users are
// every node that reads it directly or through a view); unit tests build it
// by hand.
//
// Algorithm (docs/memory.md, "Op scheduling"):
//   1. candidate orders from several heuristics: program order; the
//      memory-priority list scheduling of BladeDISC++ (arXiv 2412.16985,
//      section 3.2: among the ready ops pick the one whose allocated minus
//      freed bytes is smallest, comparing symbolic sizes with the solver);
//      depth-first post-orders as in XLA's HloMemoryScheduler (DFS with
//      operands visited by decreasing cone size, and plain post-order);
//   2. a judge that compares the symbolic peaks of two orders with the
//      solver: peak(A) <= peak(B) is proven when every program point of A
//      is at most some program point of B (componentwise on the allocation
//      counts first, then canonical forms / Z3 under the ranges);
//   3. a candidate must be proven no worse than program order for every
//      shape in range, otherwise it is dropped; among the safe ones, a
//      proven better order wins, an UNKNOWN is broken by the LIKELY values,
//      and a tie keeps the earlier candidate (program order first).
// Deterministic: no hashing of pointers decides anything.
//
//===----------------------------------------------------------------------===//
#ifndef DISC_ANALYSIS_MEMORYSCHEDULE_H
#define DISC_ANALYSIS_MEMORYSCHEDULE_H

#include "disc/Analysis/ShapeConstraintSolver.h"

#include "mlir/IR/AffineExpr.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <string>

namespace mlir::disc {

/// Dependence graph with symbolic allocation sizes. Node ids are positions
/// in program order (0 .. numNodes-1); program order is a valid order.
struct ScheduleGraph {
  /// One buffer allocation. It is live from the step of its producer to
  /// the step of its last user (inclusive; to the end when `liveOut`): the
  /// results of a step are allocated while its operands are still live.
  struct Alloc {
    AffineExpr bytes;                  ///< size in bytes, >= 0 for all shapes
    unsigned producer = 0;             ///< node that allocates it
    llvm::SmallVector<unsigned> users; ///< nodes reading it (or a view of it)
    bool liveOut = false;              ///< returned: live until the end
  };
  unsigned numNodes = 0;
  /// preds[n]: nodes that must run before n (data and ordering edges).
  llvm::SmallVector<llvm::SmallVector<unsigned>> preds;
  llvm::SmallVector<Alloc> allocs;
  /// gluedTo[p] = v when node p must run immediately before node v (the
  /// first half of an op that allocates in two steps); -1 otherwise. Every
  /// candidate order is normalized to keep such pairs adjacent.
  llvm::SmallVector<int> gluedTo;

  explicit ScheduleGraph(unsigned n = 0)
      : numNodes(n), preds(n), gluedTo(n, -1) {}
  void addEdge(unsigned from, unsigned to) { preds[to].push_back(from); }
  /// Adds an allocation of `bytes` made by `producer`; returns its id.
  unsigned addAlloc(AffineExpr bytes, unsigned producer,
                    llvm::ArrayRef<unsigned> users, bool liveOut = false);
};

/// How two peaks compare over every shape in range.
enum class PeakOrder { LE, GE, EQ, UNKNOWN };

/// Outcome of one heuristic.
struct ScheduleCandidate {
  std::string name; ///< "program", "list", "dfs-size", ...
  llvm::SmallVector<unsigned> order;
  bool safe = false;       ///< proven peak <= program order's peak
  double peakAtSample = 0; ///< peak bytes at the sample point (below)
};

struct ScheduleResult {
  llvm::SmallVector<unsigned> order; ///< chosen order (node ids)
  std::string chosen;                ///< name of the chosen candidate
  llvm::SmallVector<ScheduleCandidate> candidates;
  /// The point the `peakAtSample` values are taken at: the LIKELY values
  /// where every symbol has one, else each symbol clamped to 64 in range.
  bool sampleIsLikely = false;
};

/// Schedules `graph` to lower its symbolic peak; `solver` owns the symbols
/// the sizes mention (with their ranges and LIKELY values).
/// Cost: O(#nodes * ready-set width) size comparisons, each a cheap
/// componentwise check or a cached solver query.
ScheduleResult scheduleForMemory(const ScheduleGraph &graph,
                                 ShapeConstraintSolver &solver);

/// Symbolic live bytes at every step of `order`, as expressions (for tests
/// and reports). `order` must be a topological order of `graph`.
llvm::SmallVector<AffineExpr> liveBytesPerStep(const ScheduleGraph &graph,
                                               llvm::ArrayRef<unsigned> order);

/// Compares the symbolic peaks of two orders of `graph` (proofs only; no
/// LIKELY tie-break).
PeakOrder comparePeaks(const ScheduleGraph &graph, llvm::ArrayRef<unsigned> a,
                       llvm::ArrayRef<unsigned> b,
                       ShapeConstraintSolver &solver);

} // namespace mlir::disc

#endif // DISC_ANALYSIS_MEMORYSCHEDULE_H
