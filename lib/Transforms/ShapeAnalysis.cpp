//===- ShapeAnalysis.cpp - symbolic dims of every value -------------------===//
//
// ShapeAnalysis (include/disc/Transforms/ShapeAnalysis.h): the symbols,
// the canonical form of their expressions, broadcasting and slice sizes,
// the driver that visits a function and the rendering of expressions. The
// per-op rules are in ShapeRules.cpp, the passes in ShapePropagate.cpp.
// See docs/symbolic-shapes.md, "Symbolic dims and passes".
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
#include "disc/Transforms/ShapeAnalysis.h"
#include "disc/Dialect/Disc/IR/DiscDialect.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/AffineExprVisitor.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/TypeSwitch.h"

#include <functional>
#include <map>

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

std::optional<SmallVector<SmallVector<int64_t, 2>>>
ShapeAnalysis::getExpansion(Operation *reshape) {
  if (!isReshapeProven(reshape) || reshape->getNumOperands() < 1 ||
      reshape->getNumResults() != 1)
    return std::nullopt;
  Value in = reshape->getOperand(0), out = reshape->getResult(0);
  auto it = dyn_cast<RankedTensorType>(in.getType());
  auto ot = dyn_cast<RankedTensorType>(out.getType());
  if (!it || !ot || it.getRank() == 0 || ot.getRank() < it.getRank())
    return std::nullopt;
  SmallVector<AffineExpr> id = getDims(in), od = getDims(out);
  int64_t inRank = it.getRank(), outRank = ot.getRank();
  if ((int64_t)id.size() != inRank || (int64_t)od.size() != outRank ||
      llvm::any_of(id, [](AffineExpr e) { return !e; }) ||
      llvm::any_of(od, [](AffineExpr e) { return !e; }))
    return std::nullopt;
  auto isOne = [](AffineExpr e) {
    auto c = dyn_cast<AffineConstantExpr>(e);
    return c && c.getValue() == 1;
  };
  SmallVector<SmallVector<int64_t, 2>> groups;
  int64_t i = 0;
  for (int64_t j = 0; j < inRank; ++j) {
    // The shortest run of result dims whose product is operand dim j; a
    // unit operand dim takes one unit result dim.
    SmallVector<int64_t, 2> group;
    AffineExpr product = cst(1);
    bool matched = false;
    while (i < outRank) {
      group.push_back(i);
      product = normalize(product * od[i]);
      ++i;
      if (product == id[j]) {
        matched = true;
        break;
      }
    }
    if (!matched)
      return std::nullopt;
    groups.push_back(group);
  }
  // Trailing unit dims join the last group.
  for (; i < outRank; ++i) {
    if (!isOne(od[i]))
      return std::nullopt;
    groups.back().push_back(i);
  }
  // The types agree with the grouping (tensor.expand_shape's verifier).
  for (auto [j, group] : llvm::enumerate(groups)) {
    bool anyDynamic = false;
    int64_t staticProduct = 1;
    for (int64_t r : group) {
      anyDynamic |= ot.isDynamicDim(r);
      if (!ot.isDynamicDim(r))
        staticProduct *= ot.getDimSize(r);
    }
    if (it.isDynamicDim(j) != anyDynamic ||
        (!anyDynamic && staticProduct != it.getDimSize(j)))
      return std::nullopt;
  }
  return groups;
}

bool mlir::disc::isSplitReshapeView(ShapeAnalysis &sa, Operation *reshape) {
  if (!isa<DynamicReshapeOp>(reshape))
    return false;
  std::optional<SmallVector<SmallVector<int64_t, 2>>> groups =
      sa.getExpansion(reshape);
  if (!groups)
    return false;
  // expand-strided-metadata mishandles groups of several dynamic sizes.
  auto t = cast<RankedTensorType>(reshape->getResult(0).getType());
  for (const SmallVector<int64_t, 2> &g : *groups)
    if (llvm::count_if(g, [&](int64_t r) { return t.isDynamicDim(r); }) > 1)
      return false;
  return llvm::none_of(reshape->getUsers(), [](Operation *user) {
    return user->hasAttr("disc.library_call") ||
           user->hasTrait<OpTrait::IsTerminator>();
  });
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

AffineExpr ShapeAnalysis::getUpperBound(unsigned i) {
  auto it = upperBounds.find(i);
  return it == upperBounds.end() ? AffineExpr() : normalize(it->second);
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

std::optional<int64_t> ShapeAnalysis::getConstantElement(Value v) {
  std::optional<SmallVector<AffineExpr>> vals = valuesOf(v);
  if (!vals || vals->size() != 1 || !(*vals)[0])
    return std::nullopt;
  return constOf(normalize((*vals)[0]));
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
    if (!divide(m, dm, rest))
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
  // Pre-order: a loop's region arguments get their dims before its body;
  // an scf.if's results get theirs after its branches (the dims of what
  // they yield).
  func.walk([&](Operation *op, const WalkStage &stage) {
    if (op == func.getOperation() || isa<func::ReturnOp>(op))
      return;
    bool after = isa<scf::IfOp>(op);
    if (after ? stage.isAfterAllRegions() : stage.isBeforeAllRegions())
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
