//===- CheckAllocations.cpp - Overflow checks before dynamic allocations --===//
//
// `disc-check-allocations`: the byte size of a `memref.alloc` is computed
// by the memref-to-LLVM lowering as sizes x element size in wrapping i64
// arithmetic. Sizes from run-time values (ConstantOfShape, Expand, Tile,
// Range, Reshape with a run-time shape) can make that product wrap to a
// small number; the model would then write far past its buffer. This pass
// checks, before each allocation with dynamic sizes, that every size is
// non-negative and that the product fits in int64. A check the symbolic
// shape solver proves from the input dim ranges (`--dim NAME=MIN:MAX`,
// recorded by disc-lower-to-linalg) is dropped and counted.
//
//===----------------------------------------------------------------------===//
#include "RuntimeChecks.h"
#include "disc/Conversion/Passes.h"

#include "disc/Analysis/ShapeConstraintSolver.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Matchers.h"

namespace mlir::disc {
#define GEN_PASS_DEF_DISCCHECKALLOCATIONS
#include "disc/Conversion/Passes.h.inc"
} // namespace mlir::disc

using namespace mlir;
using namespace mlir::disc;

namespace {

/// Proves allocations safe for every valid input: each dynamic size, an SSA
/// index value, is rewritten as an expression over one solver symbol per
/// input dim (`memref.dim` of a function argument, with its range from
/// kInputDimRangesAttr), constants and `+ - *`, `floordiv`/`ceildiv` by
/// positive constants; then the solver must answer size >= 0, and every
/// intermediate sum and product (the run-time index arithmetic must not
/// wrap) and the byte size within [-2^62, 2^62]. Anything else is not
/// proven.
class AllocationProver {
public:
  AllocationProver(func::FuncOp func, ArrayAttr argRanges)
      : solver(func.getContext()), func(func), argRanges(argRanges) {}

  bool isSafe(memref::AllocOp op, int64_t staticBytes) {
    if (!argRanges)
      return false; // No maximum anywhere: nothing to prove with.
    MLIRContext *ctx = func.getContext();
    intermediates.clear();
    nonNegative.clear();
    AffineExpr bytes = getAffineConstantExpr(staticBytes, ctx);
    for (Value d : op.getDynamicSizes()) {
      std::optional<AffineExpr> e = exprOf(d);
      if (!e)
        return false;
      nonNegative.push_back(*e);
      bytes = bytes * *e;
      intermediates.push_back(bytes);
    }
    AffineExpr zero = getAffineConstantExpr(0, ctx);
    AffineExpr max = getAffineConstantExpr(kLimit, ctx);
    AffineExpr min = getAffineConstantExpr(-kLimit, ctx);
    auto holds = [&](AffineExpr a, AffineExpr b, bool le) {
      CompareResult r = solver.compare(a, b);
      return r == CompareResult::EQ ||
             (le ? r == CompareResult::LE || r == CompareResult::LT
                 : r == CompareResult::GE || r == CompareResult::GT);
    };
    return llvm::all_of(nonNegative,
                        [&](AffineExpr e) { return holds(e, zero, false); }) &&
           llvm::all_of(intermediates, [&](AffineExpr e) {
             return holds(e, max, true) && holds(e, min, false);
           });
  }

private:
  /// Bound on every intermediate and on the byte size: 2^62, not
  /// INT64_MAX, so that the solver's own differences (e - bound) cannot
  /// overflow where the proof holds.
  static constexpr int64_t kLimit = int64_t(1) << 62;

  /// The symbol of dim `i` of argument `a`, or its constant.
  std::optional<AffineExpr> argDim(unsigned a, int64_t i) {
    auto key = std::make_pair(a, i);
    if (auto it = argDims.find(key); it != argDims.end())
      return it->second;
    if (a >= argRanges.size())
      return std::nullopt;
    auto r = dyn_cast<DenseI64ArrayAttr>(argRanges[a]);
    if (!r || 2 * i + 1 >= (int64_t)r.size())
      return std::nullopt;
    int64_t lo = r[2 * i], hi = r[2 * i + 1];
    AffineExpr e;
    if (lo == hi) {
      e = getAffineConstantExpr(lo, func.getContext());
    } else {
      SymbolInfo info;
      info.name = "arg" + std::to_string(a) + "_d" + std::to_string(i);
      info.min = std::max<int64_t>(lo, 0);
      if (hi >= 0)
        info.max = hi;
      e = solver.addSymbol(info);
    }
    argDims[key] = e;
    return e;
  }

  std::optional<AffineExpr> exprOf(Value v, int depth = 0) {
    if (depth > 32)
      return std::nullopt;
    MLIRContext *ctx = func.getContext();
    APInt c;
    if (matchPattern(v, m_ConstantInt(&c)))
      return getAffineConstantExpr(c.getSExtValue(), ctx);
    Operation *def = v.getDefiningOp();
    if (!def)
      return std::nullopt;
    if (auto dim = dyn_cast<memref::DimOp>(def)) {
      std::optional<int64_t> i = dim.getConstantIndex();
      if (!i)
        return std::nullopt;
      Value src = dim.getSource();
      auto type = cast<MemRefType>(src.getType());
      if (!type.isDynamicDim(*i))
        return getAffineConstantExpr(type.getDimSize(*i), ctx);
      if (auto arg = dyn_cast<BlockArgument>(src))
        if (arg.getOwner() == &func.front())
          return argDim(arg.getArgNumber(), *i);
      if (auto alloc = src.getDefiningOp<memref::AllocOp>())
        return exprOf(
            alloc.getDynamicSizes()[alloc.getType().getDynamicDimIndex(*i)],
            depth + 1);
      return std::nullopt;
    }
    if (isa<arith::IndexCastOp, arith::ExtSIOp>(def))
      return exprOf(def->getOperand(0), depth + 1);
    if (!isa<arith::AddIOp, arith::SubIOp, arith::MulIOp, arith::DivSIOp,
             arith::FloorDivSIOp, arith::CeilDivSIOp>(def))
      return std::nullopt;
    std::optional<AffineExpr> l = exprOf(def->getOperand(0), depth + 1);
    std::optional<AffineExpr> r = exprOf(def->getOperand(1), depth + 1);
    if (!l || !r)
      return std::nullopt;
    AffineExpr e;
    if (isa<arith::AddIOp>(def)) {
      e = *l + *r;
    } else if (isa<arith::SubIOp>(def)) {
      e = *l - *r;
    } else if (isa<arith::MulIOp>(def)) {
      e = *l * *r;
    } else {
      // By a positive constant; divsi truncates, which equals floordiv
      // when the dividend is >= 0 (a proof obligation).
      auto k = dyn_cast<AffineConstantExpr>(*r);
      if (!k || k.getValue() <= 0)
        return std::nullopt;
      e = isa<arith::CeilDivSIOp>(def) ? l->ceilDiv(k) : l->floorDiv(k);
      if (isa<arith::DivSIOp>(def))
        nonNegative.push_back(*l);
    }
    intermediates.push_back(e);
    return e;
  }

  ShapeConstraintSolver solver;
  func::FuncOp func;
  ArrayAttr argRanges;
  DenseMap<std::pair<unsigned, int64_t>, AffineExpr> argDims;
  /// Sums, products and quotients built for the current allocation (each
  /// must stay within int64), and values that must be >= 0.
  SmallVector<AffineExpr> intermediates, nonNegative;
};

struct DiscCheckAllocationsPass
    : public disc::impl::DiscCheckAllocationsBase<DiscCheckAllocationsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto ranges = module->getAttrOfType<DictionaryAttr>(kInputDimRangesAttr);
    module->removeAttr(kInputDimRangesAttr);
    SmallVector<memref::AllocOp> allocs;
    module.walk([&](memref::AllocOp op) {
      if (!op.getDynamicSizes().empty())
        allocs.push_back(op);
    });
    if (allocs.empty())
      return;
    RuntimeChecks checks(module);
    std::map<Operation *, AllocationProver> provers;
    for (memref::AllocOp op : allocs) {
      auto func = op->getParentOfType<func::FuncOp>();
      ArrayAttr argRanges = ranges && func
                                ? ranges.getAs<ArrayAttr>(func.getSymName())
                                : ArrayAttr();
      auto it = provers.try_emplace(func, func, argRanges).first;
      checkAlloc(checks, op, it->second);
    }
    checks.finish();
  }

  static void checkAlloc(RuntimeChecks &checks, memref::AllocOp op,
                         AllocationProver &prover) {
    MemRefType type = op.getType();
    Type elt = type.getElementType();
    if (!elt.isIntOrFloat())
      return;
    OpBuilder b(op);
    Location loc = op.getLoc();
    // Static part: element bytes times the static dims (fits: the type
    // verified).
    int64_t staticBytes =
        std::max<int64_t>(1, (elt.getIntOrFloatBitWidth() + 7) / 8);
    for (int64_t d : type.getShape())
      if (!ShapedType::isDynamic(d))
        staticBytes *= d;
    if (staticBytes == 0)
      return; // An empty buffer whatever the dynamic sizes.
    if (prover.isSafe(op, staticBytes)) {
      checks.countProven();
      return;
    }
    auto c = [&](int64_t v) -> Value {
      return arith::ConstantIndexOp::create(b, loc, v);
    };
    Value zero = c(0);
    Value maxBytes = c(std::numeric_limits<int64_t>::max());
    Value acc = c(staticBytes);
    Value ok;
    auto andOk = [&](Value v) {
      ok = ok ? arith::AndIOp::create(b, loc, ok, v).getResult() : v;
    };
    for (Value d : op.getDynamicSizes()) {
      andOk(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, d, zero));
      // d == 0 || acc <= INT64_MAX / d; the division uses max(d, 1).
      Value one = c(1);
      Value safe = arith::MaxSIOp::create(b, loc, d, one);
      Value limit = arith::DivSIOp::create(b, loc, maxBytes, safe);
      Value fits =
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sle, acc, limit);
      Value isZero =
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, d, zero);
      andOk(arith::OrIOp::create(b, loc, fits, isZero));
      acc = arith::MulIOp::create(b, loc, acc, d);
    }
    // The message shows the shape with its first dynamic sizes.
    std::string shape;
    unsigned next = 0;
    SmallVector<Value> shown;
    for (auto [i, d] : llvm::enumerate(type.getShape())) {
      shape += i ? " x " : "";
      if (!ShapedType::isDynamic(d)) {
        shape += std::to_string(d);
        continue;
      }
      if (next < kMaxCheckValues) {
        shape += "{" + std::to_string(next) + "}";
        shown.push_back(op.getDynamicSizes()[next]);
      } else {
        shape += "?";
      }
      ++next;
    }
    std::string eltName;
    llvm::raw_string_ostream os(eltName);
    os << elt;
    checks.check(b, loc, ok, "",
                 "cannot allocate a " + eltName + " buffer of shape [" + shape +
                     "]: a size is negative or the byte size overflows int64",
                 shown);
  }
};

} // namespace
