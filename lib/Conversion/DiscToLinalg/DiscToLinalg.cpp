//===- DiscToLinalg.cpp - lower disc ops to linalg/tensor/arith/math ------===//
//
// Rewrites every `disc` op into upstream tensor-level IR in destination
// passing style. Destinations are `tensor.empty` ops sized from the op's
// ReifyRankedShapedTypeOpInterface implementation (DiscShapeReify.cpp), so
// the shape logic lives in one place.
//
// Each op family has its own file (Elementwise.cpp, Linear.cpp,
// Pooling.cpp, Reduction.cpp, DataMovement.cpp, IndirectDataMovement.cpp;
// shared builders in Utils.h); this file runs the shape analysis and
// hands every op to its family.
//
// NumPy broadcasting with dynamic dims: an operand dim that may be 1 at run
// time while the result dim is larger cannot be expressed by an indexing map.
// Such ops are versioned: when every such dim equals the result dim at run
// time, a `linalg.generic` with identity maps runs; otherwise a generic over
// the result reads the operands with `tensor.extract` at
// `select(dim == 1, 0, i)`. Dims that the symbolic shape analysis
// (ShapeAnalysis, docs/symbolic-shapes.md) proves equal to the result dim,
// without relying on an assumed broadcast equality, need no version.
//
//===----------------------------------------------------------------------===//
#include "LibraryCalls.h"
#include "RuntimeChecks.h"
#include "Utils.h"
#include "disc/Conversion/CudaLibraryCalls.h"
#include "disc/Conversion/Passes.h"
#include "disc/Dialect/Disc/IR/DiscDialect.h"
#include "disc/Transforms/Fusion.h"
#include "disc/Transforms/ShapeAnalysis.h"

#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/TypeSwitch.h"

namespace mlir::disc {
#define GEN_PASS_DEF_DISCLOWERTOLINALG
#include "disc/Conversion/Passes.h.inc"
} // namespace mlir::disc

using namespace mlir;
using namespace mlir::disc;
using namespace mlir::disc::lowering;

namespace {

//===----------------------------------------------------------------------===//
// Dispatch
//===----------------------------------------------------------------------===//

/// Ops lowered by lowerElementwise (operands broadcast to the result)
/// whose operand dims the shape analysis' proofs may spare a version.
bool isBroadcasting(Operation *op) {
  return takesBroadcastProofs(op) || isa<ExpandOp>(op);
}

/// Records the range of each input dim of `func` (kInputDimRangesAttr) for
/// disc-check-allocations, when some dynamic input dim has a maximum.
void recordInputDimRanges(func::FuncOp func, ShapeAnalysis &sa) {
  SmallVector<Attribute> args;
  bool anyMax = false;
  for (BlockArgument arg : func.getArguments()) {
    SmallVector<int64_t> r;
    auto t = dyn_cast<RankedTensorType>(arg.getType());
    SmallVector<AffineExpr> dims =
        t ? sa.getDims(arg) : SmallVector<AffineExpr>{};
    for (int64_t i = 0; t && i < t.getRank(); ++i) {
      int64_t lo = 0, hi = -1;
      if (!t.isDynamicDim(i)) {
        lo = hi = t.getDimSize(i);
      } else if (i < (int64_t)dims.size()) {
        if (auto c = dyn_cast<AffineConstantExpr>(dims[i])) {
          lo = hi = c.getValue();
        } else if (auto s = dyn_cast<AffineSymbolExpr>(dims[i])) {
          const SymbolInfo &info = sa.getSolver().getSymbol(s.getPosition());
          lo = info.min;
          hi = info.max.value_or(-1);
          anyMax |= info.max.has_value();
        }
      }
      r.append({lo, hi});
    }
    args.push_back(DenseI64ArrayAttr::get(func.getContext(), r));
  }
  if (!anyMax)
    return;
  auto module = func->getParentOfType<ModuleOp>();
  NamedAttrList all;
  if (auto d = module->getAttrOfType<DictionaryAttr>(kInputDimRangesAttr))
    all.append(d.getValue());
  all.set(func.getSymName(), ArrayAttr::get(func.getContext(), args));
  module->setAttr(kInputDimRangesAttr, all.getDictionary(func.getContext()));
}

/// Runs the symbolic shape analysis on every function of `module` and
/// records, for each broadcasting op, which dynamic operand dims are proven
/// equal to their result dim (so they need no run-time version); also the
/// reshapes it proves and the casts whose exactness it assumes.
BroadcastFacts collectBroadcastFacts(ModuleOp module,
                                     ProvenReshapes &provenReshapes,
                                     ExactCastChecks &exactCastChecks) {
  BroadcastFacts facts;
  llvm::StringMap<DimRange> ranges = collectDimRanges(module);
  for (auto func : module.getOps<func::FuncOp>()) {
    if (func.isExternal())
      continue;
    ShapeAnalysis sa(func, ranges);
    sa.run();
    sa.mergeEqualSymbols();
    recordInputDimRanges(func, sa);
    for (auto &[op, elements] : sa.getExactCastChecks())
      exactCastChecks[op] = elements;
    func.walk([&](Operation *op) {
      if (isa<DynamicReshapeOp>(op) && sa.isReshapeProven(op))
        provenReshapes[op] = isSplitReshapeView(sa, op)
                                 ? *sa.getExpansion(op)
                                 : SmallVector<SmallVector<int64_t, 2>>();
      if (auto e = dyn_cast<ExpandOp>(op)) {
        bool allNonNegative = true;
        for (int64_t i = 0, n = e.getShape().getType().getDimSize(0); i < n;
             ++i)
          allNonNegative &= sa.isValueNonNegative(e.getShape(), i);
        if (allNonNegative)
          provenReshapes[op];
      }
      if (!isBroadcasting(op) || op->getNumResults() != 1)
        return;
      Value result = op->getResult(0);
      auto rt = dyn_cast<RankedTensorType>(result.getType());
      if (!rt)
        return;
      SmallVector<SmallVector<bool>> perOperand;
      bool any = false;
      for (Value v : op->getOperands()) {
        auto t = dyn_cast<RankedTensorType>(v.getType());
        SmallVector<bool> p;
        int64_t shift = t ? rt.getRank() - t.getRank() : 0;
        for (int64_t j = 0; t && j < t.getRank(); ++j) {
          bool same = t.isDynamicDim(j) && shift + j >= 0 &&
                      sa.isProvenEqual(v, j, result, j + shift);
          any |= same;
          p.push_back(same);
        }
        perOperand.push_back(std::move(p));
      }
      if (any)
        facts[op] = std::move(perOperand);
    });
  }
  return facts;
}

FailureOr<Value> lowerOp(OpBuilder &b, Operation *op, LoweringState &state) {
  // A post-op of a library call (markLibraryCalls): the call already wrote
  // its value into the chain operand's buffer.
  if (state.libraryCalls)
    if (auto idx = op->getAttrOfType<IntegerAttr>(kFusedIntoCallAttr))
      return op->getOperand(idx.getInt());
  if (auto c = dyn_cast<ConstantOp>(op))
    return arith::ConstantOp::create(b, c.getLoc(),
                                     cast<TypedAttr>(c.getValue()))
        .getResult();
  auto discOp = dyn_cast<DiscOpInterface>(op);
  if (!discOp)
    return noLowering(op);
  switch (discOp.getLoweringFamily()) {
  case LoweringFamily::Elementwise:
    return lowerElementwiseFamily(b, op, state);
  case LoweringFamily::Linear:
    return lowerLinearFamily(b, op, state);
  case LoweringFamily::Pooling:
    return lowerPoolingFamily(b, op, state);
  case LoweringFamily::Reduction:
    return lowerReductionFamily(b, op, state);
  case LoweringFamily::DataMovement:
    return lowerDataMovementFamily(b, op, state);
  case LoweringFamily::IndirectDataMovement:
    return lowerIndirectDataMovementFamily(b, op, state);
  }
  llvm_unreachable("unknown lowering family");
}

struct DiscLowerToLinalgPass
    : public disc::impl::DiscLowerToLinalgBase<DiscLowerToLinalgPass> {
  using DiscLowerToLinalgBase::DiscLowerToLinalgBase;

  void runOnOperation() override {
    // "cuda": the calls of the ops marked for cuBLAS/cuDNN
    // (CudaLibraryCalls.h), only those.
    bool cudaCalls = libraryCallsOption == "cuda";
    bool libraryCalls = libraryCallsOption == "onednn" || cudaCalls;
    if (!libraryCalls && libraryCallsOption != "none") {
      getOperation().emitError("library-calls must be 'onednn', 'cuda' or "
                               "'none', got '")
          << libraryCallsOption << "'";
      return signalPassFailure();
    }
    // Library calls and their post-ops, unless the driver marked them
    // already (disc-compile does, before taking the memory model).
    if (libraryCalls) {
      bool marked = false;
      getOperation()->walk(
          [&](Operation *op) { marked |= op->hasAttr(kLibraryCallAttr); });
      if (!marked)
        getOperation()->walk([&](func::FuncOp f) {
          if (cudaCalls)
            markCudaLibraryCalls(f);
          else
            markLibraryCalls(f);
        });
    }
    ProvenReshapes provenReshapes;
    ExactCastChecks exactCastChecks;
    BroadcastFacts facts =
        collectBroadcastFacts(getOperation(), provenReshapes, exactCastChecks);
    RuntimeChecks checks(getOperation());
    // Ops whose results nothing uses (the memory model counts them as
    // dead, MemoryModel::isDead) are erased first: lowered, a library call
    // would run and allocate for nothing (a call is not erased as dead).
    getOperation()->walk([&](func::FuncOp f) {
      for (Block &block : f.getBody())
        for (Operation &op : llvm::make_early_inc_range(llvm::reverse(block)))
          if (isa_and_nonnull<DiscDialect>(op.getDialect()) && op.use_empty() &&
              isMemoryEffectFree(&op))
            op.erase();
    });
    SmallVector<Operation *> ops;
    getOperation()->walk([&](Operation *op) {
      if (isa_and_nonnull<DiscDialect>(op->getDialect()))
        ops.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    bool failedAny = false;
    for (Operation *op : ops) {
      rewriter.setInsertionPoint(op);
      LoweringState state{&facts, provenReshapes, exactCastChecks, checks,
                          libraryCalls &&
                              (!cudaCalls || isLibraryCallUnit(op))};
      FailureOr<Value> lowered = lowerOp(rewriter, op, state);
      if (failed(lowered)) {
        failedAny = true;
        continue;
      }
      Value v =
          castTo(rewriter, op->getLoc(), *lowered, op->getResult(0).getType());
      rewriter.replaceOp(op, v);
    }
    checks.finish();
    if (failedAny)
      signalPassFailure();
  }
};

} // namespace
