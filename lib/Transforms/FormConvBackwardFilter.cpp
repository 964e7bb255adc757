//===- FormConvBackwardFilter.cpp - disc-form-conv-backward-filter --------===//
//
// The filter gradient chain of disc.conv's gradient rule as one
// disc.conv_backward_filter (Passes.td).
//
//===----------------------------------------------------------------------===//
#include "disc/Dialect/Disc/IR/DiscDialect.h"
#include "disc/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Matchers.h"

namespace mlir::disc {
#define GEN_PASS_DEF_DISCFORMCONVBACKWARDFILTER
#include "disc/Transforms/Passes.h.inc"
} // namespace mlir::disc

using namespace mlir;
using namespace mlir::disc;

namespace {

/// True when `perm` swaps dims 0 and 1 and keeps the others.
bool swapsLeadingDims(ArrayRef<int64_t> perm) {
  if (perm.size() < 3 || perm[0] != 1 || perm[1] != 0)
    return false;
  for (size_t i = 2; i < perm.size(); ++i)
    if (perm[i] != static_cast<int64_t>(i))
      return false;
  return true;
}

/// The operand of `v`'s transpose swapping dims 0 and 1, or null.
Value unswapped(Value v) {
  auto t = v.getDefiningOp<TransposeOp>();
  return t && swapsLeadingDims(t.getPermutation()) ? t.getOperand() : Value();
}

/// True when `v` is the constant 1-D i64 tensor `values`.
bool isI64s(Value v, ArrayRef<int64_t> values) {
  DenseIntElementsAttr a;
  if (!matchPattern(v, m_Constant(&a)) ||
      a.getNumElements() != static_cast<int64_t>(values.size()))
    return false;
  for (auto [x, want] : llvm::zip(a.getValues<APInt>(), values))
    if (x.getSExtValue() != want)
      return false;
  return true;
}

/// The disc.conv_backward_filter replacing `out` = transpose(slice(conv(
/// transpose(x), transpose(g))), [1, 0, ..]) (ConvOp::buildGradient, one
/// group), or null when `out` is not that chain.
Operation *form(OpBuilder &b, TransposeOp out) {
  if (!swapsLeadingDims(out.getPermutation()))
    return nullptr;
  auto type = cast<RankedTensorType>(out.getType());
  auto slice = out.getOperand().getDefiningOp<SliceOp>();
  if (!slice || !type.hasStaticShape())
    return nullptr;
  auto conv = slice.getOperand().getDefiningOp<ConvOp>();
  if (!conv || conv.getFeatureGroupCount() != 1)
    return nullptr;
  int64_t r = type.getRank(), k = r - 2;
  SmallVector<int64_t> spatial, zeros(k, 0), ones(k, 1);
  for (int64_t i = 2; i < r; ++i)
    spatial.push_back(i);
  ArrayRef<int64_t> kernel = type.getShape().drop_front(2);
  if (slice.getAxes() != ArrayRef<int64_t>(spatial) ||
      !isI64s(slice.getStarts(), zeros) || !isI64s(slice.getEnds(), kernel) ||
      !isI64s(slice.getSteps(), ones))
    return nullptr;
  Value x = unswapped(conv.getInput()), g = unswapped(conv.getFilter());
  if (!x || !g)
    return nullptr;
  // The forward conv's strides are the swapped conv's dilations and its
  // dilations the strides; the pads are the same.
  b.setInsertionPoint(out);
  return ConvBackwardFilterOp::create(b, out.getLoc(), type, x, g,
                                      conv.getDilations(), conv.getStrides(),
                                      conv.getPadding());
}

struct FormConvBackwardFilterPass
    : public disc::impl::DiscFormConvBackwardFilterBase<
          FormConvBackwardFilterPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    SmallVector<TransposeOp> outs;
    func.walk([&](TransposeOp t) { outs.push_back(t); });
    OpBuilder b(func.getContext());
    for (TransposeOp out : outs) {
      Operation *f = form(b, out);
      if (!f)
        continue;
      // The chain's ops that nothing else reads go with it.
      SmallVector<Operation *> chain = {out};
      out->getResult(0).replaceAllUsesWith(f->getResult(0));
      for (size_t i = 0; i < chain.size(); ++i) {
        Operation *op = chain[i];
        if (!op->use_empty())
          continue;
        for (Value v : op->getOperands())
          if (Operation *def = v.getDefiningOp();
              def && !llvm::is_contained(chain, def))
            chain.push_back(def);
        op->erase();
      }
      ++numFormed;
    }
  }
};

} // namespace
