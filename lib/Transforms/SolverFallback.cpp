//===- SolverFallback.cpp - stand-in ShapeConstraintSolver ----------------===//
//
// Built only when lib/Analysis (the Z3-backed DiscAnalysis library) is not
// part of the build: substitution of single-symbol equalities and constant
// differences, no ranges, no Z3. lib/Transforms/CMakeLists.txt picks the
// real solver whenever the DiscAnalysis target exists.
//
//===----------------------------------------------------------------------===//
#include "disc/Analysis/ShapeConstraintSolver.h"
#include "mlir/IR/AffineExprVisitor.h"
#include <vector>
using namespace mlir;
using namespace mlir::disc;
const char *mlir::disc::stringifyCompareResult(CompareResult r) {
  switch (r) { case CompareResult::LT: return "LT"; case CompareResult::LE: return "LE";
  case CompareResult::EQ: return "EQ"; case CompareResult::GE: return "GE";
  case CompareResult::GT: return "GT"; default: return "UNKNOWN"; }
}
struct ShapeConstraintSolver::Impl {
  MLIRContext *ctx; std::vector<SymbolInfo> syms; std::vector<AffineExpr> repl;
  SolverStats stats;
};
ShapeConstraintSolver::ShapeConstraintSolver(MLIRContext *c) : impl(new Impl) { impl->ctx = c; }
ShapeConstraintSolver::~ShapeConstraintSolver() = default;
AffineExpr ShapeConstraintSolver::addSymbol(const SymbolInfo &info) {
  auto e = getAffineSymbolExpr(impl->syms.size(), impl->ctx);
  impl->syms.push_back(info); impl->repl.push_back(e); return e;
}
unsigned ShapeConstraintSolver::getNumSymbols() const { return impl->syms.size(); }
const SymbolInfo &ShapeConstraintSolver::getSymbol(unsigned i) const { return impl->syms[i]; }
AffineExpr ShapeConstraintSolver::simplify(AffineExpr e) {
  for (int k = 0; k < 4; ++k) e = e.replaceSymbols(impl->repl);
  return simplifyAffineExpr(e, 0, impl->syms.size());
}
void ShapeConstraintSolver::addEquality(AffineExpr a, AffineExpr b) {
  a = simplify(a); b = simplify(b);
  auto sa = dyn_cast<AffineSymbolExpr>(a), sb = dyn_cast<AffineSymbolExpr>(b);
  if (sa && sb) { if (sa.getPosition() < sb.getPosition()) impl->repl[sb.getPosition()] = a; else if (sa != sb) impl->repl[sa.getPosition()] = b; }
  else if (sa && !b.isFunctionOfSymbol(sa.getPosition())) impl->repl[sa.getPosition()] = b;
  else if (sb && !a.isFunctionOfSymbol(sb.getPosition())) impl->repl[sb.getPosition()] = a;
}
void ShapeConstraintSolver::addGreaterOrEqual(AffineExpr, AffineExpr) {}
bool ShapeConstraintSolver::isEqual(AffineExpr a, AffineExpr b) { impl->stats.queries++; return simplify(a) == simplify(b); }
CompareResult ShapeConstraintSolver::compare(AffineExpr a, AffineExpr b) {
  impl->stats.queries++;
  auto d = simplify(a - b);
  if (auto c = dyn_cast<AffineConstantExpr>(d)) { auto v = c.getValue(); return v == 0 ? CompareResult::EQ : v < 0 ? CompareResult::LT : CompareResult::GT; }
  return CompareResult::UNKNOWN;
}
std::optional<int64_t> ShapeConstraintSolver::evaluate(AffineExpr e, llvm::ArrayRef<int64_t> b) const {
  SmallVector<AffineExpr> r; for (auto v : b) r.push_back(getAffineConstantExpr(v, impl->ctx));
  auto x = simplifyAffineExpr(e.replaceSymbols(r), 0, 0);
  if (auto c = dyn_cast<AffineConstantExpr>(x)) return c.getValue(); return std::nullopt;
}
void ShapeConstraintSolver::setTimeoutMs(unsigned) {}
const SolverStats &ShapeConstraintSolver::getStats() const { return impl->stats; }
