//===- ShapeConstraintSolver.cpp - canonical forms first, Z3 second -------===//
//
// Query pipeline (BladeDISC++, arXiv 2412.16985, section 3.1: symbolic shape
// comparison by simplification, with an SMT fallback; ARCHITECTURE.md §2):
//   1. canonical polynomial of `a - b` after substituting recorded
//      equalities; a constant difference answers directly;
//   2. a monotonicity check: when every non-constant coefficient has the
//      same sign and every atom is non-negative and non-decreasing, the
//      extremes are at the corners of the symbol box; exact when the
//      recorded relations do not cut the box;
//   3. sample points that satisfy all constraints: a point with `a > b` and
//      one with `a < b` prove UNKNOWN without Z3;
//   4. Z3 on what is left, under ranges and relations, with a timeout and a
//      cache. Everything is cached per canonical difference.
//
// The canonical form itself (atoms, polynomial arithmetic, evaluation) is
// in CanonicalForm.h / CanonicalForm.cpp; this file answers the queries.
//
//===----------------------------------------------------------------------===//
#include "disc/Analysis/ShapeConstraintSolver.h"

#include "CanonicalForm.h"

#include "mlir/IR/AffineExprVisitor.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"

#include <algorithm>
#include <chrono>
#include <iterator>
#include <numeric>

using namespace mlir;
using namespace mlir::disc;
using namespace mlir::disc::detail;

const char *mlir::disc::stringifyCompareResult(CompareResult r) {
  // In the order of the enumerators.
  static constexpr const char *kNames[] = {"LT", "LE", "EQ",
                                           "GE", "GT", "UNKNOWN"};
  static_assert(std::size(kNames) == size_t(CompareResult::UNKNOWN) + 1);
  return kNames[size_t(r)];
}

namespace {
/// Extended non-negative-friendly value for corner evaluation: finite
/// __int128 or +infinity.
struct Ext {
  bool inf = false;
  __int128 v = 0;
};
constexpr __int128 kExtLimit = static_cast<__int128>(1) << 100;

Ext extClamp(__int128 v) {
  if (v > kExtLimit)
    return {true, 0};
  return {false, v};
}

CompareResult flip(CompareResult r) {
  switch (r) {
  case CompareResult::LT:
    return CompareResult::GT;
  case CompareResult::LE:
    return CompareResult::GE;
  case CompareResult::GE:
    return CompareResult::LE;
  case CompareResult::GT:
    return CompareResult::LT;
  default:
    return r;
  }
}

CompareResult fromConstant(int64_t d) {
  return d > 0   ? CompareResult::GT
         : d < 0 ? CompareResult::LT
                 : CompareResult::EQ;
}
} // namespace

//===----------------------------------------------------------------------===//
// Impl
//===----------------------------------------------------------------------===//

struct ShapeConstraintSolver::Impl : CanonicalForm {
  explicit Impl(MLIRContext *context) : CanonicalForm(context) {}

  std::vector<SymbolInfo> symbols;
  /// Relations kept for Z3: `expr == 0` (Rel::EQ) or `expr >= 0` (Rel::GE).
  std::vector<std::pair<AffineExpr, Rel>> relations;
  /// An equality reduced to a nonzero constant: no valid assignment exists.
  bool inconsistent = false;
  /// Relations and substitutions do not cut the symbol box (lazy).
  std::optional<bool> boxExact;

  // Caches, cleared whenever a constraint is added.
  struct QueryEntry {
    std::optional<CompareResult> cmp;
    std::optional<bool> eq;
  };
  llvm::StringMap<QueryEntry> queryCache;
  llvm::StringMap<Z3Status> z3Cache;

  Z3Backend z3;
  unsigned timeoutMs = 200;
  unsigned maxZ3Constraints = 0;
  /// Z3 checks that may run out of resources per solver instance; the
  /// queries after that stay UNKNOWN without calling Z3.
  static constexpr int64_t kMaxZ3Unknowns = 32;
  SolverStats stats;

  void invalidate() {
    polyMemo.clear();
    queryCache.clear();
    z3Cache.clear();
    boxExact.reset();
  }

  //===--------------------------------------------------------------------===//
  // Monotonicity: corners of the symbol box
  //===--------------------------------------------------------------------===//

  /// True when the atom is >= 0 and non-decreasing in every free symbol.
  bool atomMonotone(unsigned id) {
    const Atom &a = atoms[id];
    switch (a.kind) {
    case Atom::Symbol:
      return symbols[a.index].min >= 0;
    case Atom::Dim:
      return false;
    case Atom::FloorDiv: {
      auto d = asConstant(a.divisor);
      if (!d || *d <= 0 || !polyMonotone(a.dividend))
        return false;
      auto lo = corner(a.dividend, /*atMax=*/false);
      return lo && !lo->inf && lo->v >= 0;
    }
    }
    return false;
  }
  /// True when every non-constant coefficient is >= 0 and every atom is
  /// monotone: the minimum is at the `min` corner, the supremum at `max`.
  bool polyMonotone(const Poly &p) {
    for (const auto &[m, c] : p) {
      if (m.empty())
        continue;
      if (c < 0)
        return false;
      for (unsigned id : m)
        if (!atomMonotone(id))
          return false;
    }
    return true;
  }
  /// Value of a monotone polynomial at the min or max corner.
  std::optional<Ext> corner(const Poly &p, bool atMax) {
    Ext sum;
    for (const auto &[m, c] : p) {
      Ext term{false, c};
      for (unsigned id : m) {
        auto v = cornerAtom(id, atMax);
        if (!v)
          return std::nullopt;
        if (v->inf)
          term = (term.v == 0 && !term.inf) ? term : Ext{true, 0};
        else if (term.inf)
          term = v->v == 0 ? Ext{false, 0} : term;
        else
          term = extClamp(term.v * v->v);
      }
      if (term.inf) {
        sum = Ext{true, 0};
      } else if (!sum.inf) {
        sum = extClamp(sum.v + term.v);
        if (!atMax && sum.inf)
          return std::nullopt;
      }
    }
    return sum;
  }
  std::optional<Ext> cornerAtom(unsigned id, bool atMax) {
    const Atom &a = atoms[id];
    if (a.kind == Atom::Symbol) {
      const SymbolInfo &s = symbols[a.index];
      if (!atMax)
        return Ext{false, s.min};
      if (!s.max)
        return Ext{true, 0};
      return Ext{false, *s.max};
    }
    if (a.kind != Atom::FloorDiv)
      return std::nullopt;
    auto d = asConstant(a.divisor);
    auto x = corner(a.dividend, atMax);
    if (!x || !d || *d <= 0)
      return std::nullopt;
    if (x->inf)
      return x;
    __int128 q = x->v / *d;
    if (x->v % *d != 0 && x->v < 0)
      --q;
    return Ext{false, q};
  }

  /// [inf, sup] of `p` over the symbol box when `p` is monotone: either
  /// directly (polyMonotone), or after shifting every symbol to `t = s - min`
  /// (symbol-only polynomials): `a*b - a - b + 1` with `a, b >= 1` is
  /// `ta*tb`, non-negative coefficients in `t >= 0`, so the infimum is the
  /// constant term and the supremum is at the max corner.
  std::optional<std::pair<Ext, Ext>> monotoneBounds(const Poly &p) {
    if (polyMonotone(p)) {
      auto lo = corner(p, false), hi = corner(p, true);
      if (!lo || !hi)
        return std::nullopt;
      return std::make_pair(*lo, *hi);
    }
    bool unbounded = false;
    for (const auto &[m, c] : p) {
      if (m.size() > 4)
        return std::nullopt;
      for (unsigned id : m) {
        if (atoms[id].kind != Atom::Symbol)
          return std::nullopt;
        unbounded |= !symbols[atoms[id].index].max.has_value();
      }
    }
    overflow = false;
    Poly shifted;
    for (const auto &[m, c] : p) {
      Poly term = constant(c);
      for (unsigned id : m)
        term = mul(term,
                   add(atomPoly(id), constant(symbols[atoms[id].index].min)));
      shifted = add(shifted, term);
    }
    if (overflow)
      return std::nullopt;
    for (const auto &[m, c] : shifted)
      if (!m.empty() && c < 0)
        return std::nullopt;
    Ext lo{false, constantTerm(shifted)};
    bool constantInT = shifted.size() <= 1 && asConstant(shifted);
    if (constantInT)
      return std::make_pair(lo, lo);
    if (unbounded)
      return std::make_pair(lo, Ext{true, 0});
    std::vector<int64_t> maxs(symbols.size(), 0);
    for (unsigned i = 0; i < symbols.size(); ++i)
      maxs[i] = symbols[i].max.value_or(symbols[i].min);
    auto hi = evalPoly(p, maxs);
    if (!hi)
      return std::nullopt;
    return std::make_pair(lo, Ext{false, *hi});
  }

  /// A lower bound of `L * p` (L > 0) as an integer, after replacing each
  /// degree-1 floordiv atom `x floordiv d` (constant d > 0) by its linear
  /// bound: `(x - d + 1) / d` where its coefficient is positive, `x / d`
  /// where negative; the rest must be monotone (monotoneBounds). Decides
  /// `h >= (h + 1) floordiv 2` without Z3 (conv/pool halving).
  std::optional<int64_t> relaxedLowerBound(const Poly &p) {
    // Relax only the outermost atoms: in `g - (g floordiv 2)` keep `g`.
    llvm::SmallVector<unsigned> inner;
    for (const auto &[m, c] : p)
      if (m.size() == 1 && atoms[m[0]].kind == Atom::FloorDiv)
        for (const auto &[m2, c2] : atoms[m[0]].dividend)
          inner.append(m2.begin(), m2.end());
    auto relaxable = [&](const Monomial &m) {
      return m.size() == 1 && atoms[m[0]].kind == Atom::FloorDiv &&
             !llvm::is_contained(inner, m[0]);
    };
    int64_t l = 1;
    bool any = false;
    for (const auto &[m, c] : p) {
      if (!relaxable(m))
        continue;
      auto d = asConstant(atoms[m[0]].divisor);
      if (!d || *d <= 0 || *d > (int64_t(1) << 20))
        return std::nullopt;
      l = std::lcm(l, *d);
      any = true;
      if (l > (int64_t(1) << 30))
        return std::nullopt;
    }
    if (!any)
      return std::nullopt;
    overflow = false;
    Poly r;
    for (const auto &[m, c] : p) {
      if (relaxable(m)) {
        const Atom &a = atoms[m[0]];
        int64_t d = *asConstant(a.divisor);
        Poly x = a.dividend;
        if (c > 0)
          x = add(x, constant(1 - d));
        r = add(r, scale(x, mulC(c, l / d)));
      } else {
        addTerm(r, m, mulC(c, l));
      }
    }
    if (overflow)
      return std::nullopt;
    auto bounds = monotoneBounds(r);
    if (!bounds || bounds->first.inf || bounds->first.v > INT64_MAX ||
        bounds->first.v < INT64_MIN)
      return std::nullopt;
    return static_cast<int64_t>(bounds->first.v);
  }

  /// Free symbols occurring in `p` (through floordiv atoms too).
  void collectSymbols(const Poly &p, llvm::SmallVectorImpl<unsigned> &out) {
    for (const auto &[m, c] : p)
      for (unsigned id : m) {
        const Atom &a = atoms[id];
        if (a.kind == Atom::Symbol) {
          if (!llvm::is_contained(out, a.index))
            out.push_back(a.index);
        } else if (a.kind == Atom::FloorDiv) {
          collectSymbols(a.dividend, out);
          collectSymbols(a.divisor, out);
        }
      }
  }
  bool hasDims(const Poly &p) {
    for (const auto &[m, c] : p)
      for (unsigned id : m) {
        const Atom &a = atoms[id];
        if (a.kind == Atom::Dim)
          return true;
        if (a.kind == Atom::FloorDiv &&
            (hasDims(a.dividend) || hasDims(a.divisor)))
          return true;
      }
    return false;
  }

  /// Whether the recorded substitutions and relations leave the symbol box
  /// intact (then monotone corners are attained, and exact).
  bool isBoxExact() {
    if (boxExact)
      return *boxExact;
    bool exact = true;
    for (const auto &[pos, e] : subst) {
      Poly p = toPoly(e);
      const SymbolInfo &s = symbols[pos];
      if (!polyMonotone(p)) {
        exact = false;
        break;
      }
      auto lo = corner(p, false), hi = corner(p, true);
      if (!lo || !hi || lo->inf || lo->v < s.min ||
          (s.max && (hi->inf || hi->v > *s.max))) {
        exact = false;
        break;
      }
    }
    for (const auto &[e, rel] : relations) {
      Poly p = toPoly(e);
      if (rel == Rel::EQ && !p.empty()) {
        exact = false;
        break;
      }
      if (rel == Rel::GE) {
        auto lo = polyMonotone(p) ? corner(p, false) : std::nullopt;
        if (!lo || lo->inf || lo->v < 0) {
          exact = false;
          break;
        }
      }
    }
    boxExact = exact;
    return exact;
  }

  //===--------------------------------------------------------------------===//
  // Sample points (witnesses)
  //===--------------------------------------------------------------------===//

  /// Whether the assignment of free symbols satisfies all constraints.
  bool isValidPoint(llvm::ArrayRef<int64_t> values) {
    for (unsigned i = 0, n = symbols.size(); i < n; ++i) {
      std::optional<int64_t> v;
      if (subst.count(i))
        v = evalPoly(toPoly(subst[i]), values);
      else
        v = values[i];
      if (!v || *v < symbols[i].min || (symbols[i].max && *v > *symbols[i].max))
        return false;
    }
    for (const auto &[e, rel] : relations) {
      auto v = evalPoly(toPoly(e), values);
      if (!v || (rel == Rel::EQ ? *v != 0 : *v < 0))
        return false;
    }
    return true;
  }

  struct Signs {
    bool pos = false, neg = false, zero = false;
  };
  /// Evaluates `diff` on a few valid points: the likely/min base point and
  /// single-symbol bumps of the symbols in `diff`.
  Signs sample(const Poly &diff) {
    Signs signs;
    llvm::SmallVector<unsigned> syms;
    collectSymbols(diff, syms);
    std::vector<int64_t> base(symbols.size());
    for (unsigned i = 0; i < symbols.size(); ++i) {
      const SymbolInfo &s = symbols[i];
      base[i] = s.min;
      if (s.likely && *s.likely >= s.min && (!s.max || *s.likely <= *s.max))
        base[i] = *s.likely;
    }
    auto tryPoint = [&](llvm::ArrayRef<int64_t> pt) {
      if (!isValidPoint(pt))
        return;
      auto v = evalPoly(diff, pt);
      if (!v)
        return;
      (*v > 0 ? signs.pos : *v < 0 ? signs.neg : signs.zero) = true;
    };
    std::vector<int64_t> mins(symbols.size());
    for (unsigned i = 0; i < symbols.size(); ++i)
      mins[i] = symbols[i].min;
    tryPoint(base);
    tryPoint(mins);
    // Single-symbol bumps, small and large (a quadratic term overtakes a
    // linear one only for large values: 4*seq*seq vs 256*seq), and the
    // max corner when every symbol is bounded.
    for (unsigned s : syms) {
      const SymbolInfo &info = symbols[s];
      for (int64_t bump : {1, 3, 100, 10000}) {
        std::vector<int64_t> pt = mins;
        pt[s] =
            info.max ? std::min(*info.max, info.min + bump) : info.min + bump;
        tryPoint(pt);
      }
    }
    std::vector<int64_t> maxs = mins;
    for (unsigned s : syms)
      maxs[s] = symbols[s].max ? *symbols[s].max : symbols[s].min + 10000;
    tryPoint(maxs);
    return signs;
  }

  //===--------------------------------------------------------------------===//
  // Z3
  //===--------------------------------------------------------------------===//

  /// Checks `background && query` with Z3; the background is sliced to the
  /// constraints that share symbols (transitively) with the query.
  Z3Status z3Check(const Poly &p, Rel rel) {
    std::string k = std::to_string(static_cast<int>(rel)) + ":" + key(p);
    auto it = z3Cache.find(k);
    if (it != z3Cache.end())
      return it->second;

    // Background constraints with their symbol sets.
    struct Item {
      Constraint c;
      llvm::SmallVector<unsigned> syms;
    };
    std::vector<Item> items;
    for (const auto &[pos, e] : subst) {
      Item item;
      item.c.poly =
          add(toPoly(e),
              scale(atomPoly(intern(Atom{Atom::Symbol, pos, {}, {}})), -1));
      item.c.rel = Rel::EQ;
      collectSymbols(item.c.poly, item.syms);
      items.push_back(std::move(item));
    }
    for (const auto &[e, r] : relations) {
      Item item{{toPoly(e), r}, {}};
      collectSymbols(item.c.poly, item.syms);
      items.push_back(std::move(item));
    }
    llvm::SmallVector<unsigned> live;
    collectSymbols(p, live);
    std::vector<bool> used(items.size(), false);
    for (bool changed = true; changed;) {
      changed = false;
      for (unsigned i = 0; i < items.size(); ++i) {
        if (used[i])
          continue;
        if (llvm::any_of(items[i].syms, [&](unsigned s) {
              return llvm::is_contained(live, s);
            })) {
          used[i] = true;
          changed = true;
          for (unsigned s : items[i].syms)
            if (!llvm::is_contained(live, s))
              live.push_back(s);
        }
      }
    }
    std::vector<Constraint> cs;
    for (unsigned s : live) {
      Poly sp = atomPoly(intern(Atom{Atom::Symbol, s, {}, {}}));
      cs.push_back({add(sp, constant(-symbols[s].min)), Rel::GE});
      if (symbols[s].max)
        cs.push_back({add(scale(sp, -1), constant(*symbols[s].max)), Rel::GE});
    }
    for (unsigned i = 0; i < items.size(); ++i)
      if (used[i])
        cs.push_back(items[i].c);
    cs.push_back({p, rel});

    // A zero time limit turns Z3 off: what the cheap steps could not
    // decide stays UNKNOWN. So does an exhausted budget: after
    // kMaxZ3Unknowns checks that ran out of resources, the queries left
    // are likely of the same hard kind, and each would cost the whole time
    // limit (a model once spent minutes here). Counted, so deterministic.
    if (timeoutMs == 0)
      return Z3Status::Unknown;
    if (maxZ3Constraints && cs.size() > maxZ3Constraints) {
      ++stats.z3SizeSkips;
      return Z3Status::Unknown;
    }
    if (stats.z3Timeouts >= kMaxZ3Unknowns) {
      ++stats.z3BudgetSkips;
      return Z3Status::Unknown;
    }
    std::string error;
    ++stats.z3Calls;
    auto start = std::chrono::steady_clock::now();
    Z3Status status = z3.check(atoms, cs, timeoutMs, error);
    stats.z3TimeMs += std::chrono::duration<double, std::milli>(
                          std::chrono::steady_clock::now() - start)
                          .count();
    if (status == Z3Status::Unknown)
      ++stats.z3Timeouts;
    if (status == Z3Status::Error)
      ++stats.z3Errors;
    // Unknown is cached too: the resource limit is deterministic, so the
    // same query would run out again.
    if (status != Z3Status::Error)
      z3Cache[k] = status;
    return status;
  }
  /// True when Z3 proves `p REL 0` impossible.
  bool impossible(const Poly &p, Rel rel) {
    return z3Check(p, rel) == Z3Status::Unsat;
  }

  //===--------------------------------------------------------------------===//
  // Queries
  //===--------------------------------------------------------------------===//

  /// Makes the first non-constant coefficient positive; returns whether the
  /// polynomial was negated.
  bool normalizeSign(Poly &p) {
    for (const auto &[m, c] : p)
      if (!m.empty()) {
        if (c < 0) {
          p = scale(p, -1);
          return true;
        }
        return false;
      }
    return false;
  }

  CompareResult compareDiff(const Poly &rawDiff) {
    // Positive content and factors >= 1 do not change the sign.
    Poly diff = cancel(rawDiff);
    // Monotone difference: bounds at the corners of the box. The box holds
    // every valid point, so its bounds are bounds of `diff` even where the
    // relations cut it (then they need not be attained).
    bool boxNoLt = false, boxNoGt = false;
    for (bool negated : {false, true}) {
      Poly p = negated ? scale(diff, -1) : diff;
      auto bounds = monotoneBounds(p);
      if (!bounds)
        continue;
      auto [lo, hi] = *bounds;
      if (lo.inf)
        break;
      auto orient = [&](CompareResult r) { return negated ? flip(r) : r; };
      if (lo.v > 0) {
        ++stats.canonicalHits;
        return orient(CompareResult::GT);
      }
      if (!isBoxExact()) {
        (negated ? boxNoGt : boxNoLt) = lo.v >= 0;
        (negated ? boxNoLt : boxNoGt) = !hi.inf && hi.v <= 0;
        break;
      }
      // Box corners are valid points: the bounds are attained.
      ++stats.canonicalHits;
      if (lo.v == 0)
        return orient(!hi.inf && hi.v == 0 ? CompareResult::EQ
                                           : CompareResult::GE);
      if (!hi.inf && hi.v < 0)
        return orient(CompareResult::LT);
      if (!hi.inf && hi.v == 0)
        return orient(CompareResult::LE);
      return CompareResult::UNKNOWN;
    }

    Signs signs = sample(diff);
    if (signs.pos && signs.neg) {
      ++stats.canonicalHits;
      return CompareResult::UNKNOWN;
    }
    if (auto r = compareProducts(diff))
      return *r;
    Poly neg = scale(diff, -1);
    // Floordiv relaxation, then sample signs for what it leaves open.
    std::optional<int64_t> lbDiff = relaxedLowerBound(diff);
    std::optional<int64_t> lbNeg = relaxedLowerBound(neg);
    bool provenNoLt = lbDiff && *lbDiff >= 0;
    bool provenNoGt = lbNeg && *lbNeg >= 0;
    if ((lbDiff && *lbDiff > 0) || (lbNeg && *lbNeg > 0) ||
        (provenNoLt && (signs.zero || signs.pos)) ||
        (provenNoGt && (signs.zero || signs.neg))) {
      ++stats.canonicalHits;
      if (lbDiff && *lbDiff > 0)
        return CompareResult::GT;
      if (lbNeg && *lbNeg > 0)
        return CompareResult::LT;
      if (provenNoLt && signs.zero)
        return signs.pos ? CompareResult::GE
                         : (provenNoGt ? CompareResult::EQ : CompareResult::GE);
      if (provenNoGt && signs.zero)
        return CompareResult::LE;
      --stats.canonicalHits; // only a strict sign was seen: ask about EQ
    }
    // The box bounds answer what Z3 would prove from the symbol ranges.
    bool canLt =
        !provenNoLt && !boxNoLt && (signs.neg || !impossible(neg, Rel::GT));
    bool canGt =
        !provenNoGt && !boxNoGt && (signs.pos || !impossible(diff, Rel::GT));
    if (canLt && canGt)
      return CompareResult::UNKNOWN;
    if (!canLt && !canGt)
      return CompareResult::EQ;
    bool canEq = signs.zero || !impossible(diff, Rel::EQ);
    if (!canLt)
      return canEq ? CompareResult::GE : CompareResult::GT;
    return canEq ? CompareResult::LE : CompareResult::LT;
  }

  /// `A - B` for products of non-negative, non-decreasing atoms of equal
  /// degree (feature-map sizes `h1*w1` vs `h0*w0`): when some pairing has
  /// `a_k <= b_k` for every k, then `A <= B`; strictly when one pair is
  /// strict and every `b` is >= 1. Non-linear for Z3, cheap factor-wise.
  /// May answer LE/GE where LT/GT or EQ holds for other reasons (sound).
  std::optional<CompareResult> compareProducts(const Poly &diff) {
    if (diff.size() != 2)
      return std::nullopt;
    auto it = diff.begin();
    const auto &[m1, c1] = *it++;
    const auto &[m2, c2] = *it;
    if (m1.empty() || m2.empty() || c1 != -c2 || (c1 != 1 && c1 != -1) ||
        m1.size() != m2.size() || m1.size() < 2 || m1.size() > 3)
      return std::nullopt;
    Monomial a = c1 == 1 ? m1 : m2, b = c1 == 1 ? m2 : m1; // diff = a - b
    for (const Monomial *m : {&a, &b})
      for (unsigned id : *m)
        if (!atomMonotone(id))
          return std::nullopt;
    auto atLeastOne = [&](const Monomial &m) {
      return llvm::all_of(m, [&](unsigned id) {
        auto lo = cornerAtom(id, /*atMax=*/false);
        return lo && !lo->inf && lo->v >= 1;
      });
    };
    std::map<std::pair<unsigned, unsigned>, CompareResult> memo;
    auto pair = [&](unsigned x, unsigned y) {
      auto key = std::make_pair(x, y);
      auto found = memo.find(key);
      if (found != memo.end())
        return found->second;
      CompareResult r =
          x == y ? CompareResult::EQ
                 : compareDiff(add(atomPoly(x), scale(atomPoly(y), -1)));
      memo[key] = r;
      return r;
    };
    // Sub-comparisons are not queries: count one canonical hit for the
    // product when no Z3 call was needed.
    int64_t hitsBefore = stats.canonicalHits, z3Before = stats.z3Calls;
    auto done = [&](CompareResult r) {
      stats.canonicalHits = hitsBefore + (stats.z3Calls == z3Before ? 1 : 0);
      return r;
    };
    Monomial perm = b;
    std::sort(perm.begin(), perm.end());
    do {
      bool le = true, ge = true, lt = false, gt = false;
      for (size_t k = 0; k < a.size() && (le || ge); ++k) {
        CompareResult r = pair(a[k], perm[k]);
        le &= r == CompareResult::LT || r == CompareResult::LE ||
              r == CompareResult::EQ;
        ge &= r == CompareResult::GT || r == CompareResult::GE ||
              r == CompareResult::EQ;
        lt |= r == CompareResult::LT;
        gt |= r == CompareResult::GT;
      }
      if (le && ge)
        return done(CompareResult::EQ);
      if (le)
        return done(lt && atLeastOne(b) ? CompareResult::LT
                                        : CompareResult::LE);
      if (ge)
        return done(gt && atLeastOne(a) ? CompareResult::GT
                                        : CompareResult::GE);
    } while (std::next_permutation(perm.begin(), perm.end()));
    stats.canonicalHits = hitsBefore;
    return std::nullopt;
  }

  bool isEqualDiff(const Poly &rawDiff) {
    Poly diff = cancel(rawDiff);
    for (bool negated : {false, true}) {
      Poly p = negated ? scale(diff, -1) : diff;
      auto bounds = monotoneBounds(p);
      if (bounds && !bounds->first.inf && bounds->first.v > 0) {
        ++stats.canonicalHits;
        return false;
      }
    }
    Signs signs = sample(diff);
    if (signs.pos || signs.neg) {
      ++stats.canonicalHits;
      return false;
    }
    return impossible(diff, Rel::NE);
  }

  /// Shared front end of isEqual/compare: canonical difference, constant
  /// answers, cache lookup. Returns the cache entry key in `cacheKey`.
  std::optional<Poly> prepare(AffineExpr a, AffineExpr b, bool &negated,
                              std::string &cacheKey) {
    overflow = false;
    Poly diff = add(toPoly(a), scale(toPoly(b), -1));
    if (overflow) {
      polyMemo.clear();
      return std::nullopt;
    }
    negated = normalizeSign(diff);
    cacheKey = key(diff);
    return diff;
  }

  //===--------------------------------------------------------------------===//
  // Recording constraints
  //===--------------------------------------------------------------------===//

  /// Divides out the integer content and atoms known to be >= 1 (symbols
  /// with min >= 1): `(s0 - s3) * s1 == 0` with `s1 >= 1` gives `s0 == s3`.
  Poly cancel(Poly p) {
    if (p.empty())
      return p;
    int64_t g = 0;
    for (const auto &[m, c] : p)
      g = std::gcd(g, c);
    if (g > 1) {
      Poly r;
      for (const auto &[m, c] : p)
        r.emplace(m, c / g);
      p = std::move(r);
    }
    // Common atoms of all monomials.
    Monomial common = p.begin()->first;
    for (const auto &[m, c] : p) {
      Monomial inter;
      std::set_intersection(common.begin(), common.end(), m.begin(), m.end(),
                            std::back_inserter(inter));
      common = std::move(inter);
    }
    Monomial removable;
    for (unsigned id : common) {
      const Atom &a = atoms[id];
      if (a.kind == Atom::Symbol && symbols[a.index].min >= 1)
        removable.push_back(id);
    }
    if (removable.empty())
      return p;
    Poly r;
    for (const auto &[m, c] : p) {
      Monomial rest;
      std::set_difference(m.begin(), m.end(), removable.begin(),
                          removable.end(), std::back_inserter(rest));
      r.emplace(rest, c);
    }
    return r;
  }

  /// Tries to solve `p == 0` for a symbol appearing only as `±1 * s`;
  /// prefers the most recent symbol so that later symbols are expressed in
  /// earlier ones (`s2 = s0 * s1` substitutes s2).
  bool trySubstitute(const Poly &p) {
    std::optional<unsigned> best;
    int64_t bestCoeff = 0;
    for (const auto &[m, c] : p) {
      if (m.size() != 1 || (c != 1 && c != -1))
        continue;
      const Atom &a = atoms[m[0]];
      if (a.kind != Atom::Symbol)
        continue;
      // The atom must not occur anywhere else.
      bool elsewhere = false;
      for (const auto &[m2, c2] : p) {
        if (m2 == m)
          continue;
        for (unsigned id : m2) {
          if (id == m[0])
            elsewhere = true;
          if (atoms[id].kind == Atom::FloorDiv) {
            llvm::SmallVector<unsigned> syms;
            collectSymbols(atomPoly(id), syms);
            if (llvm::is_contained(syms, a.index))
              elsewhere = true;
          }
        }
      }
      if (elsewhere)
        continue;
      if (!best || a.index > *best) {
        best = a.index;
        bestCoeff = c;
      }
    }
    if (!best)
      return false;
    Monomial m{intern(Atom{Atom::Symbol, *best, {}, {}})};
    Poly rest = p;
    rest.erase(m);
    // c*s + rest == 0  =>  s == -rest / c == -c * rest (c = ±1).
    subst[*best] = fromPoly(scale(rest, -bestCoeff));
    return true;
  }
};

//===----------------------------------------------------------------------===//
// Public API
//===----------------------------------------------------------------------===//

ShapeConstraintSolver::ShapeConstraintSolver(MLIRContext *context)
    : impl(std::make_unique<Impl>(context)) {}
ShapeConstraintSolver::~ShapeConstraintSolver() = default;

AffineExpr ShapeConstraintSolver::addSymbol(const SymbolInfo &info) {
  impl->invalidate();
  impl->symbols.push_back(info);
  return getAffineSymbolExpr(impl->symbols.size() - 1, impl->context);
}

unsigned ShapeConstraintSolver::getNumSymbols() const {
  return impl->symbols.size();
}

const SymbolInfo &ShapeConstraintSolver::getSymbol(unsigned i) const {
  return impl->symbols[i];
}

void ShapeConstraintSolver::addEquality(AffineExpr a, AffineExpr b) {
  Impl &s = *impl;
  s.overflow = false;
  Poly diff = s.add(s.toPoly(a), s.scale(s.toPoly(b), -1));
  s.invalidate();
  if (s.overflow) {
    s.relations.push_back({a - b, Rel::EQ});
    return;
  }
  diff = s.cancel(diff);
  if (diff.empty())
    return;
  if (auto c = Impl::asConstant(diff)) {
    s.inconsistent = true;
    return;
  }
  if (!s.trySubstitute(diff))
    s.relations.push_back({s.fromPoly(diff), Rel::EQ});
  s.invalidate();
}

void ShapeConstraintSolver::addGreaterOrEqual(AffineExpr a, AffineExpr b) {
  impl->invalidate();
  impl->relations.push_back({a - b, Rel::GE});
}

bool ShapeConstraintSolver::isEqual(AffineExpr a, AffineExpr b) {
  Impl &s = *impl;
  ++s.stats.queries;
  if (s.inconsistent)
    return false;
  bool negated;
  std::string k;
  std::optional<Poly> diff = s.prepare(a, b, negated, k);
  if (!diff)
    return false;
  if (auto c = Impl::asConstant(*diff)) {
    ++s.stats.canonicalHits;
    return *c == 0;
  }
  Impl::QueryEntry &entry = s.queryCache[k];
  if (entry.eq || entry.cmp) {
    ++s.stats.cacheHits;
    return entry.eq ? *entry.eq : *entry.cmp == CompareResult::EQ;
  }
  bool result = s.isEqualDiff(*diff);
  s.queryCache[k].eq = result;
  return result;
}

CompareResult ShapeConstraintSolver::compare(AffineExpr a, AffineExpr b) {
  Impl &s = *impl;
  ++s.stats.queries;
  if (s.inconsistent)
    return CompareResult::UNKNOWN;
  bool negated;
  std::string k;
  std::optional<Poly> diff = s.prepare(a, b, negated, k);
  if (!diff)
    return CompareResult::UNKNOWN;
  if (auto c = Impl::asConstant(*diff)) {
    ++s.stats.canonicalHits;
    return fromConstant(*c);
  }
  auto orient = [&](CompareResult r) { return negated ? flip(r) : r; };
  Impl::QueryEntry &entry = s.queryCache[k];
  if (entry.cmp) {
    ++s.stats.cacheHits;
    return orient(*entry.cmp);
  }
  if (entry.eq && *entry.eq) {
    ++s.stats.cacheHits;
    return CompareResult::EQ;
  }
  CompareResult result = s.compareDiff(*diff);
  s.queryCache[k].cmp = result;
  return orient(result);
}

std::optional<int64_t>
ShapeConstraintSolver::evaluate(AffineExpr e,
                                llvm::ArrayRef<int64_t> bindings) const {
  switch (e.getKind()) {
  case AffineExprKind::Constant:
    return cast<AffineConstantExpr>(e).getValue();
  case AffineExprKind::SymbolId: {
    unsigned pos = cast<AffineSymbolExpr>(e).getPosition();
    if (pos >= bindings.size())
      return std::nullopt;
    return bindings[pos];
  }
  case AffineExprKind::DimId:
    return std::nullopt;
  default:
    break;
  }
  auto bin = cast<AffineBinaryOpExpr>(e);
  std::optional<int64_t> l = evaluate(bin.getLHS(), bindings);
  std::optional<int64_t> r = evaluate(bin.getRHS(), bindings);
  if (!l || !r)
    return std::nullopt;
  switch (e.getKind()) {
  case AffineExprKind::Add:
    return addChecked(*l, *r);
  case AffineExprKind::Mul:
    return mulChecked(*l, *r);
  case AffineExprKind::FloorDiv:
    return floorDivChecked(*l, *r);
  case AffineExprKind::CeilDiv: {
    if (*l == INT64_MIN)
      return std::nullopt;
    auto q = floorDivChecked(-*l, *r);
    if (!q)
      return std::nullopt;
    return -*q;
  }
  case AffineExprKind::Mod: {
    auto q = floorDivChecked(*l, *r);
    if (!q)
      return std::nullopt;
    auto p = mulChecked(*q, *r);
    if (!p)
      return std::nullopt;
    return *l - *p;
  }
  default:
    return std::nullopt;
  }
}

AffineExpr ShapeConstraintSolver::simplify(AffineExpr e) {
  impl->overflow = false;
  Poly p = impl->toPoly(e);
  if (impl->overflow) {
    impl->polyMemo.clear();
    return e;
  }
  return impl->fromPoly(p);
}

void ShapeConstraintSolver::setTimeoutMs(unsigned ms) {
  impl->timeoutMs = ms;
  impl->z3Cache.clear();
  impl->queryCache.clear();
}

unsigned ShapeConstraintSolver::getTimeoutMs() const { return impl->timeoutMs; }

void ShapeConstraintSolver::setMaxZ3Constraints(unsigned n) {
  impl->maxZ3Constraints = n;
  impl->z3Cache.clear();
  impl->queryCache.clear();
}

unsigned ShapeConstraintSolver::getMaxZ3Constraints() const {
  return impl->maxZ3Constraints;
}

const SolverStats &ShapeConstraintSolver::getStats() const {
  return impl->stats;
}
