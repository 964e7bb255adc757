//===- ShapeConstraintSolver.h - equalities and order of symbolic dims ----===//
//
// Answers questions about symbolic dim expressions without knowing the
// values: "are these two sizes equal?" and "which is larger, for every value
// the symbols may take?". Expressions are MLIR `AffineExpr`s over symbols
// (`s0`, `s1`, …), one symbol per root symbolic dim (model input dims and
// data-dependent sizes); products of symbols (`s0 * s1`), `floordiv`,
// `ceildiv` and `mod` by constants are allowed.
//
// Design (BladeDISC++, arXiv 2412.16985, section 3.1; ARCHITECTURE.md §2):
// a canonical polynomial form (sum of monomials with integer coefficients,
// after substituting known equalities) answers the easy queries; Z3 answers
// the rest, under the symbols' ranges and the recorded relations, with a
// per-query time limit and a cache. A Z3 timeout or error yields UNKNOWN,
// never a guess.
//
//===----------------------------------------------------------------------===//
#ifndef DISC_ANALYSIS_SHAPECONSTRAINTSOLVER_H
#define DISC_ANALYSIS_SHAPECONSTRAINTSOLVER_H

#include "mlir/IR/AffineExpr.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/ArrayRef.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace mlir::disc {

/// Result of comparing `a` with `b` over every valid assignment of symbols.
enum class CompareResult { LT, LE, EQ, GE, GT, UNKNOWN };

/// Returns "LT", "LE", "EQ", "GE", "GT" or "UNKNOWN".
const char *stringifyCompareResult(CompareResult r);

/// Facts about one root symbol. Sizes are element counts, not bytes.
struct SymbolInfo {
  std::string name;              ///< user-facing name, e.g. "seq"
  int64_t min = 0;               ///< inclusive lower bound (dims are >= 0)
  std::optional<int64_t> max;    ///< inclusive upper bound, if any
  std::optional<int64_t> likely; ///< tie-breaker only, never a fact
};

/// Counters of the work done, for `--emit=shapes` and benchmarks.
struct SolverStats {
  int64_t queries = 0;       ///< isEqual + compare calls
  int64_t cacheHits = 0;     ///< answered from the cache
  int64_t canonicalHits = 0; ///< answered without Z3 (canonical form,
                             ///< monotone corners, sample points)
  int64_t z3Calls = 0;       ///< Z3 check() calls
  int64_t z3Timeouts = 0;    ///< Z3 checks that returned unknown
  double z3TimeMs = 0;       ///< wall time inside Z3, milliseconds
  int64_t z3Errors = 0;      ///< Z3 checks that failed with a z3::exception
  int64_t z3BudgetSkips = 0; ///< UNKNOWN without Z3: 32 checks already ran
                             ///< out of resources in this solver
  int64_t z3SizeSkips = 0;   ///< UNKNOWN without Z3: more constraints than
                             ///< setMaxZ3Constraints allows
};

/// Constraint store and solver for one function's symbolic dims.
/// Not thread-safe; one instance per function or pass run.
class ShapeConstraintSolver {
public:
  explicit ShapeConstraintSolver(MLIRContext *context);
  ~ShapeConstraintSolver();
  ShapeConstraintSolver(const ShapeConstraintSolver &) = delete;
  ShapeConstraintSolver &operator=(const ShapeConstraintSolver &) = delete;

  /// Adds a root symbol and returns its expression `s<i>` (i = number of
  /// symbols added before).
  AffineExpr addSymbol(const SymbolInfo &info);
  unsigned getNumSymbols() const;
  const SymbolInfo &getSymbol(unsigned i) const;

  /// Records the relation `a == b` (from a reshape, a broadcast, a
  /// user constraint). Later queries take it into account.
  void addEquality(AffineExpr a, AffineExpr b);
  /// Records `a >= b`.
  void addGreaterOrEqual(AffineExpr a, AffineExpr b);

  /// True when `a == b` for every valid assignment (provably equal).
  bool isEqual(AffineExpr a, AffineExpr b);
  /// Order of `a` and `b` that holds for every valid assignment; EQ beats
  /// LE/GE, LT/GT beat LE/GE; UNKNOWN when it depends on the values or Z3
  /// could not decide within the time limit.
  CompareResult compare(AffineExpr a, AffineExpr b);

  /// Value of `e` with symbol i bound to bindings[i]; nullopt when a
  /// binding is missing or a division by zero occurs.
  std::optional<int64_t> evaluate(AffineExpr e,
                                  llvm::ArrayRef<int64_t> bindings) const;

  /// Canonical form of `e` after substituting recorded equalities, as an
  /// AffineExpr (used to merge provably equal dims and to print shapes).
  AffineExpr simplify(AffineExpr e);

  /// Per-query Z3 time limit in milliseconds (default 200); 0 turns Z3 off
  /// (canonical forms, corners and sample points only; the rest is
  /// UNKNOWN, and cached like any answer).
  void setTimeoutMs(unsigned ms);
  unsigned getTimeoutMs() const;
  /// Most constraints (the query, the symbol bounds and the relations that
  /// share symbols with it) a query may hand to Z3; a larger one is
  /// UNKNOWN without Z3 (counted in SolverStats::z3SizeSkips). 0 (the
  /// default): no limit. Z3's resource limit bounds its search, not the
  /// set-up of a large non-linear problem, which can take seconds.
  void setMaxZ3Constraints(unsigned n);
  unsigned getMaxZ3Constraints() const;
  const SolverStats &getStats() const;

private:
  struct Impl;
  std::unique_ptr<Impl> impl;
};

} // namespace mlir::disc

#endif // DISC_ANALYSIS_SHAPECONSTRAINTSOLVER_H
