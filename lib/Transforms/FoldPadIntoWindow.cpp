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
      !value.getSplatValue<APFloat>().isPosZero())
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

/// The padding `op` (a Conv or pooling reading the padded tensor as its
/// input) has once `extra` (spatial `[lo.., hi..]`) is folded into it, or
/// nothing when it cannot take it: an average pooling takes it only without
/// padding or ceil_mode of its own and with every pad below the window (as
/// oneDNN's pooling, so that the call stays a call).
std::optional<SmallVector<int64_t>> foldedPadding(Operation *op,
                                                  ArrayRef<int64_t> extra) {
  if (auto conv = dyn_cast<ConvOp>(op)) {
    SmallVector<int64_t> padding(conv.getPadding());
    if (padding.size() != extra.size())
      return std::nullopt;
    for (auto [q, e] : llvm::zip_equal(padding, extra))
      q += e;
    return padding;
  }
  auto pool = dyn_cast<PoolOp>(op);
  if (!pool || pool.getKind() != PoolKind::Avg || pool.getCeilMode() ||
      pool.getPadding().size() != extra.size() ||
      llvm::any_of(pool.getPadding(), [](int64_t v) { return v != 0; }))
    return std::nullopt;
  ArrayRef<int64_t> window = pool.getWindow();
  int64_t k = window.size();
  for (int64_t i = 0; i < k; ++i)
    if (extra[i] >= window[i] || extra[k + i] >= window[i])
      return std::nullopt;
  return SmallVector<int64_t>(extra);
}

struct FoldPadIntoWindowPass
    : public disc::impl::DiscFoldPadIntoWindowBase<FoldPadIntoWindowPass> {
  void runOnOperation() override {
    SmallVector<PadOp> pads;
    getOperation().walk([&](PadOp pad) { pads.push_back(pad); });
    Builder b(&getContext());
    for (PadOp pad : pads) {
      int64_t rank = cast<RankedTensorType>(pad.getType()).getRank();
      std::optional<SmallVector<int64_t>> p = spatialZeroPads(pad, rank);
      if (!p || pad->use_empty())
        continue;
      // Every reader takes the padding, or the Pad stays as it is (folding
      // some readers would keep both the padded copy and its operand live).
      SmallVector<std::pair<Operation *, SmallVector<int64_t>>> folds;
      bool all = true;
      for (OpOperand &use : pad->getUses()) {
        std::optional<SmallVector<int64_t>> padding;
        if (use.getOperandNumber() == 0)
          padding = foldedPadding(use.getOwner(), *p);
        if (!padding) {
          all = false;
          break;
        }
        folds.push_back({use.getOwner(), std::move(*padding)});
      }
      if (!all)
        continue;
      for (auto &[op, padding] : folds) {
        if (auto conv = dyn_cast<ConvOp>(op)) {
          conv.setPaddingAttr(b.getDenseI64ArrayAttr(padding));
        } else {
          auto pool = cast<PoolOp>(op);
          pool.setPaddingAttr(b.getDenseI64ArrayAttr(padding));
          pool.setCountIncludePad(true);
        }
        op->setOperand(0, pad.getOperand());
        ++numFolded;
      }
      pad->erase();
    }
  }
};

} // namespace
