//===- Z3Backend.cpp - Z3 encoding of canonical shape constraints ---------===//
//
// The only translation unit that includes z3++.h; it is compiled with
// -fexceptions (see CMakeLists.txt) because z3++ reports every error by
// throwing z3::exception, and with -fno-exceptions `Z3_THROW` expands to
// nothing and errors would pass silently (ARCHITECTURE.md §6).
//
// Encoding (BladeDISC++, arXiv 2412.16985, section 3.1, uses an SMT solver
// as the fallback for symbolic-shape queries): integer sort for every atom;
// a floordiv atom `q = x floordiv d` becomes a fresh integer `q` with
//   d > 0  =>  q*d <= x < q*d + d
//   d < 0  =>  q*d >= x > q*d + d
// (floor toward -inf, as AffineExpr). Products of atoms stay products
// (non-linear integer arithmetic; Z3's nlsat handles the small cases here).
//
//===----------------------------------------------------------------------===//
#include "SolverInternal.h"

#include <z3++.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

using namespace mlir::disc::detail;

/// Resource-limit units per millisecond of budget (measured on this
/// machine's Z3 4.8.12: about this many units per ms of check()).
static constexpr unsigned kRlimitPerMs = 700;

struct Z3Backend::State {
  z3::context ctx;
};

Z3Backend::Z3Backend() = default;
Z3Backend::~Z3Backend() = default;

namespace {
/// Builds Z3 terms for polynomials over atoms; floordiv atoms add their
/// defining constraints to the solver once.
class Encoder {
public:
  Encoder(z3::context &ctx, z3::solver &solver, llvm::ArrayRef<Atom> atoms)
      : ctx(ctx), solver(solver), atoms(atoms), cache(atoms.size()) {}

  z3::expr poly(const Poly &p) {
    z3::expr sum = ctx.int_val(0);
    bool first = true;
    for (const auto &[mono, coeff] : p) {
      z3::expr term = ctx.int_val(static_cast<int64_t>(coeff));
      for (unsigned id : mono)
        term = term * atom(id);
      sum = first ? term : sum + term;
      first = false;
    }
    return sum;
  }

  z3::expr atom(unsigned id) {
    if (cache[id])
      return *cache[id];
    const Atom &a = atoms[id];
    std::optional<z3::expr> result;
    switch (a.kind) {
    case Atom::Symbol:
      result = ctx.int_const(("s" + std::to_string(a.index)).c_str());
      break;
    case Atom::Dim:
      result = ctx.int_const(("d" + std::to_string(a.index)).c_str());
      break;
    case Atom::FloorDiv: {
      z3::expr q = ctx.int_const(("q" + std::to_string(id)).c_str());
      z3::expr x = poly(a.dividend);
      z3::expr d = poly(a.divisor);
      solver.add(z3::implies(d > 0, q * d <= x && x < q * d + d));
      solver.add(z3::implies(d < 0, q * d >= x && x > q * d + d));
      result = q;
      break;
    }
    }
    cache[id] = *result;
    return *result;
  }

private:
  z3::context &ctx;
  z3::solver &solver;
  llvm::ArrayRef<Atom> atoms;
  std::vector<std::optional<z3::expr>> cache;
};
} // namespace

static bool isLinearPoly(llvm::ArrayRef<Atom> atoms, const Poly &p) {
  for (const auto &[mono, coeff] : p) {
    if (mono.size() > 1)
      return false;
    for (unsigned id : mono) {
      const Atom &a = atoms[id];
      if (a.kind != Atom::FloorDiv)
        continue;
      if (!(a.divisor.empty() ||
            (a.divisor.size() == 1 && a.divisor.begin()->first.empty())))
        return false;
      if (!isLinearPoly(atoms, a.dividend))
        return false;
    }
  }
  return true;
}

static bool isLinear(llvm::ArrayRef<Atom> atoms,
                     llvm::ArrayRef<Constraint> constraints) {
  for (const Constraint &c : constraints)
    if (!isLinearPoly(atoms, c.poly))
      return false;
  return true;
}

Z3Status Z3Backend::check(llvm::ArrayRef<Atom> atoms,
                          llvm::ArrayRef<Constraint> constraints,
                          unsigned timeoutMs, std::string &error) {
  try {
    if (!state)
      state = std::make_unique<State>();
    z3::context &ctx = state->ctx;
    // Linear problems (every monomial of degree <= 1, constant divisors)
    // go to the QF_LIA solver, which is much cheaper to set up than the
    // default portfolio; the rest gets the default (non-linear) solver.
    z3::solver solver = isLinear(atoms, constraints) ? z3::solver(ctx, "QF_LIA")
                                                     : z3::solver(ctx);
    // Z3 4.8.12's wall-clock "timeout" arms a scoped_timer thread that can
    // deadlock against the timers its own tactics start (seen here: both
    // threads parked on the timer mutex in non-linear conv queries). The
    // resource limit is checked in the solver's own loops and needs no
    // thread; it is scaled from the millisecond budget.
    uint64_t limit = static_cast<uint64_t>(timeoutMs) * kRlimitPerMs;
    solver.set("rlimit",
               static_cast<unsigned>(std::min<uint64_t>(limit, UINT32_MAX)));
    Encoder enc(ctx, solver, atoms);
    for (const Constraint &c : constraints) {
      z3::expr e = enc.poly(c.poly);
      switch (c.rel) {
      case Rel::EQ:
        solver.add(e == 0);
        break;
      case Rel::NE:
        solver.add(e != 0);
        break;
      case Rel::GT:
        solver.add(e > 0);
        break;
      case Rel::GE:
        solver.add(e >= 0);
        break;
      }
    }
    switch (solver.check()) {
    case z3::sat:
      return Z3Status::Sat;
    case z3::unsat:
      return Z3Status::Unsat;
    case z3::unknown:
      error = solver.reason_unknown();
      return Z3Status::Unknown;
    }
    return Z3Status::Unknown;
  } catch (const z3::exception &e) {
    error = e.msg();
    return Z3Status::Error;
  } catch (...) {
    error = "unexpected exception from Z3";
    return Z3Status::Error;
  }
}
