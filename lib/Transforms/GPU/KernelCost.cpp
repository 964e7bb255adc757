//===- KernelCost.cpp - disc-gpu-kernel-cost ------------------------------===//
//
// Bytes and FLOPs of every kernel and cuBLAS/cuDNN call of the CUDA target
// as expressions of the input dims (KernelCost.h, docs/cuda.md
// "Roofline"). The host index values that size buffers and launches are
// traced back to `memref.dim` of the entry's arguments (named dims) and
// constants through integer arithmetic; the kernel ids are symbols that a
// known pattern (a bound guard, a block- or grid-stride loop, a thread-0
// branch) must consume, else the FLOPs are unknown.
//
//===----------------------------------------------------------------------===//
#include "disc/Transforms/GPU/KernelCost.h"
#include "disc/Target/Signature.h"
#include "disc/Transforms/GPU/Passes.h"
#include "disc/Transforms/MemoryModel.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/TypeSwitch.h"

#include <functional>
#include <map>

namespace mlir::disc {
#define GEN_PASS_DEF_DISCGPUKERNELCOST
#include "disc/Transforms/GPU/Passes.h.inc"
} // namespace mlir::disc

using namespace mlir;
using namespace mlir::disc;

namespace {

/// Index values as AffineExprs over named symbols: the input dim names, the
/// kernel ids ("%tid.x", "%block.x", local to the kernel being counted),
/// and opaque "max"/"min" of two expressions.
class SymbolicValues {
public:
  explicit SymbolicValues(func::FuncOp func)
      : ctx(func.getContext()), func(func) {
    // The smallest value of each input dim (the signature's ranges).
    auto module = func->getParentOfType<ModuleOp>();
    auto sig = module ? module->getAttrOfType<DictionaryAttr>("disc.signature")
                      : DictionaryAttr();
    if (auto symbols = sig ? sig.getAs<ArrayAttr>("symbols") : ArrayAttr())
      for (Attribute a : symbols)
        if (auto d = dyn_cast<DictionaryAttr>(a))
          if (auto name = d.getAs<StringAttr>("name"))
            if (auto min = d.getAs<IntegerAttr>("min"))
              minimum[name.getValue()] = min.getInt();
  }

  AffineExpr cst(int64_t v) { return getAffineConstantExpr(v, ctx); }
  AffineExpr named(StringRef name) {
    auto [it, inserted] = positions.try_emplace(name, names.size());
    if (inserted)
      names.push_back(name.str());
    return getAffineSymbolExpr(it->second, ctx);
  }

  /// The expression of index or integer value `v`; failure with `reason`.
  FailureOr<AffineExpr> value(Value v);
  /// The expression of dim `i` of memref `m`.
  FailureOr<AffineExpr> dim(Value m, int64_t i);
  /// Bytes of memref `m` (elements times element size).
  FailureOr<AffineExpr> bytes(Value m);
  /// Product of dims [from, rank) of `m`.
  FailureOr<AffineExpr> elements(Value m, int64_t from = 0);

  /// Binds the ids and extents of `launch` (ids as kernel-local symbols).
  void bindKernel(gpu::LaunchOp launch);
  /// False when `e` uses a kernel-local symbol (a thread or block id).
  bool isUniform(AffineExpr e) {
    bool uniform = true;
    e.walk([&](AffineExpr s) {
      if (auto sym = dyn_cast<AffineSymbolExpr>(s))
        uniform &= !local.contains(sym.getPosition());
    });
    return uniform;
  }
  bool equal(AffineExpr a, AffineExpr b) {
    if (a == b)
      return true;
    AffineExpr d = simplifyAffineExpr(a - b, 0, names.size());
    auto c = dyn_cast<AffineConstantExpr>(d);
    return c && c.getValue() == 0;
  }

  llvm::json::Value toJson(AffineExpr e);
  std::string render(AffineExpr e);
  /// `e` as a sum of products with like terms combined, the factors of a
  /// product in name order and its constant last (`batch*seq*1024`), so
  /// equal costs print alike.
  AffineExpr canonical(AffineExpr e);

  std::string reason;

private:
  FailureOr<AffineExpr> fail(const Twine &why) {
    if (reason.empty())
      reason = why.str();
    return failure();
  }
  FailureOr<AffineExpr> fold(OpFoldResult r) {
    if (auto c = getConstantIntValue(r))
      return cst(*c);
    return value(cast<Value>(r));
  }
  AffineExpr opaque(StringRef op, AffineExpr a, AffineExpr b);
  /// A lower bound of `e` from the input dims' minimums, if one is known.
  std::optional<int64_t> lowerBound(AffineExpr e);
  /// 1 or 0 when the comparison is decided for all input dims.
  FailureOr<AffineExpr> compare(arith::CmpIOp cmp);
  /// The value a load from a host buffer reads: a constant global's
  /// element, or the last store to the same element before the load.
  FailureOr<AffineExpr> load(memref::LoadOp op);
  /// The value of element `offset` (from the allocation's base) of `mem` as
  /// read right before `at`.
  FailureOr<AffineExpr> loadAt(Operation *at, Value mem, int64_t offset);
  /// Offset of an element from its allocation's base, for a static layout
  /// and constant indices.
  std::optional<int64_t> offsetOf(Value mem, ValueRange indices);
  void renderInto(AffineExpr e, llvm::raw_ostream &os, bool atom);

  MLIRContext *ctx;
  func::FuncOp func;
  SmallVector<std::string> names;
  llvm::StringMap<unsigned> positions;
  /// Opaque symbols: position → (op, a, b).
  DenseMap<unsigned, std::tuple<std::string, AffineExpr, AffineExpr>> opaques;
  DenseSet<unsigned> local;
  DenseMap<Value, AffineExpr> cache;
  /// Values that failed, with the reason: shape arithmetic reaches the same
  /// values through both sides of nested selects, exponentially often
  /// without it. Cleared when a kernel's ids are bound.
  DenseMap<Value, std::string> failures;
  llvm::StringMap<int64_t> minimum;
};

/// The allocation `v` is a view of (through subviews, reshapes, casts).
Value viewRoot(Value v) {
  while (Operation *def = v.getDefiningOp()) {
    if (isa<memref::SubViewOp, memref::ReshapeOp, memref::CastOp,
            memref::ExpandShapeOp, memref::CollapseShapeOp,
            memref::ReinterpretCastOp>(def))
      v = def->getOperand(0);
    else
      break;
  }
  return v;
}

std::optional<int64_t> SymbolicValues::lowerBound(AffineExpr e) {
  if (auto c = dyn_cast<AffineConstantExpr>(e))
    return c.getValue();
  if (auto s = dyn_cast<AffineSymbolExpr>(e)) {
    unsigned pos = s.getPosition();
    if (local.contains(pos))
      return 0;
    if (auto it = opaques.find(pos); it != opaques.end()) {
      std::optional<int64_t> a = lowerBound(std::get<1>(it->second));
      std::optional<int64_t> b = lowerBound(std::get<2>(it->second));
      if (std::get<0>(it->second) == "max")
        return a && b ? std::max(*a, *b) : a ? a : b;
      if (a && b)
        return std::min(*a, *b);
      return std::nullopt;
    }
    auto it = minimum.find(names[pos]);
    return it == minimum.end() ? 0 : it->second;
  }
  auto bin = cast<AffineBinaryOpExpr>(e);
  std::optional<int64_t> a = lowerBound(bin.getLHS());
  std::optional<int64_t> b = lowerBound(bin.getRHS());
  auto c = dyn_cast<AffineConstantExpr>(bin.getRHS());
  switch (e.getKind()) {
  case AffineExprKind::Add:
    if (a && b)
      return *a + *b;
    return std::nullopt;
  case AffineExprKind::Mul:
    if (a && b && *a >= 0 && *b >= 0)
      return *a * *b;
    return std::nullopt;
  case AffineExprKind::FloorDiv:
  case AffineExprKind::CeilDiv:
    if (!a || *a < 0 || !b || *b < 1)
      return std::nullopt;
    if (c)
      return e.getKind() == AffineExprKind::FloorDiv
                 ? *a / c.getValue()
                 : (*a + c.getValue() - 1) / c.getValue();
    return 0;
  case AffineExprKind::Mod:
    if (b && *b >= 1)
      return 0;
    return std::nullopt;
  default:
    return std::nullopt;
  }
}

FailureOr<AffineExpr> SymbolicValues::compare(arith::CmpIOp cmp) {
  FailureOr<AffineExpr> lhs = value(cmp.getLhs());
  if (failed(lhs))
    return failure();
  FailureOr<AffineExpr> rhs = value(cmp.getRhs());
  if (failed(rhs))
    return failure();
  unsigned n = names.size();
  // d = lhs - rhs: its lower bound and that of -d.
  std::optional<int64_t> pos =
      lowerBound(simplifyAffineExpr(*lhs - *rhs, 0, n));
  std::optional<int64_t> neg =
      lowerBound(simplifyAffineExpr(*rhs - *lhs, 0, n));
  using P = arith::CmpIPredicate;
  P p = cmp.getPredicate();
  if (p == P::ult || p == P::ule || p == P::ugt || p == P::uge) {
    std::optional<int64_t> l = lowerBound(*lhs), r = lowerBound(*rhs);
    if (!l || *l < 0 || !r || *r < 0)
      return fail("an unsigned comparison");
    p = p == P::ult   ? P::slt
        : p == P::ule ? P::sle
        : p == P::ugt ? P::sgt
                      : P::sge;
  }
  std::optional<bool> result;
  bool posGe0 = pos && *pos >= 0, posGe1 = pos && *pos >= 1;
  bool negGe0 = neg && *neg >= 0, negGe1 = neg && *neg >= 1;
  switch (p) {
  case P::eq:
  case P::ne:
    if (posGe1 || negGe1)
      result = p == P::ne;
    else if (posGe0 && negGe0)
      result = p == P::eq;
    break;
  case P::slt:
    result = negGe1   ? std::optional<bool>(true)
             : posGe0 ? std::optional<bool>(false)
                      : std::nullopt;
    break;
  case P::sle:
    result = negGe0   ? std::optional<bool>(true)
             : posGe1 ? std::optional<bool>(false)
                      : std::nullopt;
    break;
  case P::sgt:
    result = posGe1   ? std::optional<bool>(true)
             : negGe0 ? std::optional<bool>(false)
                      : std::nullopt;
    break;
  case P::sge:
    result = posGe0   ? std::optional<bool>(true)
             : negGe1 ? std::optional<bool>(false)
                      : std::nullopt;
    break;
  default:
    break;
  }
  if (!result)
    return fail("a comparison that depends on the input dims");
  return cst(*result ? 1 : 0);
}

std::optional<int64_t> SymbolicValues::offsetOf(Value mem, ValueRange indices) {
  {
    auto type = dyn_cast<MemRefType>(mem.getType());
    SmallVector<int64_t> strides;
    int64_t offset = 0;
    if (!type || failed(type.getStridesAndOffset(strides, offset)) ||
        ShapedType::isDynamic(offset))
      return std::nullopt;
    for (auto [idx, stride] : llvm::zip(indices, strides)) {
      std::optional<int64_t> c = getConstantIntValue(idx);
      if (!c) {
        FailureOr<AffineExpr> e = value(idx);
        auto ce = succeeded(e) ? dyn_cast<AffineConstantExpr>(*e)
                               : AffineConstantExpr();
        if (!ce)
          return std::nullopt;
        c = ce.getValue();
      }
      if (ShapedType::isDynamic(stride))
        return std::nullopt;
      offset += *c * stride;
    }
    return offset;
  }
}

FailureOr<AffineExpr> SymbolicValues::load(memref::LoadOp op) {
  std::optional<int64_t> offset = offsetOf(op.getMemRef(), op.getIndices());
  if (!offset)
    return fail("a size read from memory at a run-time index");
  return loadAt(op, op.getMemRef(), *offset);
}

FailureOr<AffineExpr> SymbolicValues::loadAt(Operation *op, Value mem,
                                             int64_t offsetValue) {
  Value root = viewRoot(mem);
  std::optional<int64_t> offset = offsetValue;
  if (auto global = root.getDefiningOp<memref::GetGlobalOp>()) {
    auto g = SymbolTable::lookupNearestSymbolFrom<memref::GlobalOp>(
        global, global.getNameAttr());
    auto init =
        g && g.getConstant()
            ? dyn_cast_or_null<DenseIntElementsAttr>(g.getInitialValueAttr())
            : DenseIntElementsAttr();
    if (!init || *offset < 0 || *offset >= init.getNumElements())
      return fail("a size read from a global");
    return cst(init.getValues<APInt>()[*offset].getSExtValue());
  }
  if (!root.getDefiningOp<memref::AllocaOp>() &&
      !root.getDefiningOp<memref::AllocOp>())
    return fail("a size read from memory");
  // The last store to the element before the load, in program order; any
  // other use of the buffer that may write it in between ends the search.
  auto mayWrite = [&](Operation *o) {
    bool writes = false;
    o->walk([&](Operation *n) {
      if (isa<memref::LoadOp, memref::DimOp, memref::SubViewOp,
              memref::ReshapeOp, memref::CastOp, memref::ExpandShapeOp,
              memref::CollapseShapeOp, memref::ReinterpretCastOp,
              memref::DeallocOp>(n))
        return;
      for (Value v : n->getOperands())
        if (isa<MemRefType>(v.getType()) && viewRoot(v) == root)
          writes = true;
    });
    return writes;
  };
  Operation *cur = op;
  while (true) {
    for (Operation *o = cur->getPrevNode(); o; o = o->getPrevNode()) {
      if (auto store = dyn_cast<memref::StoreOp>(o)) {
        if (viewRoot(store.getMemRef()) != root)
          continue;
        std::optional<int64_t> at =
            offsetOf(store.getMemRef(), store.getIndices());
        if (!at)
          return fail("a size read from memory stored at a run-time index");
        if (*at == *offset)
          return value(store.getValueToStore());
        continue;
      }
      if (mayWrite(o))
        return fail("a size read from memory that an op writes");
    }
    Operation *parent = cur->getParentOp();
    if (!parent || parent == func.getOperation() ||
        isa<LoopLikeOpInterface, gpu::LaunchOp>(parent))
      return fail("a size read from memory");
    cur = parent;
  }
}

AffineExpr SymbolicValues::opaque(StringRef op, AffineExpr a, AffineExpr b) {
  auto ca = dyn_cast<AffineConstantExpr>(a);
  auto cb = dyn_cast<AffineConstantExpr>(b);
  bool isMax = op == "max";
  if (ca && cb)
    return cst(isMax ? std::max(ca.getValue(), cb.getValue())
                     : std::min(ca.getValue(), cb.getValue()));
  if (a == b)
    return a;
  // max(x, c) = x and min(x, c) = c when x >= c for every input.
  for (auto [x, y] : {std::make_pair(a, b), std::make_pair(b, a)})
    if (auto c = dyn_cast<AffineConstantExpr>(y))
      if (std::optional<int64_t> lb = lowerBound(x); lb && *lb >= c.getValue())
        return isMax ? x : y;
  // max(max(x, y), x) = max(x, y) (a row kernel's `max(max(D, 1), D)`).
  for (auto [x, y] : {std::make_pair(a, b), std::make_pair(b, a)})
    if (auto s = dyn_cast<AffineSymbolExpr>(x))
      if (auto it = opaques.find(s.getPosition()); it != opaques.end())
        if (std::get<0>(it->second) == op &&
            (std::get<1>(it->second) == y || std::get<2>(it->second) == y))
          return x;
  std::string key;
  llvm::raw_string_ostream os(key);
  os << op << "(" << a << ", " << b << ")";
  AffineExpr s = named(key);
  opaques[cast<AffineSymbolExpr>(s).getPosition()] = {op.str(), a, b};
  return s;
}

void SymbolicValues::bindKernel(gpu::LaunchOp launch) {
  failures.clear();
  gpu::KernelDim3 ids[2] = {launch.getBlockIds(), launch.getThreadIds()};
  const char *prefix[2] = {"%block.", "%tid."};
  for (int k = 0; k < 2; ++k) {
    Value v[3] = {ids[k].x, ids[k].y, ids[k].z};
    for (int d = 0; d < 3; ++d) {
      AffineExpr s = named((prefix[k] + std::string(1, "xyz"[d])));
      local.insert(cast<AffineSymbolExpr>(s).getPosition());
      cache[v[d]] = s;
    }
  }
  gpu::KernelDim3 inner[2] = {launch.getGridSize(), launch.getBlockSize()};
  gpu::KernelDim3 outer[2] = {launch.getGridSizeOperandValues(),
                              launch.getBlockSizeOperandValues()};
  for (int k = 0; k < 2; ++k) {
    Value in[3] = {inner[k].x, inner[k].y, inner[k].z};
    Value out[3] = {outer[k].x, outer[k].y, outer[k].z};
    for (int d = 0; d < 3; ++d)
      if (FailureOr<AffineExpr> e = value(out[d]); succeeded(e))
        cache[in[d]] = *e;
  }
}

FailureOr<AffineExpr> SymbolicValues::value(Value v) {
  if (auto it = cache.find(v); it != cache.end())
    return it->second;
  if (auto it = failures.find(v); it != failures.end())
    return fail(it->second);
  if (auto c = getConstantIntValue(v))
    return cst(*c);
  Operation *op = v.getDefiningOp();
  if (!op)
    return fail("a loop or branch value");
  auto binary = [&](auto fn) -> FailureOr<AffineExpr> {
    FailureOr<AffineExpr> a = value(op->getOperand(0));
    if (failed(a))
      return failure();
    FailureOr<AffineExpr> b = value(op->getOperand(1));
    if (failed(b))
      return failure();
    return fn(*a, *b);
  };
  FailureOr<AffineExpr> result =
      TypeSwitch<Operation *, FailureOr<AffineExpr>>(op)
          .Case([&](memref::DimOp d) -> FailureOr<AffineExpr> {
            std::optional<int64_t> i = d.getConstantIndex();
            if (!i)
              return fail("a dim of a run-time index");
            return dim(d.getSource(), *i);
          })
          .Case([&](arith::AddIOp) {
            return binary([](AffineExpr a, AffineExpr b) { return a + b; });
          })
          .Case([&](arith::SubIOp) {
            return binary([](AffineExpr a, AffineExpr b) { return a - b; });
          })
          .Case([&](arith::MulIOp) {
            return binary([](AffineExpr a, AffineExpr b) { return a * b; });
          })
          .Case<arith::DivUIOp, arith::DivSIOp, arith::FloorDivSIOp>(
              [&](Operation *) {
                return binary(
                    [](AffineExpr a, AffineExpr b) { return a.floorDiv(b); });
              })
          .Case<arith::CeilDivUIOp, arith::CeilDivSIOp>([&](Operation *) {
            return binary(
                [](AffineExpr a, AffineExpr b) { return a.ceilDiv(b); });
          })
          .Case<arith::RemUIOp, arith::RemSIOp>([&](Operation *) {
            return binary([](AffineExpr a, AffineExpr b) { return a % b; });
          })
          .Case<arith::MaxUIOp, arith::MaxSIOp>([&](Operation *) {
            return binary([&](AffineExpr a, AffineExpr b) {
              return opaque("max", a, b);
            });
          })
          .Case<arith::MinUIOp, arith::MinSIOp>([&](Operation *) {
            return binary([&](AffineExpr a, AffineExpr b) {
              return opaque("min", a, b);
            });
          })
          .Case<arith::IndexCastOp, arith::IndexCastUIOp, arith::ExtSIOp,
                arith::ExtUIOp, arith::TruncIOp>(
              [&](Operation *) { return value(op->getOperand(0)); })
          .Case([&](affine::AffineApplyOp apply) -> FailureOr<AffineExpr> {
            AffineMap map = apply.getAffineMap();
            SmallVector<AffineExpr> dims, syms;
            for (auto [i, operand] : llvm::enumerate(apply.getOperands())) {
              FailureOr<AffineExpr> e = value(operand);
              if (failed(e))
                return failure();
              (i < map.getNumDims() ? dims : syms).push_back(*e);
            }
            return map.getResult(0).replaceDimsAndSymbols(dims, syms);
          })
          .Case([&](memref::LoadOp l) { return load(l); })
          .Case([&](arith::CmpIOp c) { return compare(c); })
          .Case([&](arith::SelectOp sel) -> FailureOr<AffineExpr> {
            std::string before = reason;
            FailureOr<AffineExpr> c = value(sel.getCondition());
            auto k = succeeded(c) ? dyn_cast<AffineConstantExpr>(*c)
                                  : AffineConstantExpr();
            if (!k) {
              // Undecided, but both sides agree (a broadcast of equal
              // dims: `d == 1 ? e : d` with e = d).
              FailureOr<AffineExpr> t = value(sel.getTrueValue());
              FailureOr<AffineExpr> f = value(sel.getFalseValue());
              if (succeeded(t) && succeeded(f) && equal(*t, *f)) {
                reason = before;
                return *t;
              }
              return fail("a select on a run-time condition");
            }
            return value(k.getValue() ? sel.getTrueValue()
                                      : sel.getFalseValue());
          })
          .Default([&](Operation *o) {
            return fail("a value of '" + o->getName().getStringRef() + "'");
          });
  if (succeeded(result))
    cache[v] = *result;
  else
    failures[v] = reason.empty() ? "a value that cannot be derived" : reason;
  return result;
}

FailureOr<AffineExpr> SymbolicValues::dim(Value m, int64_t i) {
  auto type = dyn_cast<MemRefType>(m.getType());
  if (!type)
    return fail("an unranked buffer");
  if (!type.isDynamicDim(i))
    return cst(type.getDimSize(i));
  if (auto arg = dyn_cast<BlockArgument>(m)) {
    if (arg.getOwner() == &func.getBody().front())
      if (auto dims =
              func.getArgAttrOfType<ArrayAttr>(arg.getArgNumber(), "disc.dims"))
        if (i < (int64_t)dims.size())
          if (auto name = dyn_cast<StringAttr>(dims[i]))
            return named(name.getValue());
    return fail("a dim of an argument without a name");
  }
  Operation *op = m.getDefiningOp();
  return TypeSwitch<Operation *, FailureOr<AffineExpr>>(op)
      .Case<memref::AllocOp, memref::AllocaOp>([&](Operation *) {
        return value(op->getOperand(type.getDynamicDimIndex(i)));
      })
      .Case([&](memref::CastOp c) -> FailureOr<AffineExpr> {
        auto src = dyn_cast<MemRefType>(c.getSource().getType());
        if (!src || src.getRank() != type.getRank())
          return fail("a cast of an unranked buffer");
        return dim(c.getSource(), i);
      })
      .Case([&](memref::ReinterpretCastOp c) {
        return fold(c.getMixedSizes()[i]);
      })
      .Case([&](memref::SubViewOp s) -> FailureOr<AffineExpr> {
        if (s.getSourceType().getRank() != type.getRank())
          return fail("a rank-reducing subview");
        return fold(s.getMixedSizes()[i]);
      })
      .Case([&](memref::ReshapeOp r) -> FailureOr<AffineExpr> {
        return loadAt(r, r.getShape(), i);
      })
      .Case([&](memref::ExpandShapeOp e) {
        return fold(e.getMixedOutputShape()[i]);
      })
      .Case([&](memref::CollapseShapeOp c) -> FailureOr<AffineExpr> {
        AffineExpr product = cst(1);
        for (int64_t j : c.getReassociationIndices()[i]) {
          FailureOr<AffineExpr> d = dim(c.getSrc(), j);
          if (failed(d))
            return failure();
          product = product * *d;
        }
        return product;
      })
      .Default([&](Operation *o) {
        return fail("a buffer made by '" + o->getName().getStringRef() + "'");
      });
}

FailureOr<AffineExpr> SymbolicValues::elements(Value m, int64_t from) {
  auto type = cast<MemRefType>(m.getType());
  AffineExpr product = cst(1);
  for (int64_t i = from; i < type.getRank(); ++i) {
    FailureOr<AffineExpr> d = dim(m, i);
    if (failed(d))
      return failure();
    product = product * *d;
  }
  return product;
}

FailureOr<AffineExpr> SymbolicValues::bytes(Value m) {
  Type element = cast<MemRefType>(m.getType()).getElementType();
  int64_t size = 0;
  if (element.isIndex())
    size = 8;
  else if (element.isIntOrFloat())
    size = std::max<int64_t>(1, (element.getIntOrFloatBitWidth() + 7) / 8);
  else
    return fail("elements of type without a byte size");
  FailureOr<AffineExpr> n = elements(m);
  if (failed(n))
    return failure();
  return *n * size;
}

llvm::json::Value SymbolicValues::toJson(AffineExpr e) {
  if (auto c = dyn_cast<AffineConstantExpr>(e))
    return c.getValue();
  if (auto s = dyn_cast<AffineSymbolExpr>(e)) {
    if (auto it = opaques.find(s.getPosition()); it != opaques.end())
      return llvm::json::Array{std::get<0>(it->second),
                               toJson(std::get<1>(it->second)),
                               toJson(std::get<2>(it->second))};
    return names[s.getPosition()];
  }
  auto bin = cast<AffineBinaryOpExpr>(e);
  const char *op = disc::affineOpName(e.getKind());
  return llvm::json::Array{op, toJson(bin.getLHS()), toJson(bin.getRHS())};
}

void SymbolicValues::renderInto(AffineExpr e, llvm::raw_ostream &os,
                                bool atom) {
  if (auto c = dyn_cast<AffineConstantExpr>(e)) {
    if (atom && c.getValue() < 0)
      os << "(" << c.getValue() << ")";
    else
      os << c.getValue();
    return;
  }
  if (auto s = dyn_cast<AffineSymbolExpr>(e)) {
    if (auto it = opaques.find(s.getPosition()); it != opaques.end()) {
      os << std::get<0>(it->second) << "(";
      renderInto(std::get<1>(it->second), os, false);
      os << ", ";
      renderInto(std::get<2>(it->second), os, false);
      os << ")";
      return;
    }
    os << names[s.getPosition()];
    return;
  }
  auto bin = cast<AffineBinaryOpExpr>(e);
  AffineExpr lhs = bin.getLHS(), rhs = bin.getRHS();
  switch (e.getKind()) {
  case AffineExprKind::Add: {
    if (atom)
      os << "(";
    renderInto(lhs, os, false);
    // x + y*-c as "x - y*c", x + -c as "x - c".
    auto c = dyn_cast<AffineConstantExpr>(rhs);
    auto mul = dyn_cast<AffineBinaryOpExpr>(rhs);
    auto mulC = mul && mul.getKind() == AffineExprKind::Mul
                    ? dyn_cast<AffineConstantExpr>(mul.getRHS())
                    : AffineConstantExpr();
    if (c && c.getValue() < 0) {
      os << " - " << -c.getValue();
    } else if (mulC && mulC.getValue() < 0) {
      os << " - ";
      if (mulC.getValue() == -1) {
        renderInto(mul.getLHS(), os, true);
      } else {
        renderInto(mul.getLHS(), os, true);
        os << "*" << -mulC.getValue();
      }
    } else {
      os << " + ";
      renderInto(rhs, os, false);
    }
    if (atom)
      os << ")";
    return;
  }
  case AffineExprKind::Mul:
    renderInto(lhs, os, true);
    os << "*";
    renderInto(rhs, os, true);
    return;
  default: {
    const char *op = e.getKind() == AffineExprKind::FloorDiv  ? " floordiv "
                     : e.getKind() == AffineExprKind::CeilDiv ? " ceildiv "
                                                              : " mod ";
    if (atom)
      os << "(";
    renderInto(lhs, os, true);
    os << op;
    renderInto(rhs, os, true);
    if (atom)
      os << ")";
    return;
  }
  }
}

AffineExpr SymbolicValues::canonical(AffineExpr e) {
  // A polynomial: sorted factor keys -> (factors, coefficient).
  using Poly =
      std::map<std::string, std::pair<SmallVector<AffineExpr>, int64_t>>;
  std::function<Poly(AffineExpr)> poly = [&](AffineExpr x) -> Poly {
    if (auto c = dyn_cast<AffineConstantExpr>(x))
      return Poly{{"", {{}, c.getValue()}}};
    auto bin = dyn_cast<AffineBinaryOpExpr>(x);
    if (!bin || (x.getKind() != AffineExprKind::Add &&
                 x.getKind() != AffineExprKind::Mul)) {
      // A factor: a symbol, or a division or remainder of canonical parts.
      AffineExpr atom = x;
      if (bin) {
        AffineExpr l = canonical(bin.getLHS()), r = canonical(bin.getRHS());
        atom = x.getKind() == AffineExprKind::FloorDiv  ? l.floorDiv(r)
               : x.getKind() == AffineExprKind::CeilDiv ? l.ceilDiv(r)
                                                        : l % r;
      }
      return Poly{{render(atom), {{atom}, 1}}};
    }
    Poly a = poly(bin.getLHS()), b = poly(bin.getRHS()), out;
    auto add = [&](const std::string &key, SmallVector<AffineExpr> f,
                   int64_t c) {
      auto [it, inserted] = out.try_emplace(key, std::move(f), c);
      if (!inserted)
        it->second.second += c;
    };
    if (x.getKind() == AffineExprKind::Add) {
      for (Poly *p : {&a, &b})
        for (auto &[k, t] : *p)
          add(k, t.first, t.second);
      return out;
    }
    for (auto &[ka, ta] : a)
      for (auto &[kb, tb] : b) {
        SmallVector<std::pair<std::string, AffineExpr>> fs;
        for (AffineExpr f : ta.first)
          fs.push_back({render(f), f});
        for (AffineExpr f : tb.first)
          fs.push_back({render(f), f});
        llvm::sort(fs, [](auto &l, auto &r) { return l.first < r.first; });
        std::string key;
        SmallVector<AffineExpr> factors;
        for (auto &[k, f] : fs) {
          key += k + "*";
          factors.push_back(f);
        }
        add(key, factors, ta.second * tb.second);
      }
    return out;
  };
  Poly p = poly(e);
  // Higher degree first, then by name; the constant term last.
  SmallVector<std::pair<SmallVector<AffineExpr>, int64_t>> terms;
  for (auto &[k, t] : p)
    if (t.second != 0)
      terms.push_back(t);
  std::stable_sort(terms.begin(), terms.end(), [](auto &l, auto &r) {
    return l.first.size() > r.first.size();
  });
  AffineExpr sum;
  for (auto &[factors, c] : terms) {
    AffineExpr term;
    for (AffineExpr f : factors)
      term = term ? getAffineBinaryOpExpr(AffineExprKind::Mul, term, f) : f;
    term = !term    ? cst(c)
           : c == 1 ? term
                    : getAffineBinaryOpExpr(AffineExprKind::Mul, term, cst(c));
    sum = sum ? getAffineBinaryOpExpr(AffineExprKind::Add, sum, term) : term;
  }
  return sum ? sum : cst(0);
}

std::string SymbolicValues::render(AffineExpr e) {
  std::string text;
  llvm::raw_string_ostream os(text);
  renderInto(e, os, false);
  return text;
}

//===----------------------------------------------------------------------===//
// Kernels
//===----------------------------------------------------------------------===//

/// True for the failure path of a run-time check (disc-gpu-device-checks):
/// a region whose block reads the error word's address.
bool isCheckFailurePath(Region &r) {
  if (r.empty())
    return false;
  for (Operation &op : r.front())
    if (auto g = dyn_cast<memref::GetGlobalOp>(op))
      if (g.getName() == "disc_check_error")
        return true;
  return false;
}

/// Floating-point operations of one execution of `op` (its regions not
/// included).
int64_t flopsOf(Operation *op) {
  auto lanes = [](Type t) -> int64_t {
    if (auto v = dyn_cast<VectorType>(t))
      return v.getNumElements();
    return 1;
  };
  auto isFloat = [](Type t) { return isa<FloatType>(getElementTypeOrSelf(t)); };
  if (isa<arith::AddFOp, arith::SubFOp, arith::MulFOp, arith::DivFOp,
          arith::RemFOp, arith::NegFOp, arith::MaximumFOp, arith::MinimumFOp,
          arith::MaxNumFOp, arith::MinNumFOp>(op))
    return lanes(op->getResult(0).getType());
  if (isa<arith::CmpFOp>(op))
    return lanes(op->getOperand(0).getType());
  if (op->getDialect() && op->getDialect()->getNamespace() == "math" &&
      op->getNumResults() == 1 && isFloat(op->getResult(0).getType()))
    return (isa<math::FmaOp>(op) ? 2 : 1) * lanes(op->getResult(0).getType());
  if (auto rmw = dyn_cast<memref::AtomicRMWOp>(op))
    return isFloat(rmw.getValue().getType()) ? 1 : 0;
  return 0;
}

/// The (thread, iteration) instances that reach a point of a kernel: the
/// extents of the grid and block dims still free (each thread on its own),
/// the ones a pattern replaced by a total, and the trip counts of the
/// enclosing loops.
struct Space {
  AffineExpr grid[3], block[3];
  bool gridFree[3] = {true, true, true}, blockFree[3] = {true, true, true};
  AffineExpr extra;
  /// After a bound guard (one instance per linear index `linear` in
  /// [0, N)): `linear` and the first index of the range the instances
  /// cover, grid[0] being its length (segments of a horizontally fused
  /// nest split it). Null otherwise.
  AffineExpr linear, first;
  AffineExpr instances() const {
    AffineExpr e = extra;
    for (int d = 0; d < 3; ++d)
      e = e * grid[d] * block[d];
    return e;
  }
};

class FlopCounter {
public:
  FlopCounter(SymbolicValues &sv, gpu::LaunchOp launch)
      : sv(sv), launch(launch) {}

  FailureOr<AffineExpr> count(Region &r, const Space &s) {
    AffineExpr total = sv.cst(0);
    for (Block &b : r)
      for (Operation &op : b) {
        FailureOr<AffineExpr> f = countOp(&op, s);
        if (failed(f))
          return failure();
        total = total + *f;
      }
    return total;
  }

  std::string reason;

private:
  LogicalResult fail(const Twine &why) {
    if (reason.empty())
      reason = why.str();
    return failure();
  }
  bool isZero(AffineExpr e) {
    auto c = dyn_cast<AffineConstantExpr>(e);
    return c && c.getValue() == 0;
  }
  FailureOr<AffineExpr> uniform(Value v) {
    FailureOr<AffineExpr> e = sv.value(v);
    if (failed(e)) {
      (void)fail("a bound that is " + sv.reason);
      return failure();
    }
    if (!sv.isUniform(*e)) {
      (void)fail("a bound that depends on the thread or block id");
      return failure();
    }
    return e;
  }

  FailureOr<AffineExpr> countOp(Operation *op, const Space &s) {
    AffineExpr own = sv.cst(flopsOf(op)) * s.instances();
    if (auto loop = dyn_cast<scf::ForOp>(op))
      return countFor(loop, s);
    if (auto branch = dyn_cast<scf::IfOp>(op))
      return countIf(branch, s);
    if (op->getNumRegions() == 0)
      return own;
    // Region ops other than these (a while loop, a switch, ...): their
    // FLOPs have no count.
    if (!isa<memref::GenericAtomicRMWOp, scf::ExecuteRegionOp>(op)) {
      bool hasFlops = false;
      op->walk([&](Operation *o) { hasFlops |= flopsOf(o) != 0; });
      if (hasFlops) {
        (void)fail("FLOPs inside '" + op->getName().getStringRef() + "'");
        return failure();
      }
      return own;
    }
    AffineExpr total = own;
    for (Region &r : op->getRegions()) {
      FailureOr<AffineExpr> f = count(r, s);
      if (failed(f))
        return failure();
      total = total + *f;
    }
    return total;
  }

  FailureOr<AffineExpr> countFor(scf::ForOp loop, const Space &s) {
    // An unrolled strided loop of a row kernel: its remainder loop stands
    // for every element (kStridedMainAttr), the main loop adds nothing.
    if (loop->hasAttr(kStridedMainAttr))
      return sv.cst(0);
    bool rest = loop->hasAttr(kStridedRestAttr);
    Space inner = s;
    Value lb = loop.getLowerBound();
    gpu::KernelDim3 tid = launch.getThreadIds(), bid = launch.getBlockIds();
    FailureOr<AffineExpr> step = sv.value(loop.getStep());
    bool strided = false;
    if (rest &&
        (failed(step) || !s.blockFree[0] || !sv.equal(*step, s.block[0])))
      return fail("an unrecognized unrolled strided loop");
    if (succeeded(step)) {
      // for j = tid.x; j < D; j += blockDim.x: D iterations over the
      // threads of the dim together (likewise over the blocks).
      if ((lb == tid.x || rest) && s.blockFree[0] &&
          sv.equal(*step, s.block[0])) {
        FailureOr<AffineExpr> ub = uniform(loop.getUpperBound());
        if (failed(ub))
          return failure();
        inner.block[0] = *ub;
        inner.blockFree[0] = false;
        strided = true;
      } else if (lb == bid.x && s.gridFree[0] && sv.equal(*step, s.grid[0])) {
        FailureOr<AffineExpr> ub = uniform(loop.getUpperBound());
        if (failed(ub))
          return failure();
        inner.grid[0] = *ub;
        inner.gridFree[0] = false;
        strided = true;
      }
    }
    if (!strided) {
      FailureOr<AffineExpr> l = uniform(lb);
      if (failed(l))
        return failure();
      FailureOr<AffineExpr> u = uniform(loop.getUpperBound());
      if (failed(u))
        return failure();
      FailureOr<AffineExpr> st = uniform(loop.getStep());
      if (failed(st))
        return failure();
      AffineExpr span = *u - *l;
      auto one = dyn_cast<AffineConstantExpr>(*st);
      inner.extra =
          s.extra * (one && one.getValue() == 1 ? span : span.ceilDiv(*st));
    }
    return count(loop.getRegion(), inner);
  }

  FailureOr<AffineExpr> countIf(scf::IfOp branch, const Space &s) {
    if (auto f = branch->getAttrOfType<IntegerAttr>(kElementsPerThreadAttr))
      return countCoarsened(branch, s, f.getInt());
    if (branch->hasAttr(kSegmentSplitAttr))
      return countSegments(branch, s);
    if (branch->hasAttr(kRowInvariantAttr)) {
      // A row kernel phase's values that do not depend on the element:
      // once per row (every thread computes them; the model's FLOPs are
      // one row's).
      Space row = s;
      row.block[0] = sv.cst(1);
      row.blockFree[0] = false;
      return count(branch.getThenRegion(), row);
    }
    Region &thenR = branch.getThenRegion(), &elseR = branch.getElseRegion();
    bool thenFails = isCheckFailurePath(thenR);
    bool elseFails = isCheckFailurePath(elseR);
    Space thenS = s, elseS = s;
    bool matched = false;
    auto cmp = branch.getCondition().getDefiningOp<arith::CmpIOp>();
    gpu::KernelDim3 tid = launch.getThreadIds();
    if (cmp && cmp.getPredicate() == arith::CmpIPredicate::eq &&
        s.blockFree[0]) {
      // tid.x == 0: one thread of the dim.
      Value lhs = cmp.getLhs(), rhs = cmp.getRhs();
      if (rhs == tid.x)
        std::swap(lhs, rhs);
      std::optional<int64_t> c = getConstantIntValue(rhs);
      if (lhs == tid.x && c && *c == 0) {
        thenS.block[0] = sv.cst(1);
        thenS.blockFree[0] = false;
        elseS.block[0] = s.block[0] - 1;
        elseS.blockFree[0] = false;
        matched = true;
      }
    }
    if (cmp && !matched && s.gridFree[0] && s.blockFree[0] &&
        (cmp.getPredicate() == arith::CmpIPredicate::ult ||
         cmp.getPredicate() == arith::CmpIPredicate::slt)) {
      // block.x * blockDim.x + tid.x < N with gridDim.x = ceil(N /
      // blockDim.x): exactly N threads pass.
      FailureOr<AffineExpr> lin = sv.value(cmp.getLhs());
      FailureOr<AffineExpr> n = sv.value(cmp.getRhs());
      gpu::KernelDim3 bid = launch.getBlockIds();
      if (succeeded(lin) && succeeded(n) && sv.isUniform(*n)) {
        AffineExpr expected = *sv.value(bid.x) * s.block[0] + *sv.value(tid.x);
        // One block: the ids of a unit dim fold to 0.
        auto oneBlock = dyn_cast<AffineConstantExpr>(s.grid[0]);
        bool linear =
            sv.equal(*lin, expected) || (oneBlock && oneBlock.getValue() == 1 &&
                                         sv.equal(*lin, *sv.value(tid.x)));
        // The threads that pass: n when the launch covers n, the smaller
        // of n and the threads when both are constants.
        std::optional<AffineExpr> passing;
        if (sv.equal(s.grid[0], n->ceilDiv(s.block[0])))
          passing = *n;
        auto cn = dyn_cast<AffineConstantExpr>(*n);
        auto cg = dyn_cast<AffineConstantExpr>(s.grid[0]);
        auto cb = dyn_cast<AffineConstantExpr>(s.block[0]);
        if (!passing && cn && cg && cb)
          passing =
              sv.cst(std::min(cn.getValue(), cg.getValue() * cb.getValue()));
        if (linear && passing) {
          thenS.grid[0] = *passing;
          thenS.block[0] = sv.cst(1);
          thenS.gridFree[0] = thenS.blockFree[0] = false;
          thenS.linear = *lin;
          thenS.first = sv.cst(0);
          // The threads past N: no pattern for them.
          elseS.extra = sv.cst(0);
          matched = true;
        }
      }
    }
    AffineExpr total = sv.cst(0);
    for (auto [r, sp, skip] : {std::make_tuple(&thenR, &thenS, thenFails),
                               std::make_tuple(&elseR, &elseS, elseFails)}) {
      if (skip || r->empty())
        continue;
      FailureOr<AffineExpr> f = count(*r, matched ? *sp : s);
      if (failed(f))
        return failure();
      if (!matched && !isZero(*f)) {
        (void)fail("FLOPs under a data-dependent branch");
        return failure();
      }
      total = total + *f;
    }
    return total;
  }

  /// A split of a horizontally fused nest (kSegmentSplitAttr): `if (i <
  /// bound)` on the guarded linear index `i` covering [first, first + n):
  /// the then-branch runs for [first, bound), the else-branch for [bound,
  /// first + n).
  FailureOr<AffineExpr> countSegments(scf::IfOp branch, const Space &s) {
    auto cmp = branch.getCondition().getDefiningOp<arith::CmpIOp>();
    if (!cmp || cmp.getPredicate() != arith::CmpIPredicate::ult || !s.linear ||
        !s.first)
      return fail("an unrecognized segment split");
    FailureOr<AffineExpr> index = sv.value(cmp.getLhs());
    if (failed(index) || !sv.equal(*index, s.linear))
      return fail("a segment split on another index than the guarded one");
    FailureOr<AffineExpr> bound = uniform(cmp.getRhs());
    if (failed(bound))
      return failure();
    Space lower = s, upper = s;
    lower.grid[0] = *bound - s.first;
    upper.first = *bound;
    upper.grid[0] = s.first + s.grid[0] - *bound;
    FailureOr<AffineExpr> a = count(branch.getThenRegion(), lower);
    if (failed(a))
      return failure();
    FailureOr<AffineExpr> b = count(branch.getElseRegion(), upper);
    if (failed(b))
      return failure();
    return *a + *b;
  }

  /// A nest that disc-gpu-tile-parallel-loops gave `factor` elements per
  /// thread: `if (block.x * T * F + T * F <= N) {F unguarded copies} else
  /// {F guarded copies}` with gridDim.x = ceil(N / (T * F)), T =
  /// blockDim.x. Every element of [0, N) runs the body once: N times the
  /// FLOPs of one guarded copy.
  FailureOr<AffineExpr> countCoarsened(scf::IfOp branch, const Space &s,
                                       int64_t factor) {
    auto cmp = branch.getCondition().getDefiningOp<arith::CmpIOp>();
    if (!cmp || cmp.getPredicate() != arith::CmpIPredicate::ule ||
        !s.gridFree[0] || !s.blockFree[0] || factor < 1)
      return fail("an unrecognized coarsened nest");
    FailureOr<AffineExpr> n = uniform(cmp.getRhs());
    if (failed(n))
      return failure();
    if (!sv.equal(s.grid[0], n->ceilDiv(s.block[0] * factor)))
      return fail("a coarsened nest whose grid does not cover its bound");
    scf::IfOp guarded;
    for (Operation &op : branch.getElseRegion().front())
      if ((guarded = dyn_cast<scf::IfOp>(op)))
        break;
    if (!guarded)
      return fail("an unrecognized coarsened nest");
    Space one = s;
    one.grid[0] = *n;
    one.block[0] = sv.cst(1);
    one.gridFree[0] = one.blockFree[0] = false;
    return count(guarded.getThenRegion(), one);
  }

  SymbolicValues &sv;
  gpu::LaunchOp launch;
};

/// The device buffer a kernel accesses through `v`: view ops inside the
/// kernel followed to their source, host casts to theirs. Null for shared
/// or private memory.
Value bufferRoot(Value v, gpu::LaunchOp launch) {
  while (true) {
    auto type = dyn_cast<MemRefType>(v.getType());
    if (!type)
      return Value();
    if (auto as =
            dyn_cast_or_null<gpu::AddressSpaceAttr>(type.getMemorySpace()))
      if (as.getValue() != gpu::AddressSpace::Global)
        return Value();
    Operation *def = v.getDefiningOp();
    if (!def)
      return v;
    if (launch->isProperAncestor(def)) {
      if (auto view = dyn_cast<ViewLikeOpInterface>(def)) {
        v = view.getViewSource();
        continue;
      }
      return isa<memref::GetGlobalOp>(def) ? v : Value();
    }
    if (auto c = dyn_cast<memref::CastOp>(def)) {
      v = c.getSource();
      continue;
    }
    return v;
  }
}

/// Collects the buffers read and written in `r`, failure paths of
/// run-time checks left out.
void collectAccesses(Region &r, gpu::LaunchOp launch,
                     llvm::SetVector<Value> &reads,
                     llvm::SetVector<Value> &writes) {
  if (isCheckFailurePath(r))
    return;
  for (Block &b : r)
    for (Operation &op : b) {
      if (auto effects = dyn_cast<MemoryEffectOpInterface>(&op)) {
        SmallVector<MemoryEffects::EffectInstance> list;
        effects.getEffects(list);
        for (auto &e : list) {
          Value v = e.getValue();
          if (!v || !isa<MemRefType>(v.getType()))
            continue;
          Value root = bufferRoot(v, launch);
          if (!root)
            continue;
          if (isa<MemoryEffects::Read>(e.getEffect()))
            reads.insert(root);
          else if (isa<MemoryEffects::Write>(e.getEffect()))
            writes.insert(root);
        }
      }
      for (Region &inner : op.getRegions())
        collectAccesses(inner, launch, reads, writes);
    }
}

/// The ONNX node names of a location (a fused location lists several).
void collectNodes(Location loc, SmallVectorImpl<std::string> &out) {
  if (auto fused = dyn_cast<FusedLoc>(loc)) {
    for (Location l : fused.getLocations())
      collectNodes(l, out);
    return;
  }
  if (auto named = dyn_cast<NameLoc>(loc))
    if (!llvm::is_contained(out, named.getName().str()))
      out.push_back(named.getName().str());
}

/// True when `v` is computed from the result of a call to `callee`.
bool derivesFromCall(Value v, StringRef callee, int depth = 3) {
  Operation *def = v.getDefiningOp();
  if (!def || depth == 0)
    return false;
  if (auto call = dyn_cast<func::CallOp>(def))
    return call.getCallee() == callee;
  return llvm::any_of(def->getOperands(), [&](Value o) {
    return derivesFromCall(o, callee, depth - 1);
  });
}

/// "always", "conditional", "loop" or "recompute" (KernelCost::runs).
std::string runsOf(Operation *op, func::FuncOp func) {
  std::string runs = "always";
  for (Operation *p = op->getParentOp(); p && p != func.getOperation();
       p = p->getParentOp()) {
    if (auto branch = dyn_cast<scf::IfOp>(p)) {
      if (derivesFromCall(branch.getCondition(), "disc_remat_regenerate"))
        return "recompute";
      if (runs == "always")
        runs = "conditional";
    } else if (isa<LoopLikeOpInterface>(p)) {
      runs = "loop";
    }
  }
  return runs;
}

void setExpr(SymbolicValues &sv, FailureOr<AffineExpr> e,
             std::optional<llvm::json::Value> &json, std::string &text,
             std::string &unknown, StringRef why) {
  if (succeeded(e) && sv.isUniform(*e)) {
    AffineExpr c = sv.canonical(*e);
    json = sv.toJson(c);
    text = sv.render(c);
    return;
  }
  unknown = why.empty() ? "a size that is not an expression of the input dims"
                        : why.str();
  text = "unknown (" + unknown + ")";
}

KernelCost kernelCost(SymbolicValues &sv, gpu::LaunchOp launch) {
  KernelCost cost;
  sv.bindKernel(launch);
  sv.reason.clear();
  llvm::SetVector<Value> reads, writes;
  collectAccesses(launch.getBody(), launch, reads, writes);
  FailureOr<AffineExpr> bytes = sv.cst(0);
  for (const llvm::SetVector<Value> *set : {&reads, &writes})
    for (Value v : *set) {
      if (failed(bytes))
        break;
      FailureOr<AffineExpr> b = sv.bytes(v);
      bytes = failed(b) ? b : FailureOr<AffineExpr>(*bytes + *b);
    }
  setExpr(sv, bytes, cost.bytes, cost.bytesText, cost.bytesUnknown,
          sv.reason.empty() ? "" : "a buffer size that is " + sv.reason);

  sv.reason.clear();
  Space s;
  FailureOr<AffineExpr> g[3] = {sv.value(launch.getGridSizeX()),
                                sv.value(launch.getGridSizeY()),
                                sv.value(launch.getGridSizeZ())};
  FailureOr<AffineExpr> b[3] = {sv.value(launch.getBlockSizeX()),
                                sv.value(launch.getBlockSizeY()),
                                sv.value(launch.getBlockSizeZ())};
  FailureOr<AffineExpr> flops = failure();
  std::string why;
  if (llvm::all_of(g, [](auto &e) { return succeeded(e); }) &&
      llvm::all_of(b, [](auto &e) { return succeeded(e); })) {
    for (int d = 0; d < 3; ++d) {
      s.grid[d] = *g[d];
      s.block[d] = *b[d];
    }
    s.extra = sv.cst(1);
    FlopCounter counter(sv, launch);
    flops = counter.count(launch.getBody(), s);
    why = counter.reason;
    if (succeeded(flops) && !sv.isUniform(*flops))
      why = "FLOPs that depend on the thread or block id";
  } else {
    why = "a launch size that is " + sv.reason;
  }
  setExpr(sv, flops, cost.flops, cost.flopsText, cost.flopsUnknown, why);
  return cost;
}

/// Integer constant of a call's operand `i`, if any.
std::optional<int64_t> intOperand(func::CallOp call, unsigned i) {
  if (i >= call.getNumOperands())
    return std::nullopt;
  return getConstantIntValue(call.getOperand(i));
}

KernelCost libraryCost(SymbolicValues &sv, func::CallOp call) {
  KernelCost cost;
  cost.library = true;
  cost.name = call.getCallee().str();
  sv.reason.clear();
  SmallVector<Value> buffers;
  SmallVector<unsigned> intPositions;
  for (auto [i, v] : llvm::enumerate(call.getOperands())) {
    if (isa<MemRefType>(v.getType()))
      buffers.push_back(v);
    else
      intPositions.push_back(i);
  }
  llvm::SetVector<Value> distinct;
  for (Value v : buffers) {
    // The same buffer through casts counts once.
    while (auto c = v.getDefiningOp<memref::CastOp>())
      v = c.getSource();
    distinct.insert(v);
  }
  FailureOr<AffineExpr> bytes = sv.cst(0);
  for (Value v : distinct) {
    FailureOr<AffineExpr> b = sv.bytes(v);
    if (failed(b)) {
      bytes = failure();
      break;
    }
    bytes = *bytes + *b;
  }
  setExpr(sv, bytes, cost.bytes, cost.bytesText, cost.bytesUnknown,
          sv.reason.empty() ? "" : "a buffer size that is " + sv.reason);

  sv.reason.clear();
  StringRef name = call.getCallee();
  auto attr = [&](unsigned k) -> std::optional<int64_t> {
    return k < intPositions.size() ? intOperand(call, intPositions[k])
                                   : std::nullopt;
  };
  FailureOr<AffineExpr> flops = failure();
  std::string why;
  // Post-ops: one FLOP per output element each (bias, residual, Relu; a
  // clip two).
  auto postOps = [&](unsigned flagsAttr) -> int64_t {
    int64_t n = 0;
    if (name.contains("_post"))
      if (std::optional<int64_t> flags = attr(flagsAttr))
        n += llvm::popcount(static_cast<uint64_t>(*flags & 7));
    if (name.ends_with("c"))
      n += 2;
    return n;
  };
  if (buffers.size() < 3) {
    why = "an unknown library call";
  } else if (name.starts_with("disc_lib_matmul")) {
    // A [B, M, K] (transposed: [B, K, M]), B, Y [B, M, N]: 2*B*M*N*K.
    std::optional<int64_t> transA = attr(0);
    FailureOr<AffineExpr> out = sv.elements(buffers[2]);
    FailureOr<AffineExpr> k = sv.dim(buffers[0], transA && *transA ? 1 : 2);
    if (succeeded(out) && succeeded(k) && transA)
      flops = *out * *k * 2 + *out * postOps(2);
  } else if (name.starts_with("disc_lib_conv_int")) {
    why = "an integer convolution";
  } else if (name.starts_with("disc_lib_conv")) {
    auto rank = cast<MemRefType>(buffers[0].getType()).getRank();
    unsigned flagsAttr = 2 + 4 * (rank - 2);
    // conv: 2 * elements(Y) * elements(W) / OC; transposed: the input
    // scatters, 2 * elements(X) * elements(W) / C; filter gradient:
    // 2 * elements(dY) * elements(dW) / OC.
    unsigned driver = 2, filter = 1;
    if (name.starts_with("disc_lib_conv_transpose"))
      driver = 0;
    else if (name.starts_with("disc_lib_conv_backward_filter"))
      driver = 1, filter = 2, flagsAttr = ~0u;
    FailureOr<AffineExpr> n = sv.elements(buffers[driver]);
    FailureOr<AffineExpr> w = sv.elements(buffers[filter], 1);
    FailureOr<AffineExpr> out = sv.elements(buffers[filter == 2 ? 1 : 2]);
    if (succeeded(n) && succeeded(w) && succeeded(out))
      flops = *n * *w * 2 + *out * (flagsAttr == ~0u ? 0 : postOps(flagsAttr));
  } else {
    why = "an unknown library call";
  }
  if (why.empty() && failed(flops))
    why = sv.reason.empty() ? "operand sizes that are not known"
                            : "an operand size that is " + sv.reason;
  setExpr(sv, flops, cost.flops, cost.flopsText, cost.flopsUnknown, why);
  return cost;
}

/// Host memory in the mapped IR: constants (globals) and stack buffers.
bool isHostBuffer(Value v) {
  v = viewRoot(v);
  return v.getDefiningOp<memref::GetGlobalOp>() ||
         v.getDefiningOp<memref::AllocaOp>();
}

KernelCost copyCost(SymbolicValues &sv, gpu::MemcpyOp copy) {
  KernelCost cost;
  cost.name = "memcpy";
  bool fromHost = isHostBuffer(copy.getSrc());
  bool toHost = isHostBuffer(copy.getDst());
  cost.copy = fromHost && !toHost   ? "host-to-device"
              : !fromHost && toHost ? "device-to-host"
              : fromHost            ? "host-to-host"
                                    : "device-to-device";
  sv.reason.clear();
  setExpr(sv, sv.bytes(copy.getSrc()), cost.bytes, cost.bytesText,
          cost.bytesUnknown,
          sv.reason.empty() ? "" : "a buffer size that is " + sv.reason);
  setExpr(sv, sv.cst(0), cost.flops, cost.flopsText, cost.flopsUnknown, "");
  return cost;
}

std::string nodesOf(Operation *op) {
  SmallVector<std::string> nodes;
  collectNodes(op->getLoc(), nodes);
  return llvm::join(nodes, ", ");
}

struct KernelCostPass
    : public disc::impl::DiscGpuKernelCostBase<KernelCostPass> {
  using Base::Base;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto entryFn = module.lookupSymbol<func::FuncOp>(entry);
    if (!entryFn || entryFn.isExternal())
      return;
    std::vector<KernelCost> costs = computeKernelCosts(entryFn);
    llvm::json::Array list;
    unsigned kernels = 0, calls = 0, copies = 0, unknown = 0;
    for (const KernelCost &c : costs) {
      list.push_back(kernelCostToJson(c));
      (c.library ? calls : !c.copy.empty() ? copies : kernels) += 1;
      unknown += !c.bytes || !c.flops;
      if (!report)
        continue;
      llvm::errs() << (c.library         ? "library call " + c.name
                       : !c.copy.empty() ? "copy " + c.copy
                                         : "kernel " + c.name)
                   << ": "
                   << (c.nodes.empty() ? std::string("(no ONNX node)")
                                       : "ONNX node '" + c.nodes + "'");
      if (c.runs != "always")
        llvm::errs() << " [" << c.runs << "]";
      llvm::errs() << ": bytes " << c.bytesText << ", FLOPs " << c.flopsText
                   << "\n";
    }
    if (report)
      llvm::errs() << "kernel cost: " << kernels << " kernels, " << calls
                   << " library calls, " << copies << " copies, " << unknown
                   << " with an unknown cost\n";
    module->setAttr(kKernelsAttrName,
                    disc::jsonToAttribute(&getContext(), std::move(list)));
  }
};

} // namespace

std::vector<KernelCost> mlir::disc::computeKernelCosts(func::FuncOp entry) {
  std::vector<KernelCost> costs;
  SymbolicValues sv(entry);
  // gpu-kernel-outlining names the kernels <func>_kernel, then _0, _1, ...
  // in walk order.
  unsigned launches = 0;
  entry.walk([&](Operation *op) {
    KernelCost cost;
    if (auto launch = dyn_cast<gpu::LaunchOp>(op)) {
      cost = kernelCost(sv, launch);
      cost.name = entry.getSymName().str() + "_kernel";
      if (launches > 0)
        cost.name += "_" + std::to_string(launches - 1);
      ++launches;
    } else if (auto call = dyn_cast<func::CallOp>(op)) {
      if (!call.getCallee().starts_with("disc_lib_"))
        return;
      cost = libraryCost(sv, call);
    } else if (auto copy = dyn_cast<gpu::MemcpyOp>(op)) {
      cost = copyCost(sv, copy);
    } else {
      return;
    }
    cost.nodes = nodesOf(op);
    cost.runs = runsOf(op, entry);
    costs.push_back(std::move(cost));
  });
  return costs;
}

llvm::json::Object mlir::disc::kernelCostToJson(const KernelCost &c) {
  llvm::json::Object o{{"name", c.name},
                       {"node", c.nodes},
                       {"library", c.library},
                       {"runs", c.runs},
                       {"bytes", c.bytes ? *c.bytes : nullptr},
                       {"flops", c.flops ? *c.flops : nullptr},
                       {"bytes_text", c.bytesText},
                       {"flops_text", c.flopsText}};
  if (!c.copy.empty())
    o["copy"] = c.copy;
  if (!c.bytes)
    o["bytes_unknown"] = c.bytesUnknown;
  if (!c.flops)
    o["flops_unknown"] = c.flopsUnknown;
  return o;
}
