//===- ShapePropagate.cpp - symbolic dims of every value ------------------===//
//
// ShapeAnalysis (include/disc/Transforms/ShapeAnalysis.h) and the
// disc-shape-propagate / disc-shape-simplify / disc-strip-shape-annotations
// passes. See docs/symbolic-shapes.md, "Symbolic dims and passes".
//
// Expressions are AffineExprs over symbols s<i>, one per root symbol. They
// are kept in a canonical polynomial form (sum of monomials over symbols and
// opaque floordiv/ceildiv/mod atoms, sorted), so structural equality of two
// normalized expressions is equality of polynomials. Equalities learned from
// reshapes, dot contractions and concatenations are recorded in
// the ShapeConstraintSolver and, when one side is linear in a symbol,
// applied as a substitution (fresh symbols are eliminated first, so the
// final expressions are over input dims where possible).
//
//===----------------------------------------------------------------------===//
#include "disc/Dialect/Disc/IR/DiscDialect.h"
#include "disc/Dialect/DiscShape/IR/DiscShapeDialect.h"
#include "disc/Transforms/Passes.h"
#include "disc/Transforms/ShapeAnalysis.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/AffineExprVisitor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <functional>
#include <map>

namespace mlir::disc {
#define GEN_PASS_DEF_DISCSHAPEPROPAGATE
#define GEN_PASS_DEF_DISCSHAPESIMPLIFY
#define GEN_PASS_DEF_DISCSTRIPSHAPEANNOTATIONS
#include "disc/Transforms/Passes.h.inc"
} // namespace mlir::disc

using namespace mlir;
using namespace mlir::disc;

//===----------------------------------------------------------------------===//
// Canonical polynomials
//===----------------------------------------------------------------------===//

namespace {
/// Monomial: sorted list of atom ids (symbols are atoms 0..n-1, other
/// atoms are opaque floordiv/ceildiv/mod expressions).
using Monomial = SmallVector<unsigned, 4>;
using Poly = std::map<Monomial, int64_t>;

struct PolyContext {
  MLIRContext *ctx;
  unsigned numSymbols;
  DenseMap<AffineExpr, unsigned> atomIds{}; // non-symbol atoms
  SmallVector<AffineExpr> atoms{};          // by id - kAtomBase

  static constexpr unsigned kAtomBase = 1u << 20;

  unsigned atomId(AffineExpr e) {
    auto it = atomIds.find(e);
    if (it != atomIds.end())
      return it->second;
    unsigned id = kAtomBase + atoms.size();
    atoms.push_back(e);
    atomIds[e] = id;
    return id;
  }
  AffineExpr atomExpr(unsigned id) {
    if (id < kAtomBase)
      return getAffineSymbolExpr(id, ctx);
    return atoms[id - kAtomBase];
  }

  static Poly constant(int64_t c) {
    Poly p;
    if (c)
      p[{}] = c;
    return p;
  }
  static void addInto(Poly &a, const Poly &b, int64_t scale = 1) {
    for (auto &[m, c] : b) {
      int64_t &v = a[m];
      v += c * scale;
      if (v == 0)
        a.erase(m);
    }
  }
  static Poly mul(const Poly &a, const Poly &b) {
    Poly r;
    for (auto &[ma, ca] : a)
      for (auto &[mb, cb] : b) {
        Monomial m(ma);
        m.append(mb.begin(), mb.end());
        llvm::sort(m);
        int64_t &v = r[m];
        v += ca * cb;
        if (v == 0)
          r.erase(m);
      }
    return r;
  }
  static std::optional<int64_t> asConstant(const Poly &p) {
    if (p.empty())
      return 0;
    if (p.size() == 1 && p.begin()->first.empty())
      return p.begin()->second;
    return std::nullopt;
  }

  Poly toPoly(AffineExpr e) {
    switch (e.getKind()) {
    case AffineExprKind::Constant:
      return constant(cast<AffineConstantExpr>(e).getValue());
    case AffineExprKind::SymbolId: {
      Poly p;
      p[{cast<AffineSymbolExpr>(e).getPosition()}] = 1;
      return p;
    }
    case AffineExprKind::DimId: {
      Poly p;
      p[{atomId(e)}] = 1;
      return p;
    }
    case AffineExprKind::Add: {
      auto b = cast<AffineBinaryOpExpr>(e);
      Poly p = toPoly(b.getLHS());
      addInto(p, toPoly(b.getRHS()));
      return p;
    }
    case AffineExprKind::Mul: {
      auto b = cast<AffineBinaryOpExpr>(e);
      return mul(toPoly(b.getLHS()), toPoly(b.getRHS()));
    }
    default: {
      auto b = cast<AffineBinaryOpExpr>(e);
      Poly l = toPoly(b.getLHS());
      Poly r = toPoly(b.getRHS());
      std::optional<int64_t> lc = asConstant(l), rc = asConstant(r);
      if (lc && rc && *rc != 0) {
        int64_t a = *lc, c = *rc;
        switch (e.getKind()) {
        case AffineExprKind::FloorDiv: {
          int64_t q = a / c;
          if (a % c != 0 && ((a < 0) != (c < 0)))
            --q;
          return constant(q);
        }
        case AffineExprKind::CeilDiv: {
          int64_t q = a / c;
          if (a % c != 0 && ((a < 0) == (c < 0)))
            ++q;
          return constant(q);
        }
        default: {
          int64_t m = a % c;
          if (m < 0)
            m += c < 0 ? -c : c;
          return constant(m);
        }
        }
      }
      if (rc && *rc == 1 && e.getKind() != AffineExprKind::Mod)
        return l;
      // Exact division by a constant that divides every coefficient.
      if (rc && *rc > 0 && e.getKind() != AffineExprKind::Mod &&
          llvm::all_of(l, [&](auto &t) { return t.second % *rc == 0; })) {
        Poly q;
        for (auto &[m, c] : l)
          q[m] = c / *rc;
        return q;
      }
      AffineExpr canon =
          getAffineBinaryOpExpr(e.getKind(), fromPoly(l), fromPoly(r));
      Poly p;
      p[{atomId(canon)}] = 1;
      return p;
    }
    }
  }

  AffineExpr fromPoly(const Poly &p) {
    AffineExpr sum;
    AffineExpr constTerm;
    for (auto &[m, c] : p) {
      if (m.empty()) {
        constTerm = getAffineConstantExpr(c, ctx);
        continue;
      }
      AffineExpr term;
      for (unsigned id : m) {
        AffineExpr a = atomExpr(id);
        term = term ? getAffineBinaryOpExpr(AffineExprKind::Mul, term, a) : a;
      }
      if (c != 1)
        term = getAffineBinaryOpExpr(AffineExprKind::Mul, term,
                                     getAffineConstantExpr(c, ctx));
      sum = sum ? getAffineBinaryOpExpr(AffineExprKind::Add, sum, term) : term;
    }
    if (constTerm)
      sum = sum ? getAffineBinaryOpExpr(AffineExprKind::Add, sum, constTerm)
                : constTerm;
    return sum ? sum : getAffineConstantExpr(0, ctx);
  }
};
} // namespace

static bool usesSymbol(AffineExpr e, unsigned k) {
  bool found = false;
  e.walk([&](AffineExpr x) {
    if (auto s = dyn_cast<AffineSymbolExpr>(x))
      found |= s.getPosition() == k;
  });
  return found;
}

//===----------------------------------------------------------------------===//
// ShapeAnalysis
//===----------------------------------------------------------------------===//

ShapeAnalysis::ShapeAnalysis(func::FuncOp func,
                             const llvm::StringMap<DimRange> &ranges)
    : func(func), ctx(func.getContext()), ranges(ranges), solver(ctx) {}

AffineExpr ShapeAnalysis::cst(int64_t c) {
  return getAffineConstantExpr(c, ctx);
}

std::optional<int64_t> ShapeAnalysis::constOf(AffineExpr e) {
  if (!e)
    return std::nullopt;
  if (auto c = dyn_cast<AffineConstantExpr>(normalize(e)))
    return c.getValue();
  return std::nullopt;
}

AffineExpr ShapeAnalysis::newSymbol(StringRef name, bool root, bool unknown,
                                    const DimRange *range) {
  SymbolInfo info;
  info.name = name.str();
  info.min = root ? 1 : 0;
  if (range) {
    info.min = range->min;
    info.max = range->max;
    info.likely = range->likely;
  }
  AffineExpr e = solver.addSymbol(info);
  unsigned pos = cast<AffineSymbolExpr>(e).getPosition();
  (void)pos;
  symbols.push_back({name.str(), root, unknown});
  subst.push_back(getAffineSymbolExpr(symbols.size() - 1, ctx));
  return getAffineSymbolExpr(symbols.size() - 1, ctx);
}

AffineExpr ShapeAnalysis::fresh(Operation *op, bool unknown) {
  std::string name = (unknown ? "?" : "") + op->getName().stripDialect().str() +
                     std::to_string(symbols.size());
  return newSymbol(name, false, unknown);
}

AffineExpr ShapeAnalysis::normalize(AffineExpr e) {
  if (!e)
    return e;
  for (int i = 0; i < 16; ++i) {
    AffineExpr n = e.replaceSymbols(subst);
    if (n == e)
      break;
    e = n;
  }
  PolyContext pc{ctx, (unsigned)symbols.size()};
  return pc.fromPoly(pc.toPoly(e));
}

bool ShapeAnalysis::isProvenEqual(Value a, unsigned i, Value b, unsigned j) {
  SmallVector<AffineExpr> da = getDims(a), db = getDims(b);
  return i < da.size() && j < db.size() && da[i] && da[i] == db[j];
}

void ShapeAnalysis::equate(AffineExpr a, AffineExpr b) {
  if (!a || !b)
    return;
  a = normalize(a);
  b = normalize(b);
  if (a == b)
    return;
  solver.addEquality(a, b);
  equalities.push_back({a, b});
  PolyContext pc{ctx, (unsigned)symbols.size()};
  Poly diff = pc.toPoly(a);
  PolyContext::addInto(diff, pc.toPoly(b), -1);
  // Pick a symbol k that occurs only as the linear monomial {k} with
  // coefficient +-1 and in no opaque atom: k = -(rest) / coeff.
  int best = -1;
  for (auto &[m, c] : diff) {
    if (m.size() != 1 || m[0] >= PolyContext::kAtomBase || (c != 1 && c != -1))
      continue;
    unsigned k = m[0];
    bool ok = true;
    for (auto &[m2, c2] : diff) {
      if (m2 == m)
        continue;
      for (unsigned id : m2)
        if (id == k ||
            (id >= PolyContext::kAtomBase && usesSymbol(pc.atomExpr(id), k)))
          ok = false;
    }
    if (!ok)
      continue;
    auto better = [&](unsigned x, int y) {
      if (y < 0)
        return true;
      bool xr = symbols[x].isRoot, yr = symbols[y].isRoot;
      if (xr != yr)
        return !xr; // eliminate non-root symbols first
      return (int)x > y;
    };
    if (better(k, best))
      best = k;
  }
  if (best < 0)
    return;
  int64_t coeff = diff[{(unsigned)best}];
  Poly rest = diff;
  rest.erase({(unsigned)best});
  Poly sol;
  PolyContext::addInto(sol, rest, coeff == 1 ? -1 : 1);
  subst[best] = pc.fromPoly(sol);
}

SmallVector<AffineExpr> ShapeAnalysis::getDims(Value v) {
  auto it = shapes.find(v);
  if (it == shapes.end())
    return {};
  SmallVector<AffineExpr> r;
  for (AffineExpr e : it->second)
    r.push_back(normalize(e));
  return r;
}

bool ShapeAnalysis::hasUnknown(AffineExpr e) {
  bool found = false;
  normalize(e).walk([&](AffineExpr x) {
    if (auto s = dyn_cast<AffineSymbolExpr>(x))
      found |= symbols[s.getPosition()].unknown;
  });
  return found;
}

std::optional<unsigned> ShapeAnalysis::getMergedInto(unsigned i) const {
  if (auto s = dyn_cast<AffineSymbolExpr>(subst[i]))
    if (s.getPosition() != i)
      return s.getPosition();
  return std::nullopt;
}

SmallVector<AffineExpr> ShapeAnalysis::dimsOrFresh(Value v) {
  auto it = shapes.find(v);
  if (it != shapes.end())
    return it->second;
  auto t = dyn_cast<RankedTensorType>(v.getType());
  if (!t)
    return {};
  SmallVector<AffineExpr> dims;
  for (int64_t d : t.getShape())
    dims.push_back(ShapedType::isDynamic(d) ? AffineExpr() : cst(d));
  Operation *owner = v.getDefiningOp() ? v.getDefiningOp() : func;
  setDims(v, dims, owner);
  return shapes[v];
}

void ShapeAnalysis::setDims(Value v, SmallVector<AffineExpr> dims,
                            Operation *op) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  if (!t)
    return;
  dims.resize(t.getRank());
  for (int64_t i = 0; i < t.getRank(); ++i) {
    if (!t.isDynamicDim(i)) {
      dims[i] = cst(t.getDimSize(i));
      continue;
    }
    if (!dims[i])
      dims[i] = fresh(op, /*unknown=*/true);
    dims[i] = normalize(dims[i]);
  }
  shapes[v] = std::move(dims);
}

bool ShapeAnalysis::isValueNonNegative(Value v, unsigned i) {
  std::optional<SmallVector<AffineExpr>> vals = valuesOf(v);
  if (!vals || i >= vals->size() || !(*vals)[i])
    return false;
  AffineExpr e = normalize((*vals)[i]);
  if (hasUnknown(e))
    return false;
  bool ok = true;
  e.walk([&](AffineExpr sub) {
    if (auto c = dyn_cast<AffineConstantExpr>(sub))
      ok &= c.getValue() >= 0;
    else if (sub.getKind() == AffineExprKind::Mod || isa<AffineDimExpr>(sub))
      ok = false;
  });
  return ok;
}

std::optional<SmallVector<AffineExpr>> ShapeAnalysis::valuesOf(Value v) {
  auto it = values.find(v);
  if (it == values.end())
    return std::nullopt;
  return it->second;
}

AffineExpr ShapeAnalysis::exactDiv(AffineExpr num, AffineExpr den) {
  num = normalize(num);
  den = normalize(den);
  PolyContext pc{ctx, (unsigned)symbols.size()};
  Poly n = pc.toPoly(num), d = pc.toPoly(den);
  if (d.empty() || d.begin()->second == 0)
    return {};
  // m / dm for monomials (as multisets of symbol ids); false when dm does
  // not divide m.
  auto divide = [](const Monomial &m, const Monomial &dm, Monomial &rest) {
    SmallVector<unsigned, 4> need(dm.begin(), dm.end());
    rest.clear();
    for (unsigned id : m) {
      auto pos = llvm::find(need, id);
      if (pos != need.end())
        need.erase(pos);
      else
        rest.push_back(id);
    }
    return need.empty();
  };
  if (d.size() != 1) {
    // A divisor with several terms (a product of dims that are sums, e.g.
    // `N*(H floordiv 2 + 1)*(W floordiv 2 + 1)` for a reshape's -1): try
    // each monomial quotient of a dividend term by the divisor's first
    // term, and keep it when it divides exactly. Without this the
    // quotient becomes a fresh symbol bound by a non-linear equation,
    // which only Z3 can use, slowly.
    const Monomial &dm = d.begin()->first;
    int64_t dc = d.begin()->second;
    for (auto &[m, c] : n) {
      Monomial rest;
      if (c % dc != 0 || !divide(m, dm, rest))
        continue;
      Poly q;
      q[rest] = c / dc;
      AffineExpr qe = pc.fromPoly(q);
      if (normalize(den * qe) == num)
        return qe;
    }
    return {};
  }
  const Monomial &dm = d.begin()->first;
  int64_t dc = d.begin()->second;
  Poly q;
  for (auto &[m, c] : n) {
    if (c % dc != 0)
      return {};
    // m must contain dm as a multiset.
    Monomial rest;
    SmallVector<unsigned, 4> need(dm.begin(), dm.end());
    for (unsigned id : m) {
      auto pos = llvm::find(need, id);
      if (pos != need.end())
        need.erase(pos);
      else
        rest.push_back(id);
    }
    if (!need.empty())
      return {};
    int64_t &v = q[rest];
    v += c / dc;
    if (v == 0)
      q.erase(rest);
  }
  return pc.fromPoly(q);
}

SmallVector<AffineExpr>
ShapeAnalysis::broadcast(ArrayRef<SmallVector<AffineExpr>> shapesIn,
                         Operation *op) {
  size_t rank = 0;
  for (auto &s : shapesIn)
    rank = std::max(rank, s.size());
  SmallVector<AffineExpr> out(rank, cst(1));
  for (size_t i = 0; i < rank; ++i) {
    AffineExpr acc = cst(1);
    for (auto &s : shapesIn) {
      if (s.size() + i < rank)
        continue;
      AffineExpr d = normalize(s[s.size() - rank + i]);
      if (!d)
        continue;
      std::optional<int64_t> ac = constOf(acc), dc = constOf(d);
      if (dc && *dc == 1)
        continue;
      if (ac && *ac == 1) {
        acc = d;
        continue;
      }
      if (ac) // static non-1 wins; a dynamic partner is 1 or equal
        continue;
      if (dc) {
        acc = d;
        continue;
      }
      if (acc == d)
        continue;
      // Dynamic vs dynamic: a provably-1 side gives way, provably equal
      // sides keep their expression. Otherwise either side may be 1 at run
      // time (x[a] + y[c] with c = 1), so nothing is recorded between them:
      // an equality would be unsound (simplify could make an input dim
      // static and reject valid inputs). The result is a fresh symbol.
      if (solver.isEqual(d, cst(1)))
        continue;
      if (solver.isEqual(acc, cst(1))) {
        acc = d;
        continue;
      }
      if (solver.isEqual(acc, d))
        continue;
      acc = fresh(op, /*unknown=*/false);
    }
    out[i] = acc;
  }
  return out;
}

AffineExpr ShapeAnalysis::negativeStepSliceSize(AffineExpr dim,
                                                AffineExpr start,
                                                AffineExpr end, int64_t step,
                                                Operation *op) {
  // ONNX clamps the start to [0, dim - 1] and the end to [-1, dim - 1] (after
  // adding dim to negative values); the count is ceil((start - end) / -step).
  // Only constant bounds; a clamp the solver cannot decide gives a fresh
  // symbol.
  constexpr int64_t kHuge = int64_t(1) << 40;
  std::optional<int64_t> sC = constOf(start), eC = constOf(end);
  if (!sC || !eC)
    return fresh(op, false);
  AffineExpr last = normalize(dim - 1);
  // Clamps `v` to [lo, last]: `v` when provably in range, the bound when
  // provably outside, null otherwise.
  auto clamp = [&](AffineExpr v, int64_t lo) -> AffineExpr {
    v = normalize(v);
    CompareResult below = solver.compare(v, cst(lo));
    if (below == CompareResult::LT || below == CompareResult::LE)
      return cst(lo);
    if (below == CompareResult::UNKNOWN)
      return AffineExpr();
    CompareResult above = solver.compare(v, last);
    if (above == CompareResult::LT || above == CompareResult::LE ||
        above == CompareResult::EQ)
      return v;
    if (above == CompareResult::GT || above == CompareResult::GE)
      return last;
    return AffineExpr();
  };
  AffineExpr s = *sC >= kHuge    ? last
                 : *sC <= -kHuge ? cst(0)
                 : *sC < 0       ? clamp(dim + *sC, 0)
                                 : clamp(cst(*sC), 0);
  AffineExpr e = *eC <= -kHuge  ? cst(-1)
                 : *eC >= kHuge ? last
                 : *eC < 0      ? clamp(dim + *eC, -1)
                                : clamp(cst(*eC), -1);
  if (!s || !e)
    return fresh(op, false);
  AffineExpr n = normalize(s - e);
  int64_t m = -step;
  if (auto c = constOf(n))
    return cst(std::max<int64_t>(0, (*c + m - 1) / m));
  CompareResult r = solver.compare(n, cst(0));
  if (r == CompareResult::LT || r == CompareResult::LE ||
      r == CompareResult::EQ)
    return cst(0);
  if (r != CompareResult::GT && r != CompareResult::GE)
    return fresh(op, false);
  return m == 1 ? n : normalize(n.ceilDiv(m));
}

AffineExpr ShapeAnalysis::sliceSize(AffineExpr dim, AffineExpr start,
                                    AffineExpr end, AffineExpr step,
                                    Operation *op) {
  std::optional<int64_t> stepC = constOf(step);
  if (!dim || !start || !end || !stepC || *stepC == 0)
    return fresh(op, false);
  std::optional<int64_t> dC = constOf(dim), sC = constOf(start),
                         eC = constOf(end);
  if (dC && sC && eC) {
    int64_t d = *dC, s = *sC, e = *eC, st = *stepC;
    auto norm = [&](int64_t v, int64_t lo, int64_t hi) {
      if (v < 0)
        v += d;
      return std::min(std::max(v, lo), hi);
    };
    int64_t ns = st < 0 ? norm(s, 0, d - 1) : norm(s, 0, d);
    int64_t ne = st < 0 ? norm(e, -1, d - 1) : norm(e, 0, d);
    int64_t n = ne - ns;
    int64_t q = n / st;
    if (n % st != 0 && ((n < 0) == (st < 0)))
      ++q;
    return cst(std::max<int64_t>(q, 0));
  }
  if (*stepC < 0)
    return negativeStepSliceSize(dim, start, end, *stepC, op);
  // Positive step: wrap negative constants, clamp to [0, dim] when the
  // solver can decide the order, else a fresh symbol.
  auto bound = [&](AffineExpr v) -> AffineExpr {
    if (auto c = constOf(v)) {
      if (*c >= (int64_t(1) << 40))
        return dim;
      if (*c < 0) {
        AffineExpr w = normalize(dim + *c);
        return solver.compare(w, cst(0)) == CompareResult::LT ||
                       solver.compare(w, cst(0)) == CompareResult::UNKNOWN
                   ? AffineExpr()
                   : w;
      }
    }
    if (auto c = constOf(v); c && *c == 0)
      return v;
    CompareResult r = solver.compare(v, dim);
    if (r == CompareResult::LE || r == CompareResult::LT ||
        r == CompareResult::EQ)
      return v;
    if (r == CompareResult::GE || r == CompareResult::GT)
      return dim;
    // Non-negative constant against a symbol: dims are assumed >= the
    // symbol's min; accept when the constant is within it.
    return AffineExpr();
  };
  AffineExpr s = bound(start), e = bound(end);
  if (!s || !e)
    return fresh(op, false);
  AffineExpr n = normalize(e - s);
  CompareResult r = solver.compare(n, cst(0));
  if (auto c = constOf(n))
    return cst(std::max<int64_t>(0, (*c + *stepC - 1) / *stepC));
  if (r == CompareResult::LT)
    return cst(0);
  // e >= s is provable, or s is 0 and e a clamped (non-negative) bound.
  if (r == CompareResult::UNKNOWN && !(constOf(s) && *constOf(s) == 0))
    return fresh(op, false);
  return *stepC == 1 ? n : normalize(n.ceilDiv(*stepC));
}

/// Integer element values of a small constant (flattened), if any.
static std::optional<SmallVector<int64_t>> constantInts(Attribute attr) {
  auto dense = dyn_cast<DenseIntElementsAttr>(attr);
  if (!dense || dense.getNumElements() > 64)
    return std::nullopt;
  SmallVector<int64_t> r;
  for (const APInt &v : dense.getValues<APInt>())
    r.push_back(dense.getElementType().isInteger(1) ? (int64_t)v.getZExtValue()
                                                    : v.getSExtValue());
  return r;
}

/// Small statically shaped integer tensors carry symbolic values.
static bool isShapeLike(Value v) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  return t && t.hasStaticShape() && t.getNumElements() <= 64 &&
         isa<IntegerType, IndexType>(t.getElementType());
}

void ShapeAnalysis::visit(Operation *op) {
  auto res = [&](unsigned i = 0) { return op->getResult(i); };
  auto setVals = [&](SmallVector<AffineExpr> v) {
    if (op->getNumResults() == 1 && isShapeLike(res()) &&
        v.size() ==
            (size_t)cast<RankedTensorType>(res().getType()).getNumElements())
      values[res()] = std::move(v);
  };
  // Elementwise-broadcast values of several operands, combined by `fn`.
  auto mapValues =
      [&](ArrayRef<Value> ins,
          llvm::function_ref<AffineExpr(ArrayRef<AffineExpr>)> fn) {
        if (op->getNumResults() != 1 || !isShapeLike(res()))
          return;
        size_t n = cast<RankedTensorType>(res().getType()).getNumElements();
        SmallVector<SmallVector<AffineExpr>> vs;
        for (Value in : ins) {
          auto v = valuesOf(in);
          if (!v || (v->size() != n && v->size() != 1))
            return;
          vs.push_back(*v);
        }
        SmallVector<AffineExpr> out;
        for (size_t i = 0; i < n; ++i) {
          SmallVector<AffineExpr> args;
          for (auto &v : vs)
            args.push_back(v.size() == 1 ? v[0] : v[i]);
          if (llvm::any_of(args, [](AffineExpr e) { return !e; })) {
            out.push_back(AffineExpr());
            continue;
          }
          AffineExpr r = fn(args);
          out.push_back(r ? normalize(r) : r);
        }
        setVals(out);
      };

  llvm::TypeSwitch<Operation *>(op)
      .Case([&](disc::ConstantOp c) {
        setDims(res(), {}, op);
        if (auto ints = constantInts(c.getValue())) {
          SmallVector<AffineExpr> v;
          for (int64_t x : *ints)
            v.push_back(cst(x));
          setVals(v);
        }
      })
      .Case([&](disc::ShapeOfOp s) {
        setDims(res(), {}, op);
        setVals(dimsOrFresh(s.getOperand()));
      })
      .Case([&](disc::ConvertOp c) {
        setDims(res(), dimsOrFresh(c.getOperand()), op);
        if (isa<IntegerType>(getElementTypeOrSelf(c.getOperand().getType())))
          if (auto v = valuesOf(c.getOperand()))
            setVals(*v);
      })
      .Case([&](disc::NegOp n) {
        setDims(res(), dimsOrFresh(n.getOperand()), op);
        mapValues({n.getOperand()},
                  [&](ArrayRef<AffineExpr> a) { return -a[0]; });
      })
      .Case([&](disc::SelectOp s) {
        SmallVector<SmallVector<AffineExpr>> ins = {
            dimsOrFresh(s.getPred()), dimsOrFresh(s.getOnTrue()),
            dimsOrFresh(s.getOnFalse())};
        setDims(res(), broadcast(ins, op), op);
        mapValues({s.getPred(), s.getOnTrue(), s.getOnFalse()},
                  [&](ArrayRef<AffineExpr> a) -> AffineExpr {
                    if (auto c = constOf(a[0]))
                      return *c ? a[1] : a[2];
                    if (normalize(a[1]) == normalize(a[2]))
                      return a[1];
                    return AffineExpr();
                  });
      })
      .Case([&](disc::CompareOp c) {
        SmallVector<SmallVector<AffineExpr>> ins = {dimsOrFresh(c.getLhs()),
                                                    dimsOrFresh(c.getRhs())};
        setDims(res(), broadcast(ins, op), op);
        auto dir = c.getDirection();
        mapValues({c.getLhs(), c.getRhs()},
                  [&](ArrayRef<AffineExpr> a) -> AffineExpr {
                    CompareResult r = solver.compare(a[0], a[1]);
                    if (normalize(a[0]) == normalize(a[1]))
                      r = CompareResult::EQ;
                    auto yes = [&] { return cst(1); };
                    auto no = [&] { return cst(0); };
                    using D = disc::CompareDirection;
                    switch (r) {
                    case CompareResult::EQ:
                      return (dir == D::EQ || dir == D::LE || dir == D::GE)
                                 ? yes()
                                 : no();
                    case CompareResult::LT:
                      return (dir == D::LT || dir == D::LE || dir == D::NE)
                                 ? yes()
                                 : no();
                    case CompareResult::GT:
                      return (dir == D::GT || dir == D::GE || dir == D::NE)
                                 ? yes()
                                 : no();
                    case CompareResult::LE:
                      if (dir == D::LE)
                        return yes();
                      if (dir == D::GT)
                        return no();
                      return AffineExpr();
                    case CompareResult::GE:
                      if (dir == D::GE)
                        return yes();
                      if (dir == D::LT)
                        return no();
                      return AffineExpr();
                    default:
                      return AffineExpr();
                    }
                  });
      })
      .Case<disc::AddOp, disc::SubOp, disc::MulOp, disc::DivOp, disc::MaxOp,
            disc::MinOp, disc::RemOp, disc::PowOp, disc::AndOp, disc::OrOp,
            disc::XorOp, disc::ShiftLeftOp, disc::ShiftRightOp>(
          [&](Operation *bin) {
            Value l = bin->getOperand(0), r = bin->getOperand(1);
            SmallVector<SmallVector<AffineExpr>> ins = {dimsOrFresh(l),
                                                        dimsOrFresh(r)};
            setDims(res(), broadcast(ins, op), op);
            mapValues({l, r}, [&](ArrayRef<AffineExpr> a) -> AffineExpr {
              AffineExpr x = normalize(a[0]), y = normalize(a[1]);
              if (isa<disc::AddOp>(bin))
                return x + y;
              if (isa<disc::SubOp>(bin))
                return x - y;
              if (isa<disc::MulOp>(bin))
                return x * y;
              if (isa<disc::DivOp>(bin)) {
                // Truncating division equals floordiv for non-negative sizes.
                if (auto c = constOf(y); c && *c > 0) {
                  if (auto xc = constOf(x))
                    return cst(*xc / *c);
                  return x.floorDiv(*c);
                }
                return exactDiv(x, y);
              }
              if (isa<disc::MaxOp, disc::MinOp>(bin)) {
                CompareResult cr =
                    x == y ? CompareResult::EQ : solver.compare(x, y);
                bool isMax = isa<disc::MaxOp>(bin);
                switch (cr) {
                case CompareResult::EQ:
                  return x;
                case CompareResult::GT:
                case CompareResult::GE:
                  return isMax ? x : y;
                case CompareResult::LT:
                case CompareResult::LE:
                  return isMax ? y : x;
                default:
                  return AffineExpr();
                }
              }
              auto xc = constOf(x), yc = constOf(y);
              if (xc && yc) {
                if (isa<disc::RemOp>(bin) && *yc != 0)
                  return cst(*xc % *yc);
                if (isa<disc::AndOp>(bin))
                  return cst(*xc & *yc);
                if (isa<disc::OrOp>(bin))
                  return cst(*xc | *yc);
                if (isa<disc::XorOp>(bin))
                  return cst(*xc ^ *yc);
              }
              return AffineExpr();
            });
          })
      .Case([&](disc::DotGeneralOp d) {
        SmallVector<AffineExpr> l = dimsOrFresh(d.getLhs()),
                                r = dimsOrFresh(d.getRhs());
        auto lb = d.getLhsBatchingDimensions(),
             rb = d.getRhsBatchingDimensions();
        auto lc = d.getLhsContractingDimensions(),
             rc = d.getRhsContractingDimensions();
        SmallVector<AffineExpr> out;
        for (auto [a, b] : llvm::zip(lb, rb)) {
          equate(l[a], r[b]);
          out.push_back(l[a]);
        }
        for (auto [a, b] : llvm::zip(lc, rc))
          equate(l[a], r[b]);
        for (int64_t i = 0; i < (int64_t)l.size(); ++i)
          if (!llvm::is_contained(lb, i) && !llvm::is_contained(lc, i))
            out.push_back(l[i]);
        for (int64_t i = 0; i < (int64_t)r.size(); ++i)
          if (!llvm::is_contained(rb, i) && !llvm::is_contained(rc, i))
            out.push_back(r[i]);
        setDims(res(), out, op);
      })
      .Case([&](disc::ConvOp c) {
        SmallVector<AffineExpr> in = dimsOrFresh(c.getInput()),
                                w = dimsOrFresh(c.getFilter());
        SmallVector<AffineExpr> out = {in[0], w[0]};
        size_t k = in.size() - 2;
        auto pad = c.getPadding();
        for (size_t i = 0; i < k; ++i) {
          int64_t lo = pad.size() == 2 * k ? pad[i] : 0;
          int64_t hi = pad.size() == 2 * k ? pad[k + i] : 0;
          int64_t dil = c.getDilations()[i], st = c.getStrides()[i];
          AffineExpr num = in[2 + i] + (lo + hi) - (w[2 + i] - 1) * dil - 1;
          out.push_back(normalize(num.floorDiv(st) + 1));
        }
        setDims(res(), out, op);
      })
      .Case([&](disc::ConvTransposeOp c) {
        // ONNX ConvTranspose: s * (D - 1) + out_pad + (K - 1) * dil + 1 -
        // pad_lo - pad_hi.
        SmallVector<AffineExpr> in = dimsOrFresh(c.getInput()),
                                w = dimsOrFresh(c.getFilter());
        SmallVector<AffineExpr> out = {in[0], w[1] * c.getFeatureGroupCount()};
        size_t k = in.size() - 2;
        auto pad = c.getPadding();
        for (size_t i = 0; i < k; ++i) {
          int64_t st = c.getStrides()[i], dil = c.getDilations()[i];
          AffineExpr o = (in[2 + i] - 1) * st + (w[2 + i] - 1) * dil +
                         (c.getOutputPadding()[i] + 1 - pad[i] - pad[k + i]);
          out.push_back(normalize(o));
        }
        equate(in[1], w[0]);
        setDims(res(), out, op);
      })
      .Case([&](disc::PoolOp p) {
        SmallVector<AffineExpr> in = dimsOrFresh(p.getInput());
        SmallVector<AffineExpr> out = {in[0], in[1]};
        size_t k = in.size() - 2;
        auto pad = p.getPadding();
        for (size_t i = 0; i < k; ++i) {
          int64_t lo = pad.size() == 2 * k ? pad[i] : 0;
          int64_t hi = pad.size() == 2 * k ? pad[k + i] : 0;
          int64_t dil = p.getDilations()[i], st = p.getStrides()[i];
          int64_t win = p.getWindow()[i];
          AffineExpr num = in[2 + i] + (lo + hi - dil * (win - 1) - 1);
          out.push_back(normalize(
              (p.getCeilMode() ? num.ceilDiv(st) : num.floorDiv(st)) + 1));
        }
        setDims(res(), out, op);
      })
      .Case([&](disc::ReduceOp r) {
        SmallVector<AffineExpr> in = dimsOrFresh(r.getInput()), out;
        for (int64_t i = 0; i < (int64_t)in.size(); ++i) {
          if (!llvm::is_contained(r.getDimensions(), i))
            out.push_back(in[i]);
          else if (r.getKeepDims())
            out.push_back(cst(1));
        }
        setDims(res(), out, op);
      })
      .Case([&](disc::ArgReduceOp r) {
        SmallVector<AffineExpr> in = dimsOrFresh(r.getInput()), out;
        for (int64_t i = 0; i < (int64_t)in.size(); ++i) {
          if (i != r.getDimension())
            out.push_back(in[i]);
          else if (r.getKeepDims())
            out.push_back(cst(1));
        }
        setDims(res(), out, op);
      })
      .Case([&](disc::ExpandOp e) {
        SmallVector<AffineExpr> in = dimsOrFresh(e.getOperand());
        auto target = valuesOf(e.getShape());
        int64_t rank = cast<RankedTensorType>(e.getType()).getRank();
        SmallVector<AffineExpr> tv;
        if (target)
          tv = *target;
        else
          tv.assign(rank, AffineExpr());
        SmallVector<AffineExpr> out(rank);
        for (int64_t i = 0; i < rank; ++i) {
          int64_t j = i - (rank - (int64_t)in.size());
          AffineExpr t = i < (int64_t)tv.size() ? tv[i] : AffineExpr();
          AffineExpr d = j >= 0 ? in[j] : cst(1);
          if (!t) {
            // Unknown target entry: only a static non-1 operand dim decides.
            auto dc = constOf(d);
            out[i] = (dc && *dc != 1) ? d : AffineExpr();
            continue;
          }
          SmallVector<SmallVector<AffineExpr>> pair = {{d}, {t}};
          out[i] = broadcast(pair, op)[0];
        }
        setDims(res(), out, op);
        if (auto v = valuesOf(e.getOperand()); v && v->size() == 1) {
          auto rt = cast<RankedTensorType>(e.getType());
          if (isShapeLike(res()))
            setVals(SmallVector<AffineExpr>(rt.getNumElements(), (*v)[0]));
        }
      })
      .Case([&](disc::DynamicReshapeOp r) {
        SmallVector<AffineExpr> in = dimsOrFresh(r.getOperand());
        auto rt = cast<RankedTensorType>(r.getType());
        auto target = valuesOf(r.getShape());
        SmallVector<AffineExpr> out(rt.getRank());
        if (target && (int64_t)target->size() == rt.getRank()) {
          int inferred = -1;
          // An entry the run-time checks would reject (a negative other
          // than -1, a 0 past the input rank) keeps them.
          bool badEntry = false;
          for (int64_t i = 0; i < rt.getRank(); ++i) {
            AffineExpr t = (*target)[i];
            auto c = constOf(t);
            badEntry |= c && (*c < -1 || (*c == 0 && !r.getAllowZero() &&
                                          i >= (int64_t)in.size()));
            if (c && *c == 0 && !r.getAllowZero())
              out[i] = i < (int64_t)in.size() ? in[i] : AffineExpr();
            else if (c && *c == -1)
              inferred = inferred == -1 ? (int)i : -2;
            else if (!c || *c >= 0)
              out[i] = t;
          }
          for (int64_t i = 0; i < rt.getRank(); ++i)
            if (!rt.isDynamicDim(i) && !out[i])
              out[i] = cst(rt.getDimSize(i));
          // Element count equality resolves -1 (or one unknown entry).
          AffineExpr total = cst(1);
          for (AffineExpr d : in)
            total = total * d;
          int missing = -1, numMissing = 0;
          AffineExpr known = cst(1);
          for (int64_t i = 0; i < rt.getRank(); ++i) {
            if (!out[i]) {
              missing = i;
              ++numMissing;
            } else {
              known = known * out[i];
            }
          }
          if (numMissing == 1 &&
              llvm::all_of(in, [](AffineExpr e) { return (bool)e; })) {
            AffineExpr q = exactDiv(total, known);
            if (!q) {
              q = fresh(op, false);
              equate(normalize(known * q), total);
            } else if (!badEntry && !hasUnknown(q) &&
                       !hasUnknown(normalize(total))) {
              provenReshapes.insert(op);
            }
            out[missing] = q;
          } else if (numMissing == 0 &&
                     llvm::all_of(in, [](AffineExpr e) { return (bool)e; })) {
            if (!badEntry && normalize(total) == normalize(known) &&
                !hasUnknown(normalize(total)))
              provenReshapes.insert(op);
            equate(total, known);
          }
        }
        setDims(res(), out, op);
        if (auto v = valuesOf(r.getOperand()))
          setVals(*v);
      })
      .Case([&](disc::TransposeOp t) {
        SmallVector<AffineExpr> in = dimsOrFresh(t.getOperand()), out;
        for (int64_t p : t.getPermutation())
          out.push_back(in[p]);
        setDims(res(), out, op);
        if (in.size() <= 1)
          if (auto v = valuesOf(t.getOperand()))
            setVals(*v);
      })
      .Case([&](disc::ConcatenateOp c) {
        int64_t axis = c.getDimension();
        SmallVector<AffineExpr> out;
        AffineExpr sum = cst(0);
        SmallVector<AffineExpr> vals;
        bool valsOk = cast<RankedTensorType>(c.getType()).getRank() == 1;
        for (auto [k, in] : llvm::enumerate(c.getInputs())) {
          SmallVector<AffineExpr> d = dimsOrFresh(in);
          if (k == 0)
            out = d;
          else
            for (size_t i = 0; i < d.size(); ++i)
              if ((int64_t)i != axis)
                equate(out[i], d[i]);
          sum = sum + d[axis];
          if (auto v = valuesOf(in); v && valsOk)
            vals.append(*v);
          else
            valsOk = false;
        }
        out[axis] = sum;
        setDims(res(), out, op);
        if (valsOk)
          setVals(vals);
      })
      .Case([&](disc::SliceOp s) {
        SmallVector<AffineExpr> in = dimsOrFresh(s.getOperand());
        SmallVector<AffineExpr> out = in;
        auto st = valuesOf(s.getStarts()), en = valuesOf(s.getEnds()),
             sp = valuesOf(s.getSteps());
        for (auto [k, axis] : llvm::enumerate(s.getAxes())) {
          AffineExpr a = st && k < st->size() ? (*st)[k] : AffineExpr();
          AffineExpr b = en && k < en->size() ? (*en)[k] : AffineExpr();
          AffineExpr c = sp && k < sp->size() ? (*sp)[k] : AffineExpr();
          out[axis] = sliceSize(in[axis], a, b, c, op);
        }
        setDims(res(), out, op);
        // Slice of a shape vector with constant bounds.
        auto v = valuesOf(s.getOperand());
        if (v && in.size() == 1 && st && en && sp) {
          auto a = constOf((*st)[0]), b = constOf((*en)[0]),
               c = constOf((*sp)[0]);
          int64_t n = v->size();
          if (a && b && c && *c != 0) {
            auto wrap = [&](int64_t x, int64_t lo, int64_t hi) {
              if (x < 0)
                x += n;
              return std::min(std::max(x, lo), hi);
            };
            int64_t s0 = *c < 0 ? wrap(*a, 0, n - 1) : wrap(*a, 0, n);
            int64_t e0 = *c < 0 ? wrap(*b, -1, n - 1) : wrap(*b, 0, n);
            SmallVector<AffineExpr> r;
            for (int64_t i = s0; *c > 0 ? i < e0 : i > e0; i += *c)
              r.push_back((*v)[i]);
            setVals(r);
          }
        }
      })
      .Case([&](disc::GatherOp g) {
        SmallVector<AffineExpr> data = dimsOrFresh(g.getData()),
                                idx = dimsOrFresh(g.getIndices());
        int64_t axis = g.getAxis();
        SmallVector<AffineExpr> out(data.begin(), data.begin() + axis);
        out.append(idx.begin(), idx.end());
        out.append(data.begin() + axis + 1, data.end());
        setDims(res(), out, op);
        auto v = valuesOf(g.getData());
        auto iv = valuesOf(g.getIndices());
        if (v && iv && data.size() == 1) {
          SmallVector<AffineExpr> r;
          for (AffineExpr i : *iv) {
            auto c = constOf(i);
            if (!c) {
              r.push_back(AffineExpr());
              continue;
            }
            int64_t k = *c < 0 ? *c + (int64_t)v->size() : *c;
            r.push_back(k >= 0 && k < (int64_t)v->size() ? (*v)[k]
                                                         : AffineExpr());
          }
          setVals(r);
        }
      })
      .Case([&](disc::PadOp p) {
        SmallVector<AffineExpr> in = dimsOrFresh(p.getOperand()), out = in;
        auto pads = valuesOf(p.getPads());
        for (size_t i = 0; i < in.size(); ++i) {
          if (pads && pads->size() == 2 * in.size() && (*pads)[i] &&
              (*pads)[in.size() + i])
            out[i] = in[i] + (*pads)[i] + (*pads)[in.size() + i];
          else
            out[i] = AffineExpr();
        }
        setDims(res(), out, op);
      })
      .Case([&](disc::RangeOp r) {
        auto s = valuesOf(r.getStart()), l = valuesOf(r.getLimit()),
             d = valuesOf(r.getDelta());
        AffineExpr count;
        if (s && l && d && (*s)[0] && (*l)[0] && (*d)[0]) {
          auto dc = constOf((*d)[0]);
          AffineExpr span = normalize((*l)[0] - (*s)[0]);
          if (dc && *dc > 0) {
            auto sc = constOf(span);
            if (sc)
              count = cst(std::max<int64_t>(0, (*sc + *dc - 1) / *dc));
            else if (solver.compare(span, cst(0)) != CompareResult::LT)
              // Sizes are non-negative: the count is the ceil division.
              count = span.ceilDiv(*dc);
          }
        }
        if (!count)
          count = fresh(op, false);
        setDims(res(), {count}, op);
      })
      .Case([&](disc::ResizeOp r) {
        SmallVector<AffineExpr> in = dimsOrFresh(r.getOperand());
        auto sizes = valuesOf(r.getSizes());
        SmallVector<AffineExpr> out(in.size());
        for (int64_t i = 0; i < (int64_t)in.size(); ++i) {
          if (!llvm::is_contained(r.getAxes(), i))
            out[i] = in[i];
          else if (sizes && i < (int64_t)sizes->size() && (*sizes)[i])
            out[i] = (*sizes)[i];
          else
            out[i] = fresh(op, false); // sizes or scales known at run time
        }
        setDims(res(), out, op);
      })
      .Case([&](disc::GatherElementsOp g) {
        setDims(res(), dimsOrFresh(g.getIndices()), op);
      })
      .Case([&](disc::GatherNdOp g) {
        SmallVector<AffineExpr> data = dimsOrFresh(g.getData()),
                                idx = dimsOrFresh(g.getIndices());
        SmallVector<AffineExpr> out(idx.begin(), idx.end() - 1);
        int64_t tail =
            cast<RankedTensorType>(g.getType()).getRank() - (int64_t)out.size();
        out.append(data.end() - tail, data.end());
        setDims(res(), out, op);
      })
      .Case([&](disc::GridSampleOp g) {
        SmallVector<AffineExpr> in = dimsOrFresh(g.getInput()),
                                grid = dimsOrFresh(g.getGrid());
        equate(in[0], grid[0]);
        setDims(res(), {in[0], in[1], grid[1], grid[2]}, op);
      })
      .Case<disc::ScatterElementsOp, disc::ScatterNdOp, disc::ArgSortOp>(
          [&](Operation *o) {
            setDims(res(), dimsOrFresh(o->getOperand(0)), op);
          })
      .Case([&](scf::ForOp f) {
        // Loops built by the importer (recurrent layers) carry values of a
        // loop-invariant shape: each region argument and result has the
        // dims of its init value.
        for (auto [init, arg, r] : llvm::zip(
                 f.getInitArgs(), f.getRegionIterArgs(), f.getResults())) {
          SmallVector<AffineExpr> d = dimsOrFresh(init);
          setDims(arg, d, op);
          setDims(r, d, op);
        }
      })
      .Case([&](tensor::InsertSliceOp s) {
        setDims(res(), dimsOrFresh(s.getDest()), op);
      })
      .Case([&](tensor::CastOp c) {
        setDims(res(), dimsOrFresh(c.getSource()), op);
      })
      // disc-remat's regenerate point (Remat.cpp): the buffer of the value,
      // sized by `tensor.dim`s of it at the evict point, then an scf.if
      // that yields that buffer or the recomputed value written into it.
      // All three have the evicted value's dims, so ops after a regenerate
      // point keep their proven shapes (no versioned lowering, fusion).
      .Case([&](bufferization::AllocTensorOp a) {
        auto t = cast<RankedTensorType>(a.getType());
        SmallVector<AffineExpr> d;
        unsigned next = 0;
        for (int64_t i = 0; i < t.getRank(); ++i) {
          if (!t.isDynamicDim(i)) {
            d.push_back(cst(t.getDimSize(i)));
            continue;
          }
          auto dim = a.getDynamicSizes()[next++].getDefiningOp<tensor::DimOp>();
          std::optional<int64_t> j =
              dim ? dim.getConstantIndex() : std::nullopt;
          SmallVector<AffineExpr> src;
          if (j)
            src = dimsOrFresh(dim.getSource());
          d.push_back(j && *j < (int64_t)src.size() ? src[*j]
                                                    : fresh(op, false));
        }
        setDims(res(), d, op);
      })
      .Case([&](bufferization::MaterializeInDestinationOp m) {
        setDims(res(), dimsOrFresh(m.getDest()), op);
      })
      .Case([&](scf::IfOp ifOp) {
        if (!ifOp->hasAttr("disc.remat_regenerate")) {
          for (Value r : ifOp.getResults())
            setDims(r, {}, op);
          return;
        }
        setDims(res(), dimsOrFresh(ifOp.thenYield().getOperand(0)), op);
      })
      .Default([&](Operation *other) {
        // Ops with one same-shaped operand (unary elementwise and friends).
        if (other->getNumOperands() == 1 && other->getNumResults() == 1 &&
            other->getOperand(0).getType() == res().getType() &&
            isa<disc::DiscDialect>(other->getDialect())) {
          setDims(res(), dimsOrFresh(other->getOperand(0)), op);
          return;
        }
        for (Value r : other->getResults())
          setDims(r, {}, op);
      });
}

void ShapeAnalysis::run() {
  // Root symbols: one per distinct input dim name.
  for (BlockArgument arg : func.getArguments()) {
    auto t = dyn_cast<RankedTensorType>(arg.getType());
    if (!t)
      continue;
    auto names =
        func.getArgAttrOfType<ArrayAttr>(arg.getArgNumber(), "disc.dims");
    std::string argName = "input_" + std::to_string(arg.getArgNumber());
    if (auto n =
            func.getArgAttrOfType<StringAttr>(arg.getArgNumber(), "disc.name"))
      argName = n.str();
    SmallVector<AffineExpr> dims;
    for (int64_t i = 0; i < t.getRank(); ++i) {
      if (!t.isDynamicDim(i)) {
        dims.push_back(cst(t.getDimSize(i)));
        continue;
      }
      std::string name = argName + "_d" + std::to_string(i);
      if (names && i < (int64_t)names.size())
        if (auto s = dyn_cast<StringAttr>(names[i]))
          name = s.str();
      auto it = rootByName.find(name);
      if (it == rootByName.end()) {
        auto r = ranges.find(name);
        const DimRange *range = r == ranges.end() ? nullptr : &r->second;
        AffineExpr e = (range && range->max && *range->max == range->min)
                           ? cst(range->min)
                           : newSymbol(name, true, false, range);
        it = rootByName.insert({name, e}).first;
      }
      dims.push_back(it->second);
    }
    shapes[arg] = dims;
  }
  // Pre-order: a loop's region arguments get their dims before its body.
  func.walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (op == func.getOperation() || isa<func::ReturnOp>(op))
      return;
    visit(op);
  });
}

unsigned ShapeAnalysis::mergeEqualSymbols() {
  unsigned merged = 0;
  // Candidates: representative symbols of the unabsorbed relations.
  SmallVector<unsigned> cands;
  llvm::SmallDenseSet<unsigned> seen;
  for (auto &[a, b] : equalities) {
    AffineExpr l = normalize(a), r = normalize(b);
    if (l == r)
      continue;
    for (AffineExpr side : {l, r})
      side.walk([&](AffineExpr x) {
        if (auto s = dyn_cast<AffineSymbolExpr>(x))
          if (seen.insert(s.getPosition()).second)
            cands.push_back(s.getPosition());
      });
  }
  if (cands.size() > 16) // keep the solver work bounded
    cands.resize(16);
  llvm::sort(cands);
  for (size_t i = 0; i < cands.size(); ++i)
    for (size_t j = i + 1; j < cands.size(); ++j) {
      AffineExpr a = normalize(getAffineSymbolExpr(cands[i], ctx));
      AffineExpr b = normalize(getAffineSymbolExpr(cands[j], ctx));
      if (a == b)
        continue;
      if (solver.isEqual(a, b)) {
        equate(a, b);
        ++merged;
      }
    }
  return merged;
}

std::string ShapeAnalysis::render(AffineExpr e) {
  e = normalize(e);
  std::string s;
  llvm::raw_string_ostream os(s);
  std::function<void(AffineExpr, bool)> go = [&](AffineExpr x, bool paren) {
    switch (x.getKind()) {
    case AffineExprKind::Constant:
      os << cast<AffineConstantExpr>(x).getValue();
      return;
    case AffineExprKind::SymbolId:
      os << symbols[cast<AffineSymbolExpr>(x).getPosition()].name;
      return;
    case AffineExprKind::DimId:
      os << x;
      return;
    case AffineExprKind::Add: {
      auto b = cast<AffineBinaryOpExpr>(x);
      if (paren)
        os << "(";
      go(b.getLHS(), false);
      AffineExpr r = b.getRHS();
      if (auto c = dyn_cast<AffineConstantExpr>(r); c && c.getValue() < 0) {
        os << " - " << -c.getValue();
      } else if (auto m = dyn_cast<AffineBinaryOpExpr>(r);
                 m && m.getKind() == AffineExprKind::Mul &&
                 isa<AffineConstantExpr>(m.getRHS()) &&
                 cast<AffineConstantExpr>(m.getRHS()).getValue() < 0) {
        os << " - ";
        int64_t c = -cast<AffineConstantExpr>(m.getRHS()).getValue();
        go(m.getLHS(), true);
        if (c != 1)
          os << "*" << c;
      } else {
        os << " + ";
        go(r, false);
      }
      if (paren)
        os << ")";
      return;
    }
    case AffineExprKind::Mul: {
      auto b = cast<AffineBinaryOpExpr>(x);
      if (auto c = dyn_cast<AffineConstantExpr>(b.getRHS());
          c && c.getValue() == -1) {
        os << "-";
        go(b.getLHS(), true);
        return;
      }
      go(b.getLHS(), true);
      os << "*";
      go(b.getRHS(), true);
      return;
    }
    default: {
      auto b = cast<AffineBinaryOpExpr>(x);
      if (paren)
        os << "(";
      go(b.getLHS(), true);
      os << (x.getKind() == AffineExprKind::FloorDiv  ? " floordiv "
             : x.getKind() == AffineExprKind::CeilDiv ? " ceildiv "
                                                      : " mod ");
      go(b.getRHS(), true);
      if (paren)
        os << ")";
      return;
    }
    }
  };
  go(e, false);
  return s;
}

//===----------------------------------------------------------------------===//
// Annotations
//===----------------------------------------------------------------------===//

llvm::StringMap<DimRange> mlir::disc::collectDimRanges(ModuleOp module) {
  llvm::StringMap<DimRange> ranges;
  for (auto dim : module.getOps<disc_shape::SymbolicDimOp>()) {
    if (!dim.getName())
      continue;
    DimRange r;
    r.min = dim.getMin();
    r.max = dim.getMax();
    r.likely = dim.getLikely();
    ranges[*dim.getName()] = r;
  }
  return ranges;
}

static void stripAnnotations(ModuleOp module) {
  for (Operation &op : llvm::make_early_inc_range(*module.getBody()))
    if (isa<disc_shape::SymbolicDimOp, disc_shape::ConstraintOp>(op))
      op.erase();
  StringRef name = disc_shape::DiscShapeDialect::getDimsAttrName();
  module.walk([&](Operation *op) {
    op->removeAttr(name);
    if (auto f = dyn_cast<func::FuncOp>(op)) {
      for (unsigned i = 0, e = f.getNumArguments(); i < e; ++i)
        f.removeArgAttr(i, name);
      for (unsigned i = 0, e = f.getNumResults(); i < e; ++i)
        f.removeResultAttr(i, StringAttr::get(op->getContext(), name));
    }
  });
}

/// Replaces dynamic dims that are provably constant by static ones, where
/// every user is a disc op or a return (which updates the function type).
static void makeStatic(func::FuncOp func, ShapeAnalysis &sa) {
  MLIRContext *ctx = func.getContext();
  SmallVector<std::pair<Value, Type>> oldTypes;
  auto tighten = [&](Value v) -> bool {
    auto t = dyn_cast<RankedTensorType>(v.getType());
    if (!t || t.hasStaticShape())
      return false;
    SmallVector<AffineExpr> dims = sa.getDims(v);
    if (dims.size() != (size_t)t.getRank())
      return false;
    SmallVector<int64_t> shape(t.getShape());
    bool changed = false;
    for (int64_t i = 0; i < t.getRank(); ++i)
      if (t.isDynamicDim(i))
        if (auto c = dyn_cast<AffineConstantExpr>(dims[i]);
            c && c.getValue() >= 0) {
          shape[i] = c.getValue();
          changed = true;
        }
    if (!changed)
      return false;
    for (OpOperand &use : v.getUses()) {
      Operation *user = use.getOwner();
      if (!isa<disc::DiscDialect>(user->getDialect()) &&
          !isa<func::ReturnOp>(user))
        return false;
    }
    oldTypes.push_back({v, t});
    v.setType(
        RankedTensorType::get(shape, t.getElementType(), t.getEncoding()));
    return true;
  };
  bool returnChanged = false;
  for (BlockArgument arg : func.getArguments())
    tighten(arg);
  func.walk([&](Operation *op) {
    if (!isa<disc::DiscDialect>(op->getDialect()))
      return;
    for (Value r : op->getResults())
      if (tighten(r))
        for (Operation *u : r.getUsers())
          returnChanged |= isa<func::ReturnOp>(u);
  });
  // Never leave invalid IR behind: if an op rejects the new types (a
  // same-type constraint between a tightened and a kept value), undo.
  {
    SmallVector<Type> argTypes(func.getBody().front().getArgumentTypes());
    SmallVector<Type> resTypes;
    func.walk([&](func::ReturnOp r) {
      resTypes.assign(r.getOperandTypes().begin(), r.getOperandTypes().end());
    });
    FunctionType oldFnType = func.getFunctionType();
    func.setType(FunctionType::get(ctx, argTypes, resTypes));
    ScopedDiagnosticHandler quiet(ctx, [](Diagnostic &) { return success(); });
    if (failed(mlir::verify(func))) {
      for (auto &[v, t] : oldTypes)
        v.setType(t);
      func.setType(oldFnType);
      return;
    }
  }
  // Fold shape_of whose entries are all constant.
  SmallVector<disc::ShapeOfOp> shapeOfs;
  func.walk([&](disc::ShapeOfOp s) { shapeOfs.push_back(s); });
  for (disc::ShapeOfOp s : shapeOfs) {
    SmallVector<int64_t> vals;
    for (AffineExpr d : sa.getDims(s.getOperand())) {
      auto c = dyn_cast<AffineConstantExpr>(d);
      if (!c)
        break;
      vals.push_back(c.getValue());
    }
    auto t = cast<RankedTensorType>(s.getType());
    if ((int64_t)vals.size() != t.getNumElements())
      continue;
    OpBuilder b(s);
    auto c = disc::ConstantOp::create(
        b, s.getLoc(), t, DenseIntElementsAttr::get(t, ArrayRef(vals)));
    s.replaceAllUsesWith(c.getResult());
    s.erase();
  }
  (void)returnChanged;
  SmallVector<Type> results;
  func.walk([&](func::ReturnOp r) {
    results.assign(r.getOperandTypes().begin(), r.getOperandTypes().end());
  });
  SmallVector<Type> args(func.getBody().front().getArgumentTypes());
  if (!func.getBody().empty())
    func.setType(FunctionType::get(ctx, args, results));
}

LogicalResult mlir::disc::annotateShapes(ModuleOp module, bool simplify) {
  MLIRContext *ctx = module.getContext();
  llvm::StringMap<DimRange> ranges = collectDimRanges(module);
  stripAnnotations(module);
  llvm::StringSet<> taken;
  for (Operation &op : *module.getBody())
    if (auto s = op.getAttrOfType<StringAttr>(SymbolTable::getSymbolAttrName()))
      taken.insert(s.getValue());
  OpBuilder mb(ctx);
  mb.setInsertionPointToStart(module.getBody());
  unsigned freshCounter = 0;
  // Symbols already materialized (same root name in two functions).
  llvm::StringMap<FlatSymbolRefAttr> rootRefs;
  // User ranges for names that end up static or unused keep their op so
  // the signature still sees them.
  llvm::StringSet<> emittedNames;

  for (auto func : llvm::to_vector(module.getOps<func::FuncOp>())) {
    if (func.isExternal())
      continue;
    ShapeAnalysis sa(func, ranges);
    sa.run();
    if (simplify) {
      sa.mergeEqualSymbols();
      makeStatic(func, sa);
    }
    // Symbol refs for every representative symbol.
    SmallVector<FlatSymbolRefAttr> refs(sa.getNumSymbols());
    auto refFor = [&](unsigned i) -> FlatSymbolRefAttr {
      if (refs[i])
        return refs[i];
      StringRef name = sa.getSymbolName(i);
      bool root = sa.isRootSymbol(i);
      if (root) {
        auto it = rootRefs.find(name);
        if (it != rootRefs.end())
          return refs[i] = it->second;
      }
      std::string symName;
      bool ident =
          !name.empty() && (isalpha(name[0]) || name[0] == '_') &&
          llvm::all_of(name, [](char c) { return isalnum(c) || c == '_'; });
      if (root && ident && !taken.contains(name))
        symName = name.str();
      else
        do
          symName = "S" + std::to_string(freshCounter++);
        while (taken.contains(symName));
      taken.insert(symName);
      auto op = disc_shape::SymbolicDimOp::create(
          mb, func.getLoc(), mb.getStringAttr(symName),
          StringAttr::get(ctx, name), mb.getI64IntegerAttr(root ? 1 : 0),
          IntegerAttr(), IntegerAttr(), UnitAttr::get(ctx), UnitAttr());
      if (root) {
        emittedNames.insert(name);
        auto r = ranges.find(name);
        if (r != ranges.end()) {
          op.setMin(r->second.min);
          if (r->second.max)
            op.setMax(*r->second.max);
          if (r->second.likely)
            op.setLikely(*r->second.likely);
        }
        if (op.getMin() > 1)
          op.setKnownNonOne(true);
        rootRefs[name] = FlatSymbolRefAttr::get(ctx, symName);
      }
      return refs[i] = FlatSymbolRefAttr::get(ctx, symName);
    };
    auto entryOf = [&](AffineExpr e) -> Attribute {
      SmallVector<FlatSymbolRefAttr> all(sa.getNumSymbols());
      e.walk([&](AffineExpr x) {
        if (auto s = dyn_cast<AffineSymbolExpr>(x))
          all[s.getPosition()] = refFor(s.getPosition());
      });
      for (auto &r : all)
        if (!r)
          r = FlatSymbolRefAttr::get(ctx, "unused");
      return disc_shape::buildDimEntry(ctx, e, all);
    };
    // Nullptr when the value has no analysis result and a dynamic type
    // (a value created after the analysis, e.g. by folding).
    auto listOf = [&](Value v) -> Attribute {
      SmallVector<Attribute> entries;
      SmallVector<AffineExpr> dims = sa.getDims(v);
      auto t = dyn_cast<RankedTensorType>(v.getType());
      // A static type is its own annotation. (A value created by folding
      // after the analysis may sit at the address of an erased one, whose
      // stale dims the analysis would return.)
      if (t && t.hasStaticShape())
        dims.clear();
      if (t && dims.size() != (size_t)t.getRank()) {
        if (!t.hasStaticShape())
          return nullptr;
        dims.clear();
        for (int64_t d : t.getShape())
          dims.push_back(getAffineConstantExpr(d, ctx));
      }
      for (AffineExpr e : dims)
        entries.push_back(entryOf(e));
      return ArrayAttr::get(ctx, entries);
    };
    StringRef attrName = disc_shape::DiscShapeDialect::getDimsAttrName();
    for (BlockArgument arg : func.getArguments())
      if (isa<RankedTensorType>(arg.getType()))
        if (Attribute l = listOf(arg))
          func.setArgAttr(arg.getArgNumber(), attrName, l);
    func.walk([&](Operation *op) {
      if (op == func.getOperation() || op->getNumResults() == 0)
        return;
      SmallVector<Attribute> lists;
      for (Value r : op->getResults()) {
        lists.push_back(listOf(r));
        if (!lists.back())
          return;
      }
      op->setAttr(attrName, ArrayAttr::get(ctx, lists));
    });
    // Relations that the substitution did not absorb.
    OpBuilder cb(ctx);
    cb.setInsertionPointAfter(func);
    // Input dims merged into another symbol keep their symbol and say so.
    for (unsigned i = 0, e = sa.getNumSymbols(); i < e; ++i) {
      AffineExpr self = getAffineSymbolExpr(i, ctx);
      AffineExpr n = sa.normalize(self);
      if (!sa.isRootSymbol(i) || n == self)
        continue;
      SmallVector<FlatSymbolRefAttr> selfRefs(e, refFor(i));
      disc_shape::ConstraintOp::create(
          cb, func.getLoc(), "eq",
          disc_shape::buildDimEntry(ctx, self, selfRefs), entryOf(n));
    }
    for (auto [a, b] : sa.getEqualities()) {
      AffineExpr l = sa.normalize(a), r = sa.normalize(b);
      if (l == r)
        continue;
      disc_shape::ConstraintOp::create(cb, func.getLoc(), "eq", entryOf(l),
                                       entryOf(r));
    }
  }
  // Keep user ranges for names no function used (or that became static),
  // so the signature still carries them.
  for (auto &r : ranges) {
    if (emittedNames.contains(r.getKey()))
      continue;
    std::string symName = r.getKey().str();
    bool ident =
        !symName.empty() && (isalpha(symName[0]) || symName[0] == '_') &&
        llvm::all_of(symName, [](char c) { return isalnum(c) || c == '_'; });
    if (!ident || taken.contains(symName))
      do
        symName = "S" + std::to_string(freshCounter++);
      while (taken.contains(symName));
    taken.insert(symName);
    auto op = disc_shape::SymbolicDimOp::create(
        mb, module.getLoc(), mb.getStringAttr(symName),
        StringAttr::get(ctx, r.getKey()),
        mb.getI64IntegerAttr(r.getValue().min), IntegerAttr(), IntegerAttr(),
        UnitAttr::get(ctx), UnitAttr());
    if (r.getValue().max)
      op.setMax(*r.getValue().max);
    if (r.getValue().likely)
      op.setLikely(*r.getValue().likely);
  }
  return success();
}

//===----------------------------------------------------------------------===//
// --emit=shapes
//===----------------------------------------------------------------------===//

static int64_t elementBytes(Type t) {
  if (t.isIntOrFloat())
    return std::max<int64_t>(1, (t.getIntOrFloatBitWidth() + 7) / 8);
  if (t.isIndex())
    return 8;
  return 0;
}

LogicalResult mlir::disc::printShapes(ModuleOp module, StringRef entry,
                                      llvm::raw_ostream &os) {
  auto func = module.lookupSymbol<func::FuncOp>(entry);
  if (!func)
    return module.emitError("no entry function '") << entry << "'";
  auto start = std::chrono::steady_clock::now();
  llvm::StringMap<DimRange> ranges = collectDimRanges(module);
  ShapeAnalysis sa(func, ranges);
  sa.run();
  sa.mergeEqualSymbols();
  double ms = std::chrono::duration<double, std::milli>(
                  std::chrono::steady_clock::now() - start)
                  .count();
  int64_t numValues = 0, numUnknown = 0;
  auto line = [&](Value v, StringRef producer) {
    auto t = dyn_cast<RankedTensorType>(v.getType());
    if (!t)
      return;
    ++numValues;
    SmallVector<AffineExpr> dims = sa.getDims(v);
    std::string shape = "[";
    AffineExpr bytes = getAffineConstantExpr(elementBytes(t.getElementType()),
                                             module.getContext());
    bool unknown = false;
    for (auto [i, d] : llvm::enumerate(dims)) {
      if (i)
        shape += ", ";
      if (sa.hasUnknown(d)) {
        ++numUnknown;
        unknown = true;
      }
      shape += sa.render(d);
      bytes = bytes * d;
    }
    shape += "]";
    // A sum (a product of window sizes expands into one) reads better
    // factored: one factor per dim.
    std::string b;
    if (sa.normalize(bytes).getKind() != AffineExprKind::Add) {
      b = sa.render(bytes);
    } else {
      int64_t c = elementBytes(t.getElementType());
      for (AffineExpr d : dims) {
        if (auto k = dyn_cast<AffineConstantExpr>(d)) {
          c *= k.getValue();
          continue;
        }
        std::string r = sa.render(d);
        if (d.getKind() == AffineExprKind::Add)
          r = "(" + r + ")";
        b += r + "*";
      }
      b += std::to_string(c);
    }
    os << llvm::left_justify(producer, 40) << " " << shape << "  bytes=" << b
       << (unknown ? "  (unknown dims)" : "") << "\n";
  };
  auto locName = [](Location loc) -> std::string {
    if (auto n = dyn_cast<NameLoc>(loc))
      return n.getName().str();
    if (auto f = dyn_cast<FusedLoc>(loc))
      for (Location l : f.getLocations())
        if (auto n = dyn_cast<NameLoc>(l))
          return n.getName().str();
    if (auto fl = dyn_cast<FileLineColLoc>(loc))
      return (llvm::sys::path::filename(fl.getFilename().getValue()) + ":" +
              Twine(fl.getLine()))
          .str();
    return "";
  };
  for (BlockArgument arg : func.getArguments()) {
    std::string name = "input_" + std::to_string(arg.getArgNumber());
    if (auto n =
            func.getArgAttrOfType<StringAttr>(arg.getArgNumber(), "disc.name"))
      name = n.str();
    line(arg, "input " + name);
  }
  unsigned idx = 0;
  func.walk([&](Operation *op) {
    if (op == func.getOperation())
      return;
    std::string where = locName(op->getLoc());
    for (Value r : op->getResults()) {
      std::string producer = "%" + std::to_string(idx++) + " " +
                             op->getName().getStringRef().str();
      if (!where.empty())
        producer += " (" + where + ")";
      line(r, producer);
    }
  });
  const SolverStats &st = sa.getSolver().getStats();
  unsigned numSymbols = 0; // symbols left after merging and substitution
  for (unsigned i = 0, e = sa.getNumSymbols(); i < e; ++i) {
    AffineExpr self = getAffineSymbolExpr(i, module.getContext());
    numSymbols += sa.normalize(self) == self;
  }
  os << "summary: " << numValues << " values, " << numUnknown
     << " unknown dims, " << numSymbols << " symbols, " << st.queries
     << " solver queries, " << st.z3Calls << " Z3 calls, "
     << llvm::format("%.2f", ms) << " ms\n";
  return success();
}

//===----------------------------------------------------------------------===//
// Passes
//===----------------------------------------------------------------------===//

namespace {
struct ShapePropagatePass
    : public disc::impl::DiscShapePropagateBase<ShapePropagatePass> {
  void runOnOperation() override {
    if (failed(annotateShapes(getOperation(), /*simplify=*/false)))
      signalPassFailure();
  }
};
struct ShapeSimplifyPass
    : public disc::impl::DiscShapeSimplifyBase<ShapeSimplifyPass> {
  void runOnOperation() override {
    if (failed(annotateShapes(getOperation(), /*simplify=*/true)))
      signalPassFailure();
  }
};
struct StripShapeAnnotationsPass
    : public disc::impl::DiscStripShapeAnnotationsBase<
          StripShapeAnnotationsPass> {
  void runOnOperation() override { stripAnnotations(getOperation()); }
};
} // namespace
