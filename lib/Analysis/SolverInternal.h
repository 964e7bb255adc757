//===- SolverInternal.h - canonical polynomials and the Z3 seam -*- C++ -*-===//
//
// Internal to DiscAnalysis. The canonical form of a symbolic dim expression
// (BladeDISC++, arXiv 2412.16985, section 3.1): a polynomial with int64
// coefficients over *atoms*. An atom is a root symbol, a dim, or an opaque
// `floordiv` term (dividend and divisor are themselves canonical
// polynomials); `mod` and `ceildiv` are rewritten into `floordiv`, so one
// atom kind covers all three. The Z3 backend only sees these polynomials,
// which keeps z3++.h (and C++ exceptions) in one translation unit.
//
//===----------------------------------------------------------------------===//
#ifndef DISC_LIB_ANALYSIS_SOLVERINTERNAL_H
#define DISC_LIB_ANALYSIS_SOLVERINTERNAL_H

#include "llvm/ADT/ArrayRef.h"

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace mlir::disc::detail {

/// Sorted multiset of atom ids; the empty monomial is the constant term.
using Monomial = std::vector<unsigned>;
/// Monomial -> nonzero coefficient.
using Poly = std::map<Monomial, int64_t>;

/// One atom of the canonical form. Atoms are interned: equal content, equal
/// id, so two polynomials are equal iff their maps are equal.
struct Atom {
  enum Kind { Symbol, Dim, FloorDiv } kind;
  unsigned index = 0; ///< symbol or dim position
  Poly dividend;      ///< FloorDiv only
  Poly divisor;       ///< FloorDiv only (a constant for affine exprs)
};

/// A constraint `poly REL 0`.
enum class Rel { EQ, NE, GT, GE };
struct Constraint {
  Poly poly;
  Rel rel;
};

enum class Z3Status { Sat, Unsat, Unknown, Error };

/// Owns one Z3 context; encodes integer constraints over atoms and checks
/// satisfiability under a per-check timeout. Every Z3 error (z3::exception)
/// is caught inside and reported as Z3Status::Error with a message.
class Z3Backend {
public:
  Z3Backend();
  ~Z3Backend();
  Z3Status check(llvm::ArrayRef<Atom> atoms,
                 llvm::ArrayRef<Constraint> constraints, unsigned timeoutMs,
                 std::string &error);

private:
  struct State;
  std::unique_ptr<State> state;
};

} // namespace mlir::disc::detail

#endif // DISC_LIB_ANALYSIS_SOLVERINTERNAL_H
