//===- FoldPadIntoWindow.cpp - disc-fold-pad-into-window -----------------===//
//
// A zero Pad in front of a Conv or an average pooling as the op's own
// padding (Passes.td).
//
//===----------------------------------------------------------------------===//
#include "disc/Dialect/Disc/IR/DiscDialect.h"
#include "disc/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::disc {
#define GEN_PASS_DEF_DISCFOLDPADINTOWINDOW
#include "disc/Transforms/Passes.h.inc"
} // namespace mlir::disc

using namespace mlir;
using namespace mlir::disc;

namespace {

/// The spatial pads `[lo_1..lo_k, hi_1..hi_k]` of `pad` when it pads a
/// rank-`rank` tensor with the constant 0 along the spatial dims only (the
/// pads constant, none on the batch and channels dims); nothing otherwise.
std::optional<SmallVector<int64_t>> spatialZeroPads(PadOp pad, int64_t rank) {
  if (!pad || pad.getMode() != PadMode::Constant)
    return std::nullopt;
  DenseIntElementsAttr pads;
  DenseFPElementsAttr value;
  if (!matchPattern(pad.getPads(), m_Constant(&pads)) ||
      !matchPattern(pad.getValue(), m_Constant(&value)) ||
      pads.getNumElements() != 2 * rank || !value.isSplat() ||
      !value.getSplatValue<APFloat>().isZero())
    return std::nullopt;
  SmallVector<int64_t> p = llvm::map_to_vector(
      pads.getValues<APInt>(), [](const APInt &v) { return v.getSExtValue(); });
  if (p[0] != 0 || p[1] != 0 || p[rank] != 0 || p[rank + 1] != 0 ||
      llvm::any_of(p, [](int64_t v) { return v < 0; }))
    return std::nullopt;
  SmallVector<int64_t> spatial;
  for (int64_t side = 0; side < 2; ++side)
    for (int64_t i = 2; i < rank; ++i)
      spatial.push_back(p[side * rank + i]);
  return spatial;
}

struct FoldPadIntoWindowPass
    : public disc::impl::DiscFoldPadIntoWindowBase<FoldPadIntoWindowPass> {
  void runOnOperation() override {
    llvm::SetVector<Operation *> pads;
    getOperation().walk([&](Operation *op) {
      if (!isa<ConvOp, PoolOp>(op))
        return;
      auto pad = op->getOperand(0).getDefiningOp<PadOp>();
      int64_t rank =
          cast<RankedTensorType>(op->getOperand(0).getType()).getRank();
      std::optional<SmallVector<int64_t>> p = spatialZeroPads(pad, rank);
      if (!p)
        return;
      Builder b(op->getContext());
      if (auto conv = dyn_cast<ConvOp>(op)) {
        SmallVector<int64_t> padding(conv.getPadding());
        if (padding.size() != p->size())
          return;
        for (auto [q, extra] : llvm::zip_equal(padding, *p))
          q += extra;
        conv.setPaddingAttr(b.getDenseI64ArrayAttr(padding));
      } else {
        auto pool = cast<PoolOp>(op);
        if (pool.getKind() != PoolKind::Avg || pool.getCeilMode() ||
            pool.getPadding().size() != p->size() ||
            llvm::any_of(pool.getPadding(), [](int64_t v) { return v != 0; }))
          return;
        pool.setPaddingAttr(b.getDenseI64ArrayAttr(*p));
        pool.setCountIncludePad(true);
      }
      op->setOperand(0, pad.getOperand());
      pads.insert(pad);
      ++numFolded;
    });
    for (Operation *pad : pads)
      if (pad->use_empty())
        pad->erase();
  }
};

} // namespace
