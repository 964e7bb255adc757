//===- CanonicalForm.h - canonical polynomials of dim exprs -----*- C++ -*-===//
//
// Internal to DiscAnalysis. The canonical form of an AffineExpr
// (SolverInternal.h): interned atoms, polynomial arithmetic with overflow
// detection, the recorded substitutions applied, and evaluation at
// free-symbol values. ShapeConstraintSolver::Impl answers its queries on
// these polynomials (ShapeConstraintSolver.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef DISC_LIB_ANALYSIS_CANONICALFORM_H
#define DISC_LIB_ANALYSIS_CANONICALFORM_H

#include "SolverInternal.h"

#include "mlir/IR/AffineExpr.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mlir::disc::detail {

//===----------------------------------------------------------------------===//
// Checked integer helpers
//===----------------------------------------------------------------------===//

/// Floor division toward -inf (AffineExpr semantics); nullopt on b == 0 or
/// overflow.
inline std::optional<int64_t> floorDivChecked(int64_t a, int64_t b) {
  if (b == 0 || (a == INT64_MIN && b == -1))
    return std::nullopt;
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0)))
    --q;
  return q;
}

inline std::optional<int64_t> addChecked(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r))
    return std::nullopt;
  return r;
}
inline std::optional<int64_t> mulChecked(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r))
    return std::nullopt;
  return r;
}

//===----------------------------------------------------------------------===//
// Canonical form
//===----------------------------------------------------------------------===//

/// Interned atoms and the polynomial arithmetic over them. Overflowing
/// coefficients set `overflow` (the queries then answer UNKNOWN).
struct CanonicalForm {
  explicit CanonicalForm(MLIRContext *context) : context(context) {}

  MLIRContext *context;
  /// Symbol -> expression it was substituted by (triangular: the expression
  /// only mentions symbols that were free when the entry was made).
  llvm::DenseMap<unsigned, AffineExpr> subst;
  // Atoms, interned.
  std::vector<Atom> atoms;
  llvm::StringMap<unsigned> atomIds;
  /// toPoly's cache, cleared whenever a constraint is added.
  llvm::DenseMap<AffineExpr, Poly> polyMemo;
  bool overflow = false;

  //===--------------------------------------------------------------------===//
  // Polynomial arithmetic
  //===--------------------------------------------------------------------===//

  int64_t addC(int64_t a, int64_t b);
  int64_t mulC(int64_t a, int64_t b);
  void addTerm(Poly &p, const Monomial &m, int64_t c);
  Poly add(const Poly &a, const Poly &b);
  Poly scale(const Poly &a, int64_t k);
  Poly mul(const Poly &a, const Poly &b);
  static Poly constant(int64_t c);
  static std::optional<int64_t> asConstant(const Poly &p);
  static int64_t constantTerm(const Poly &p);
  static std::string key(const Poly &p);
  unsigned intern(Atom atom);
  Poly atomPoly(unsigned id);
  /// Canonical `x floordiv d`.
  Poly floorDiv(const Poly &x, const Poly &d);
  /// Canonical form of `e`, with recorded substitutions applied.
  Poly toPoly(AffineExpr e);
  AffineExpr fromPoly(const Poly &p);
  AffineExpr fromAtom(unsigned id);

  //===--------------------------------------------------------------------===//
  // Evaluation of canonical polynomials at free-symbol values
  //===--------------------------------------------------------------------===//

  std::optional<int64_t> evalPoly(const Poly &p,
                                  llvm::ArrayRef<int64_t> values);
  std::optional<int64_t> evalAtom(unsigned id, llvm::ArrayRef<int64_t> values);
};

} // namespace mlir::disc::detail

#endif // DISC_LIB_ANALYSIS_CANONICALFORM_H
