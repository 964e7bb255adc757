//===- SqueezeExciteNhwc.cpp - disc-squeeze-excite-nhwc -------------------===//
//
// Squeeze-excite blocks between Conv calls on channels-last views
// (Passes.td).
//
//===----------------------------------------------------------------------===//
#include "disc/Dialect/Disc/IR/DiscDialect.h"
#include "disc/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Matchers.h"

namespace mlir::disc {
#define GEN_PASS_DEF_DISCSQUEEZEEXCITENHWC
#include "disc/Transforms/Passes.h.inc"
} // namespace mlir::disc

using namespace mlir;
using namespace mlir::disc;

namespace {

/// True when `v` is a Conv's value, possibly through a few elementwise ops
/// of the same type (its post-ops: bias, activation; x * sigmoid(x) is
/// followed through x).
bool isConvValue(Value v) {
  for (int step = 0; step < 8; ++step) {
    Operation *def = v.getDefiningOp();
    if (!def)
      return false;
    if (isa<ConvOp>(def))
      return true;
    // The ops disc-mark-library-calls fuses as post-ops (bias, residual,
    // Relu and clips, Sigmoid, Tanh, SiLU, HardSwish, GELU): the transpose
    // after them is a view only when the Conv writes the value.
    if (!isa<AddOp, MulOp, DivOp, MaxOp, MinOp, LogisticOp, TanhOp, ErfOp>(def))
      return false;
    Value next;
    for (Value operand : def->getOperands()) {
      if (operand.getType() != v.getType() ||
          matchPattern(operand, m_Constant()))
        continue;
      Operation *d = operand.getDefiningOp();
      if (!next || (d && !isa<LogisticOp>(d)))
        next = operand;
    }
    if (!next)
      return false;
    v = next;
  }
  return false;
}

/// True when `scale` is a per-channel factor of the rank-`r` value with
/// `channels` channels: [N or 1, C, 1, .., 1].
bool isChannelScale(Value scale, int64_t r, int64_t channels) {
  auto t = cast<RankedTensorType>(scale.getType());
  if (t.getRank() != r || t.getDimSize(1) != channels)
    return false;
  for (int64_t i = 2; i < r; ++i)
    if (t.getDimSize(i) != 1)
      return false;
  return true;
}

/// `t` with its dims in the order `perm`.
RankedTensorType permuted(RankedTensorType t, ArrayRef<int64_t> perm) {
  SmallVector<int64_t> shape;
  for (int64_t p : perm)
    shape.push_back(t.getDimSize(p));
  return t.clone(shape);
}

struct SqueezeExciteNhwcPass
    : public disc::impl::DiscSqueezeExciteNhwcBase<SqueezeExciteNhwcPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    // The entry block only: the NHWC views are made there. A pooling or
    // scale claimed by one value is not rewritten for another (the scale of
    // a 1x1 map can itself be such a value).
    Block &body = func.getBody().front();
    SmallVector<Value> found;
    llvm::SmallPtrSet<Operation *, 16> claimed;
    for (Operation &op : body) {
      if (op.getNumResults() != 1)
        continue;
      Value v = op.getResult(0);
      auto t = dyn_cast<RankedTensorType>(v.getType());
      if (!t || t.getRank() < 3 || t.getRank() > 5 || t.isDynamicDim(1) ||
          !t.getElementType().isF32() || v.use_empty() || !isConvValue(v) ||
          isChannelScale(v, t.getRank(), t.getDimSize(1)) ||
          !readersFit(v, t) || llvm::any_of(v.getUsers(), [&](Operation *user) {
            return claimed.contains(user);
          }))
        continue;
      for (Operation *user : v.getUsers())
        claimed.insert(user);
      found.push_back(v);
    }
    for (Value v : found)
      rewrite(v);
  }

  /// True when every reader of `v` (of type `t`) is a global pooling or a
  /// per-channel scale read only by Conv inputs, in `v`'s block.
  static bool readersFit(Value v, RankedTensorType t) {
    int64_t r = t.getRank(), c = t.getDimSize(1);
    for (Operation *user : v.getUsers()) {
      if (user->getBlock() != v.getParentBlock())
        return false;
      if (auto red = dyn_cast<ReduceOp>(user)) {
        // A global pooling: every spatial dim, nothing else.
        if (red.getInput() != v ||
            !llvm::equal(red.getDimensions(), llvm::seq<int64_t>(2, r)) ||
            (red.getKind() != ReduceKind::Mean &&
             red.getKind() != ReduceKind::Sum &&
             red.getKind() != ReduceKind::Max))
          return false;
        continue;
      }
      // The per-channel scale, read only by Conv inputs.
      auto mul = dyn_cast<MulOp>(user);
      if (!mul || mul.getType() != t || mul.getLhs() == mul.getRhs())
        return false;
      Value scale = mul.getLhs() == v ? mul.getRhs() : mul.getLhs();
      if (!isChannelScale(scale, r, c) || mul->use_empty())
        return false;
      for (OpOperand &use : mul->getUses())
        if (!isa<ConvOp>(use.getOwner()) || use.getOperandNumber() != 0)
          return false;
    }
    // Every reader is a pooling or a scale (a classifier's last Conv, read
    // only by its global pooling, too).
    return true;
  }

  /// Reads `v` through one transpose to channels-last: its global poolings
  /// reduce the spatial dims of that view, its per-channel scales multiply
  /// it (the scale viewed channels-last) and are transposed back for their
  /// Conv readers. disc-mark-library-calls turns the transposes next to the
  /// Conv calls into views.
  void rewrite(Value v) {
    auto t = cast<RankedTensorType>(v.getType());
    int64_t r = t.getRank();
    SmallVector<int64_t> toLast = {0}, toFirst = {0, r - 1};
    for (int64_t i = 2; i < r; ++i)
      toLast.push_back(i);
    toLast.push_back(1);
    for (int64_t i = 1; i < r - 1; ++i)
      toFirst.push_back(i);
    OpBuilder b(v.getContext());
    b.setInsertionPointAfterValue(v);
    auto last = [&](Value x) {
      auto xt = cast<RankedTensorType>(x.getType());
      return TransposeOp::create(b, x.getLoc(), permuted(xt, toLast), x, toLast)
          .getResult();
    };
    Value vt = last(v);
    SmallVector<int64_t> spatial =
        llvm::to_vector(llvm::seq<int64_t>(1, r - 1));
    for (Operation *user : llvm::to_vector(v.getUsers())) {
      if (user == vt.getDefiningOp())
        continue;
      b.setInsertionPoint(user);
      Value out;
      if (auto red = dyn_cast<ReduceOp>(user)) {
        auto rt = cast<RankedTensorType>(red.getType());
        if (!red.getKeepDims()) {
          out = ReduceOp::create(b, red.getLoc(), rt, red.getKind(), vt,
                                 spatial, false);
        } else {
          Value p = ReduceOp::create(b, red.getLoc(), permuted(rt, toLast),
                                     red.getKind(), vt, spatial, true);
          out = TransposeOp::create(b, red.getLoc(), rt, p, toFirst);
        }
      } else if (auto mul = dyn_cast<MulOp>(user)) {
        Value scale = mul.getLhs() == v ? mul.getRhs() : mul.getLhs();
        Value st = last(scale);
        Value m = MulOp::create(b, mul.getLoc(), permuted(t, toLast), vt, st);
        out = TransposeOp::create(b, mul.getLoc(), t, m, toFirst);
      } else {
        llvm_unreachable("readersFit admits poolings and scales only");
      }
      user->getResult(0).replaceAllUsesWith(out);
      user->erase();
      ++numRewritten;
    }
  }
};

} // namespace
