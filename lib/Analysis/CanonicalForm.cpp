//===- CanonicalForm.cpp - canonical polynomials of dim expressions -------===//
//
// See CanonicalForm.h.
//
//===----------------------------------------------------------------------===//
#include "CanonicalForm.h"

#include "mlir/IR/AffineExprVisitor.h"

#include <algorithm>
#include <numeric>

using namespace mlir;
using namespace mlir::disc::detail;

int64_t CanonicalForm::addC(int64_t a, int64_t b) {
  if (auto r = addChecked(a, b))
    return *r;
  overflow = true;
  return 0;
}

int64_t CanonicalForm::mulC(int64_t a, int64_t b) {
  if (auto r = mulChecked(a, b))
    return *r;
  overflow = true;
  return 0;
}

void CanonicalForm::addTerm(Poly &p, const Monomial &m, int64_t c) {
  if (c == 0)
    return;
  auto it = p.find(m);
  if (it == p.end()) {
    p.emplace(m, c);
    return;
  }
  it->second = addC(it->second, c);
  if (it->second == 0)
    p.erase(it);
}

Poly CanonicalForm::add(const Poly &a, const Poly &b) {
  Poly r = a;
  for (const auto &[m, c] : b)
    addTerm(r, m, c);
  return r;
}

Poly CanonicalForm::scale(const Poly &a, int64_t k) {
  Poly r;
  if (k == 0)
    return r;
  for (const auto &[m, c] : a)
    r.emplace(m, mulC(c, k));
  return r;
}

Poly CanonicalForm::mul(const Poly &a, const Poly &b) {
  Poly r;
  for (const auto &[ma, ca] : a)
    for (const auto &[mb, cb] : b) {
      Monomial m;
      m.reserve(ma.size() + mb.size());
      std::merge(ma.begin(), ma.end(), mb.begin(), mb.end(),
                 std::back_inserter(m));
      addTerm(r, m, mulC(ca, cb));
    }
  return r;
}

Poly CanonicalForm::constant(int64_t c) {
  Poly p;
  if (c != 0)
    p.emplace(Monomial{}, c);
  return p;
}

std::optional<int64_t> CanonicalForm::asConstant(const Poly &p) {
  if (p.empty())
    return 0;
  if (p.size() == 1 && p.begin()->first.empty())
    return p.begin()->second;
  return std::nullopt;
}

int64_t CanonicalForm::constantTerm(const Poly &p) {
  auto it = p.find(Monomial{});
  return it == p.end() ? 0 : it->second;
}

std::string CanonicalForm::key(const Poly &p) {
  std::string s;
  for (const auto &[m, c] : p) {
    s += std::to_string(c);
    for (unsigned id : m) {
      s += '*';
      s += std::to_string(id);
    }
    s += ';';
  }
  return s;
}

unsigned CanonicalForm::intern(Atom atom) {
  std::string k;
  switch (atom.kind) {
  case Atom::Symbol:
    k = "s" + std::to_string(atom.index);
    break;
  case Atom::Dim:
    k = "d" + std::to_string(atom.index);
    break;
  case Atom::FloorDiv:
    k = "f(" + key(atom.dividend) + "|" + key(atom.divisor) + ")";
    break;
  }
  auto [it, inserted] = atomIds.try_emplace(k, atoms.size());
  if (inserted)
    atoms.push_back(std::move(atom));
  return it->second;
}

Poly CanonicalForm::atomPoly(unsigned id) {
  Poly p;
  p.emplace(Monomial{id}, 1);
  return p;
}

/// Canonical `x floordiv d`.
Poly CanonicalForm::floorDiv(const Poly &x, const Poly &d) {
  std::optional<int64_t> dc = asConstant(d);
  if (dc && *dc != 0) {
    int64_t c = *dc;
    Poly dividend = x;
    if (c < 0) { // floor(x / c) == floor(-x / -c)
      dividend = scale(dividend, -1);
      c = mulC(c, -1);
    }
    if (c == 1)
      return dividend;
    // Take out the multiples of c: floor((c*y + r) / c) = y + floor(r/c).
    Poly outside, rest;
    for (const auto &[m, coeff] : dividend) {
      int64_t q = *floorDivChecked(coeff, c);
      int64_t r = coeff - q * c;
      addTerm(outside, m, q);
      addTerm(rest, m, r);
    }
    if (asConstant(rest)) // 0 <= rest < c
      return outside;
    // floor((g*y + r0) / (g*c')) = floor((y + floor(r0/g)) / c').
    int64_t g = c;
    for (const auto &[m, coeff] : rest)
      if (!m.empty())
        g = std::gcd(g, coeff);
    if (g > 1) {
      Poly reduced;
      for (const auto &[m, coeff] : rest)
        addTerm(reduced, m, m.empty() ? *floorDivChecked(coeff, g) : coeff / g);
      return add(outside, floorDiv(reduced, constant(c / g)));
    }
    Atom a{Atom::FloorDiv, 0, rest, constant(c)};
    return add(outside, atomPoly(intern(std::move(a))));
  }
  // Symbolic (or zero) divisor: an opaque atom.
  Atom a{Atom::FloorDiv, 0, x, d};
  return atomPoly(intern(std::move(a)));
}

/// Canonical form of `e`, with recorded substitutions applied.
Poly CanonicalForm::toPoly(AffineExpr e) {
  auto it = polyMemo.find(e);
  if (it != polyMemo.end())
    return it->second;
  Poly result;
  switch (e.getKind()) {
  case AffineExprKind::Constant:
    result = constant(cast<AffineConstantExpr>(e).getValue());
    break;
  case AffineExprKind::SymbolId: {
    unsigned pos = cast<AffineSymbolExpr>(e).getPosition();
    auto s = subst.find(pos);
    if (s != subst.end())
      result = toPoly(s->second);
    else
      result = atomPoly(intern(Atom{Atom::Symbol, pos, {}, {}}));
    break;
  }
  case AffineExprKind::DimId:
    result = atomPoly(
        intern(Atom{Atom::Dim, cast<AffineDimExpr>(e).getPosition(), {}, {}}));
    break;
  case AffineExprKind::Add: {
    auto b = cast<AffineBinaryOpExpr>(e);
    result = add(toPoly(b.getLHS()), toPoly(b.getRHS()));
    break;
  }
  case AffineExprKind::Mul: {
    auto b = cast<AffineBinaryOpExpr>(e);
    result = mul(toPoly(b.getLHS()), toPoly(b.getRHS()));
    break;
  }
  case AffineExprKind::FloorDiv: {
    auto b = cast<AffineBinaryOpExpr>(e);
    result = floorDiv(toPoly(b.getLHS()), toPoly(b.getRHS()));
    break;
  }
  case AffineExprKind::CeilDiv: {
    // ceil(x / c) == floor((x + c - 1) / c) for a constant c > 0 (keeps
    // the dividend close to x, so `x ceildiv 2` and `(x + 1) floordiv 2`
    // meet); ceil(x / d) == -floor(-x / d) otherwise.
    auto b = cast<AffineBinaryOpExpr>(e);
    Poly x = toPoly(b.getLHS()), d = toPoly(b.getRHS());
    std::optional<int64_t> dc = asConstant(d);
    if (dc && *dc > 0)
      result = floorDiv(add(x, constant(*dc - 1)), d);
    else
      result = scale(floorDiv(scale(x, -1), d), -1);
    break;
  }
  case AffineExprKind::Mod: {
    // x mod d == x - d * floor(x / d).
    auto b = cast<AffineBinaryOpExpr>(e);
    Poly x = toPoly(b.getLHS()), d = toPoly(b.getRHS());
    result = add(x, scale(mul(d, floorDiv(x, d)), -1));
    break;
  }
  }
  polyMemo[e] = result;
  return result;
}

AffineExpr CanonicalForm::fromPoly(const Poly &p) {
  AffineExpr sum = getAffineConstantExpr(0, context);
  for (const auto &[m, c] : p) {
    AffineExpr term = getAffineConstantExpr(c, context);
    for (unsigned id : m)
      term = term * fromAtom(id);
    sum = sum + term;
  }
  return sum;
}

AffineExpr CanonicalForm::fromAtom(unsigned id) {
  const Atom a = atoms[id];
  switch (a.kind) {
  case Atom::Symbol:
    return getAffineSymbolExpr(a.index, context);
  case Atom::Dim:
    return getAffineDimExpr(a.index, context);
  case Atom::FloorDiv:
    return fromPoly(a.dividend).floorDiv(fromPoly(a.divisor));
  }
  return {};
}

std::optional<int64_t> CanonicalForm::evalPoly(const Poly &p,
                                               llvm::ArrayRef<int64_t> values) {
  int64_t sum = 0;
  for (const auto &[m, c] : p) {
    std::optional<int64_t> term = c;
    for (unsigned id : m) {
      std::optional<int64_t> v = evalAtom(id, values);
      if (!v)
        return std::nullopt;
      term = mulChecked(*term, *v);
      if (!term)
        return std::nullopt;
    }
    auto s = addChecked(sum, *term);
    if (!s)
      return std::nullopt;
    sum = *s;
  }
  return sum;
}

std::optional<int64_t> CanonicalForm::evalAtom(unsigned id,
                                               llvm::ArrayRef<int64_t> values) {
  const Atom &a = atoms[id];
  switch (a.kind) {
  case Atom::Symbol:
    return a.index < values.size() ? std::optional<int64_t>(values[a.index])
                                   : std::nullopt;
  case Atom::Dim:
    return std::nullopt;
  case Atom::FloorDiv: {
    auto x = evalPoly(a.dividend, values);
    auto d = evalPoly(a.divisor, values);
    if (!x || !d)
      return std::nullopt;
    return floorDivChecked(*x, *d);
  }
  }
  return std::nullopt;
}
