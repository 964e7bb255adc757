//===- ShapePropagate.cpp - symbolic shape annotations and passes ---------===//
//
// The disc-shape-propagate / disc-shape-simplify /
// disc-strip-shape-annotations passes and the shape report, on top of
// ShapeAnalysis (include/disc/Transforms/ShapeAnalysis.h; ShapeAnalysis.cpp,
// the per-op rules in ShapeRules.cpp). See docs/symbolic-shapes.md,
// "Symbolic dims and passes".
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
#include <memory>

namespace mlir::disc {
#define GEN_PASS_DEF_DISCSHAPEPROPAGATE
#define GEN_PASS_DEF_DISCSHAPESIMPLIFY
#define GEN_PASS_DEF_DISCSTRIPSHAPEANNOTATIONS
#include "disc/Transforms/Passes.h.inc"
} // namespace mlir::disc

using namespace mlir;
using namespace mlir::disc;

//===----------------------------------------------------------------------===//
// Annotations
//===----------------------------------------------------------------------===//

int64_t mlir::disc::elementByteWidth(Type t) {
  if (t.isIntOrFloat())
    return std::max<int64_t>(1, (t.getIntOrFloatBitWidth() + 7) / 8);
  if (t.isIndex())
    return 8;
  return 0;
}

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
/// Replaces each ONNX If (`scf.if` with an else region, not a remat
/// regenerate point) whose condition the analysis proves constant by the
/// ops of the branch taken. Returns whether any was folded.
static bool foldShapeConditions(func::FuncOp func, ShapeAnalysis &sa) {
  SmallVector<scf::IfOp> ifs;
  // Post-order: an inner If is folded before the one around it.
  func.walk([&](scf::IfOp i) {
    if (!i->hasAttr("disc.remat_regenerate") && !i.getElseRegion().empty())
      ifs.push_back(i);
  });
  bool folded = false;
  for (scf::IfOp i : ifs) {
    auto extract = i.getCondition().getDefiningOp<tensor::ExtractOp>();
    if (!extract)
      continue;
    std::optional<int64_t> k = sa.getConstantElement(extract.getTensor());
    if (!k)
      continue;
    Block *taken = *k ? i.thenBlock() : i.elseBlock();
    Operation *yield = taken->getTerminator();
    SmallVector<Value> results(yield->getOperands());
    Block *block = i->getBlock();
    block->getOperations().splice(Block::iterator(i), taken->getOperations(),
                                  taken->begin(), Block::iterator(yield));
    i.replaceAllUsesWith(results);
    i.erase();
    folded = true;
  }
  return folded;
}

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
    auto analysis = std::make_unique<ShapeAnalysis>(func, ranges);
    analysis->run();
    // A branch chosen by a proven shape condition: the ops after it see the
    // taken branch's dims, so the analysis runs again.
    if (simplify && foldShapeConditions(func, *analysis)) {
      analysis = std::make_unique<ShapeAnalysis>(func, ranges);
      analysis->run();
    }
    ShapeAnalysis &sa = *analysis;
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
    AffineExpr bytes = getAffineConstantExpr(
        elementByteWidth(t.getElementType()), module.getContext());
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
      int64_t c = elementByteWidth(t.getElementType());
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
