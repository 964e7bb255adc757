//===- MemoryModel.cpp - symbolic bytes, liveness and peak of a function --===//
//
// The per-op allocation rules mirror what the CPU pipeline realizes after
// one-shot bufferization, ownership-based deallocation and
// `optimize-allocation-liveness` (docs/memory.md).
//
//===----------------------------------------------------------------------===//
#include "disc/Transforms/MemoryModel.h"

#include "disc/Conversion/LibraryCallAttrs.h"
#include "disc/Dialect/Disc/IR/DiscDialect.h"
#include "disc/Transforms/Fusion.h"
#include "disc/Transforms/InPlaceState.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/Format.h"
#include <array>
#include <iterator>

using namespace mlir;
using namespace mlir::disc;

const char *mlir::disc::stringifyBufferKind(BufferKind kind) {
  // In the order of the enumerators.
  static constexpr const char *kNames[] = {"alloc",    "view",  "in-place",
                                           "external", "stack", "fused"};
  static_assert(std::size(kNames) == size_t(BufferKind::Fused) + 1);
  return kNames[size_t(kind)];
}

MemoryModel::MemoryModel(func::FuncOp func, ShapeAnalysis &shapes)
    : func(func), shapes(shapes), ctx(func.getContext()) {}

AffineExpr MemoryModel::cst(int64_t c) { return getAffineConstantExpr(c, ctx); }

AffineExpr MemoryModel::payloadBytes(Value v) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  if (!t)
    return cst(0);
  return payloadBytes(v, elementByteWidth(t.getElementType()));
}

AffineExpr MemoryModel::payloadBytes(Value v, int64_t elementBytes) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  if (!t)
    return cst(0);
  AffineExpr bytes = cst(elementBytes);
  SmallVector<AffineExpr> dims = shapes.getDims(v);
  for (int64_t i = 0; i < t.getRank(); ++i) {
    if (!t.isDynamicDim(i)) {
      bytes = bytes * t.getDimSize(i);
      continue;
    }
    if (i >= (int64_t)dims.size() || !dims[i]) {
      // No expression for this dim (the analysis did not reach the value):
      // the peak cannot be predicted; count nothing rather than guess.
      if (!missingDims)
        missingDims = v;
      return cst(0);
    }
    bytes = bytes * dims[i];
  }
  return shapes.getSolver().simplify(shapes.normalize(bytes));
}

AffineExpr MemoryModel::allocBytes(Value v) {
  return shapes.getSolver().simplify(payloadBytes(v) + kAllocPaddingBytes);
}

/// True when every step of a slice is a positive constant: the lowering
/// then makes the result a strided view of the operand.
static bool isViewSlice(SliceOp op) {
  DenseElementsAttr steps;
  if (!matchPattern(op.getSteps(), m_Constant(&steps)))
    return false;
  return llvm::all_of(steps.getValues<APInt>(),
                      [](const APInt &s) { return s.isStrictlyPositive(); });
}

/// Bytes of `v`'s tensor with its spatial dims (from dim 2) grown by
/// `grow[i]` elements: the padded copy of a conv or pool input.
static AffineExpr grownBytes(ShapeAnalysis &sa, Value v, ArrayRef<int64_t> grow,
                             Value &missing) {
  auto t = cast<RankedTensorType>(v.getType());
  SmallVector<AffineExpr> dims = sa.getDims(v);
  MLIRContext *ctx = v.getContext();
  AffineExpr bytes =
      getAffineConstantExpr(elementByteWidth(t.getElementType()), ctx);
  int64_t first = t.getRank() - grow.size();
  for (int64_t i = 0; i < t.getRank(); ++i) {
    AffineExpr d;
    if (!t.isDynamicDim(i))
      d = getAffineConstantExpr(t.getDimSize(i), ctx);
    else if (i < (int64_t)dims.size() && dims[i])
      d = dims[i];
    if (!d) {
      if (!missing)
        missing = v;
      return getAffineConstantExpr(0, ctx);
    }
    if (i >= first)
      d = d + grow[i - first];
    bytes = bytes * d;
  }
  return sa.getSolver().simplify(sa.normalize(bytes));
}

bool MemoryModel::isDead(Operation *op) {
  if (!deadComputed) {
    deadComputed = true;
    // Reverse program order: an op is live when the terminator or a live
    // op (or an op nested in one) uses one of its results.
    Block &body = func.getBody().front();
    llvm::DenseSet<Operation *> live;
    live.insert(body.getTerminator());
    for (Operation &top : llvm::reverse(body)) {
      if (!live.contains(&top) && !isMemoryEffectFree(&top) &&
          !top.hasTrait<OpTrait::IsTerminator>())
        live.insert(&top);
      if (!live.contains(&top)) {
        dead.insert(&top);
        continue;
      }
      top.walk([&](Operation *nested) {
        for (Value v : nested->getOperands())
          if (Operation *def = v.getDefiningOp())
            if (def->getBlock() == &body)
              live.insert(def);
      });
    }
  }
  return dead.contains(op);
}

OpMemory MemoryModel::describe(Operation *op) {
  OpMemory m;
  m.op = op;
  m.scratchBytes = cst(0);
  m.preScratchBytes = cst(0);
  if (isDead(op)) {
    // Nothing uses its results: the lowering's canonicalization erases it.
    for (Value r : op->getResults())
      m.results.push_back({r, BufferKind::External, cst(0), -1});
    return m;
  }
  auto add = [&](Value r, BufferKind kind, int operand = -1) {
    ResultMemory rm;
    rm.value = r;
    // Small static buffers that do not escape live on the stack
    // (disc-promote-small-buffers).
    if (kind == BufferKind::Alloc && isStackBuffer(r))
      kind = BufferKind::Stack;
    rm.kind = kind;
    rm.operand = operand;
    rm.bytes = kind == BufferKind::Alloc ? allocBytes(r) : cst(0);
    if (kind == BufferKind::Alloc)
      ++m.numAllocs;
    m.results.push_back(rm);
  };
  auto isSmallStatic = [&](AffineExpr payload) {
    if (!stackPlacement)
      return false;
    auto c = dyn_cast<AffineConstantExpr>(payload);
    return c && c.getValue() <= kMaxStackBufferBytes;
  };
  auto addScratch = [&](AffineExpr payload) {
    if (isSmallStatic(payload))
      return;
    m.scratchBytes = shapes.getSolver().simplify(m.scratchBytes + payload +
                                                 kAllocPaddingBytes);
    ++m.numAllocs;
  };
  auto addPreScratch = [&](AffineExpr payload, unsigned consumed) {
    if (isSmallStatic(payload))
      return;
    m.preScratchBytes = shapes.getSolver().simplify(
        m.preScratchBytes + payload + kAllocPaddingBytes);
    m.consumedByPreScratch.push_back(consumed);
    ++m.numAllocs;
  };
  // Spatial padding [lo..., hi...] as the growth of each spatial dim.
  auto padGrowth = [](ArrayRef<int64_t> pad) {
    int64_t k = pad.size() / 2;
    SmallVector<int64_t> grow;
    bool any = false;
    for (int64_t i = 0; i < k; ++i) {
      grow.push_back(pad[i] + pad[k + i]);
      any |= pad[i] != 0 || pad[k + i] != 0;
    }
    return std::make_pair(grow, any);
  };

  if (op->hasTrait<OpTrait::ConstantLike>()) {
    for (Value r : op->getResults())
      add(r, BufferKind::External);
    return m;
  }
  if (op->getNumRegions() != 0)
    describeRegions(op, m);
  if (isFusedProducer(op)) {
    // Read by a root written in place through it (Fusion.h).
    auto idx = op->getAttrOfType<IntegerAttr>(kInPlaceOperandAttrName);
    for (Value r : op->getResults())
      add(r, BufferKind::Fused, idx ? idx.getInt() : -1);
    return m;
  }
  // Written into the buffer of an operand it reads last (disc-fusion's
  // depthwise epilogues, Fusion.h).
  if (auto idx = op->getAttrOfType<IntegerAttr>(kInPlaceOperandAttrName)) {
    add(op->getResult(0), BufferKind::InPlace, idx.getInt());
    return m;
  }
  // A scatter's loop nest updates its `data` operand in place (the
  // lowering's destination): bufferization writes into data's buffer when
  // nothing else reads it, else into a copy.
  if (isa<ScatterNdOp, ScatterElementsOp>(op)) {
    Value data = op->getOperand(0);
    Operation *def = data.getDefiningOp();
    bool own =
        data.hasOneUse() && def && def->getParentOp() == op->getParentOp();
    if (own) {
      const OpMemory &dm = getOpMemory(def);
      own = dm.results[cast<OpResult>(data).getResultNumber()].kind ==
            BufferKind::Alloc;
    }
    add(op->getResult(0), own ? BufferKind::InPlace : BufferKind::Alloc,
        own ? 0 : -1);
    return m;
  }
  // A state update written into the state's buffer (InPlaceState.h), or a
  // MatMul call that writes it, accumulating the update into the state.
  auto postAttrs = op->getAttrOfType<DenseI64ArrayAttr>(kPostOpAttrsAttr);
  if (op->hasAttr(kInPlaceStateAttrName) ||
      (isa<DotGeneralOp>(op) && postAttrs && !postAttrs.empty() &&
       (postAttrs[0] & kMatmulAccumulateFlag))) {
    add(op->getResult(0), BufferKind::External);
    return m;
  }
  // A post-op fused into the library call before it (markLibraryCalls in
  // DiscToLinalg/LibraryCalls.h): the call wrote this value into the
  // chain operand's buffer.
  if (auto idx = op->getAttrOfType<IntegerAttr>("disc.fused_into_call")) {
    add(op->getResult(0), BufferKind::InPlace, idx.getInt());
    return m;
  }
  if (auto reshape = dyn_cast<DynamicReshapeOp>(op)) {
    // A proven reshape that only splits dims is a tensor.expand_shape: a
    // view of any operand, sizes as index values.
    if (isSplitReshapeView(shapes, reshape)) {
      add(reshape.getResult(), BufferKind::View, 0);
      return m;
    }
    // tensor.reshape of a dense buffer is a view; its index shape operand
    // is a small buffer unless every dim is static (then a constant).
    // Bufferization copies a strided source (a slice view) first.
    auto t = cast<RankedTensorType>(reshape.getType());
    if (!t.hasStaticShape())
      addScratch(cst(8 * t.getRank()));
    if (isIdentityLayout(reshape.getOperand()))
      add(reshape.getResult(), BufferKind::View, 0);
    else
      add(reshape.getResult(), BufferKind::Alloc);
    return m;
  }
  if (isa<ConcatenateOp>(op) && op->hasAttr(kNhwcConcatAttr)) {
    // A Concat of NHWC data (markLibraryCalls): its copies run on
    // tensor.reshape views of every operand and of the result, each with
    // an index shape operand (a small buffer unless the dims are static).
    auto t = cast<RankedTensorType>(op->getResult(0).getType());
    if (!t.hasStaticShape())
      for (unsigned i = 0, e = op->getNumOperands() + 1; i < e; ++i)
        addScratch(cst(8 * t.getRank()));
    add(op->getResult(0), BufferKind::Alloc);
    return m;
  }
  if (isa<TransposeOp>(op) && op->hasAttr(kNhwcViewAttr)) {
    // A transpose next to a Conv call reading or writing NHWC
    // (markLibraryCalls): a tensor.reshape view of its dense operand.
    auto t = cast<RankedTensorType>(op->getResult(0).getType());
    if (!t.hasStaticShape())
      addScratch(cst(8 * t.getRank()));
    add(op->getResult(0), BufferKind::View, 0);
    return m;
  }
  if (auto expand = dyn_cast<ExpandOp>(op)) {
    // An expand that broadcasts nothing lowers to an identity
    // linalg.generic, which canonicalization folds away: a view.
    add(expand.getResult(),
        isIdentityExpand(expand) ? BufferKind::View : BufferKind::Alloc, 0);
    return m;
  }
  if (auto conv = dyn_cast<ConvOp>(op)) {
    // lowerConv: a zero-padded copy of the input (when any pad is
    // non-zero; a depthwise one disc-fusion chose as loops reads its input
    // in place), then the result. A library call pads inside oneDNN; its
    // temporaries are added by the runtime (toJson, "library_calls").
    auto [grow, any] = padGrowth(conv.getPadding());
    if (any && !op->hasAttr("disc.library_call") &&
        !op->hasAttr(kDepthwiseLoopsAttrName))
      addPreScratch(grownBytes(shapes, conv.getInput(), grow, missingDims), 0);
    add(conv.getResult(), BufferKind::Alloc);
    return m;
  }
  if (isa<PoolOp>(op) && op->hasAttr("disc.library_call")) {
    // oneDNN's pooling (lowerPoolToLibraryCall): the result; the runtime
    // adds the call's temporaries (toJson, "library_calls").
    add(op->getResult(0), BufferKind::Alloc);
    return m;
  }
  if (auto pool = dyn_cast<PoolOp>(op)) {
    // lowerPool: for an average, a padded copy of the input (when any pad
    // is non-zero, or ceil_mode adds `extra` past the end; max pooling reads
    // the input in place), then the result and the window operand of the
    // window reduction (never read; static, so on the stack when small).
    auto [grow, any] = padGrowth(pool.getPadding());
    int64_t k = grow.size();
    SmallVector<int64_t> lohi = grow;
    bool anyExtra = false;
    if (pool.getCeilMode() && pool.getKind() == PoolKind::Avg) {
      // extra_i = max(0, (O_i - 1) * s + dil * (K - 1) + 1 - (D_i + lo +
      // hi)) < s (O_i counts the windows rounding up): exact when D_i and
      // O_i are constants, else s - 1, an upper bound (and a pad op whatever
      // its run-time value).
      auto in = cast<RankedTensorType>(pool.getInput().getType());
      SmallVector<AffineExpr> id = shapes.getDims(pool.getInput());
      SmallVector<AffineExpr> od = shapes.getDims(pool.getResult());
      auto constDim = [](RankedTensorType t, ArrayRef<AffineExpr> d,
                         int64_t i) -> std::optional<int64_t> {
        if (!t.isDynamicDim(i))
          return t.getDimSize(i);
        if (i < (int64_t)d.size())
          if (auto c = dyn_cast_or_null<AffineConstantExpr>(d[i]))
            return c.getValue();
        return std::nullopt;
      };
      for (int64_t i = 0; i < k; ++i) {
        int64_t r = in.getRank() - k + i;
        int64_t s = pool.getStrides()[i], dil = pool.getDilations()[i];
        std::optional<int64_t> d = constDim(in, id, r),
                               o = constDim(pool.getType(), od, r);
        int64_t extra = s - 1;
        if (d && o)
          extra = std::max<int64_t>(0, (*o - 1) * s +
                                           dil * (pool.getWindow()[i] - 1) + 1 -
                                           (*d + grow[i]));
        else
          m.upperBound = anyExtra = true;
        anyExtra |= extra != 0;
        grow[i] += extra;
      }
    }
    if ((any || anyExtra) && pool.getKind() == PoolKind::Avg)
      addPreScratch(grownBytes(shapes, pool.getInput(), grow, missingDims), 0);
    add(pool.getResult(), BufferKind::Alloc);
    Type elt = pool.getType().getElementType();
    int64_t window = elementByteWidth(elt);
    for (int64_t w : pool.getWindow())
      window *= w;
    AffineExpr windowBytes =
        isSmallStatic(cst(window)) ? cst(0) : cst(window + kAllocPaddingBytes);
    if (!isSmallStatic(cst(window)))
      addScratch(cst(window));
    // An average that does not count the padding (or whose ceil_mode
    // windows overhang) divides by per-position counts: after the padded
    // input is freed, a tensor of ones over the spatial dims, its padded
    // copies (each freed after the next) and the counts over the output's
    // spatial dims are allocated in turn, the last with a window operand.
    if (pool.getKind() == PoolKind::Avg &&
        (!pool.getCountIncludePad() || anyExtra)) {
      auto spatial = [&](Value v, ArrayRef<int64_t> g) {
        auto t = cast<RankedTensorType>(v.getType());
        SmallVector<AffineExpr> d = shapes.getDims(v);
        AffineExpr e = cst(elementByteWidth(t.getElementType()));
        for (int64_t i = t.getRank() - k; i < t.getRank(); ++i) {
          AffineExpr x = !t.isDynamicDim(i)              ? cst(t.getDimSize(i))
                         : i < (int64_t)d.size() && d[i] ? d[i]
                                                         : AffineExpr();
          if (!x) {
            missingDims = v;
            return cst(0);
          }
          e = e * (g.empty() ? x : x + g[i - (t.getRank() - k)]);
        }
        return shapes.getSolver().simplify(shapes.normalize(e) +
                                           kAllocPaddingBytes);
      };
      AffineExpr ones = spatial(pool.getInput(), {});
      AffineExpr counts = spatial(pool.getResult(), {});
      ShapeConstraintSolver &solver = shapes.getSolver();
      SmallVector<AffineExpr> chain = {ones};
      // Counted padding: ones padded with ones, then ceil_mode's extra
      // with zeros; else one pad with zeros.
      bool twoPads = pool.getCountIncludePad() && anyExtra &&
                     llvm::any_of(lohi, [](int64_t g) { return g != 0; });
      if (twoPads)
        chain.push_back(spatial(pool.getInput(), lohi));
      if (any || anyExtra)
        chain.push_back(spatial(pool.getInput(), grow));
      for (size_t i = 0; i + 1 < chain.size(); ++i)
        m.postPhaseBytes.push_back(solver.simplify(chain[i] + chain[i + 1]));
      m.postPhaseBytes.push_back(
          solver.simplify(chain.back() + counts + windowBytes));
      m.numAllocs += chain.size() + 1 + (windowBytes != cst(0));
    }
    return m;
  }
  if (isa<ConvBackwardFilterOp>(op) ||
      (isa<ConvTransposeOp>(op) && op->hasAttr("disc.library_call"))) {
    // oneDNN's deconvolution or backward weights: only the result; its
    // temporaries are added by the runtime (toJson, "library_calls").
    add(op->getResult(0), BufferKind::Alloc);
    return m;
  }
  if (auto ct = dyn_cast<ConvTransposeOp>(op)) {
    // lowerConvTranspose: the input spread with the strides into a zero
    // tensor Z (consumes the input), the flipped filter, then the result.
    auto xt = cast<RankedTensorType>(ct.getInput().getType());
    auto ft = cast<RankedTensorType>(ct.getFilter().getType());
    auto rt = cast<RankedTensorType>(ct.getType());
    int64_t k = rt.getRank() - 2;
    ArrayRef<int64_t> strides = ct.getStrides(), dil = ct.getDilations(),
                      pad = ct.getPadding();
    SmallVector<AffineExpr> xd = shapes.getDims(ct.getInput());
    SmallVector<AffineExpr> od = shapes.getDims(ct.getResult());
    auto dimOf = [&](RankedTensorType t, ArrayRef<AffineExpr> d, int64_t i) {
      if (!t.isDynamicDim(i))
        return cst(t.getDimSize(i));
      if (i < (int64_t)d.size() && d[i])
        return d[i];
      if (!missingDims)
        missingDims = ct.getResult();
      return cst(0);
    };
    if (!ft.hasStaticShape()) {
      for (Value r : op->getResults())
        add(r, BufferKind::Alloc);
      return m;
    }
    AffineExpr z = cst(elementByteWidth(rt.getElementType())) *
                   dimOf(xt, xd, 0) * dimOf(xt, xd, 1);
    for (int64_t i = 0; i < k; ++i) {
      int64_t span = (ft.getDimSize(2 + i) - 1) * dil[i];
      int64_t lo = pad[i], hi = pad[k + i];
      int64_t outPad = 0;
      if (auto attr = ct.getOutputPadding(); i < (int64_t)attr.size())
        outPad = attr[i];
      // zLen = max(O + span + max(0, lo), span + max(0, -lo) + (D-1)*s + 1);
      // the difference of the two is span + output_padding - hi.
      AffineExpr len =
          span + outPad - hi >= 0
              ? dimOf(rt, od, 2 + i) + span + std::max<int64_t>(0, lo)
              : (dimOf(xt, xd, 2 + i) - 1) * strides[i] + span +
                    std::max<int64_t>(0, -lo) + 1;
      z = z * len;
    }
    addPreScratch(shapes.getSolver().simplify(shapes.normalize(z)), 0);
    int64_t wt = elementByteWidth(rt.getElementType());
    for (int64_t d : ft.getShape())
      wt *= d;
    addScratch(cst(wt));
    add(ct.getResult(), BufferKind::Alloc);
    return m;
  }
  if (auto arg = dyn_cast<ArgReduceOp>(op)) {
    // lowerArgReduce: the value accumulator (the result's shape, the
    // operand's element type) beside the index result; it dies with the op.
    addScratch(payloadBytes(
        arg.getResult(),
        elementByteWidth(cast<RankedTensorType>(op->getOperand(0).getType())
                             .getElementType())));
    add(arg.getResult(), BufferKind::Alloc);
    return m;
  }
  if (isa<RandomUniformOp>(op)) {
    // lowerRandomUniform: the MT19937 state (624 x i32) carried through
    // the loop, a writable copy of a constant, freed after the op.
    addScratch(cst(624 * 4));
    add(op->getResult(0), BufferKind::Alloc);
    return m;
  }
  if (auto sort = dyn_cast<ArgSortOp>(op)) {
    // lowerArgSort: each element's rank (i64, the result's shape), then the
    // inverted permutation into the result; the ranks die with the op.
    addScratch(payloadBytes(sort.getResult()));
    add(sort.getResult(), BufferKind::Alloc);
    return m;
  }
  if (auto slice = dyn_cast<SliceOp>(op)) {
    add(slice.getResult(),
        isViewSlice(slice) ? BufferKind::View : BufferKind::Alloc, 0);
    return m;
  }
  for (Value r : op->getResults())
    add(r, isa<RankedTensorType>(r.getType()) ? BufferKind::Alloc
                                              : BufferKind::External);
  // A loop's carried tensor: bufferization copies the init value into a
  // buffer of its own when the init is read after the loop, and that copy
  // may live as long as the result; counted as part of the result's buffer
  // (an upper bound, as the regions are).
  if (isa<scf::ForOp, scf::WhileOp>(op) && !m.regionBytes.empty())
    for (ResultMemory &rm : m.results)
      if (rm.kind == BufferKind::Alloc)
        rm.bytes = shapes.getSolver().simplify(rm.bytes * 2);
  return m;
}

bool MemoryModel::isIdentityExpand(Operation *op) {
  auto expand = dyn_cast<ExpandOp>(op);
  if (!expand)
    return false;
  Value in = expand.getOperand();
  auto it = cast<RankedTensorType>(in.getType());
  auto rt = cast<RankedTensorType>(expand.getType());
  if (it != rt)
    return false;
  // lowerElementwise's classification: every dim maps to itself.
  for (int64_t j = 0; j < rt.getRank(); ++j) {
    if (rt.getDimSize(j) == 1 || !it.isDynamicDim(j))
      continue;
    if (!shapes.isProvenEqual(in, j, expand.getResult(), j))
      return false;
  }
  return true;
}

AffineExpr MemoryModel::regionAllocBytes(Region &r,
                                         SmallVectorImpl<Operation *> &calls) {
  ShapeConstraintSolver &solver = shapes.getSolver();
  AffineExpr sum = cst(0);
  for (Block &block : r)
    for (Operation &nested : block.without_terminator()) {
      const OpMemory &m = getOpMemory(&nested);
      sum = sum + m.preScratchBytes + m.scratchBytes;
      for (AffineExpr e : m.postPhaseBytes)
        sum = sum + e;
      for (const ResultMemory &rm : m.results)
        if (rm.kind == BufferKind::Alloc)
          sum = sum + rm.bytes;
      for (AffineExpr e : m.regionBytes)
        sum = sum + e;
      if (nested.hasAttr("disc.library_call"))
        calls.push_back(&nested);
      for (auto [call, alt] : m.regionCalls)
        calls.push_back(call);
    }
  return solver.simplify(sum);
}

void MemoryModel::describeRegions(Operation *op, OpMemory &m) {
  bool allocates = false;
  op->walk([&](Operation *nested) {
    if (nested != op &&
        (llvm::any_of(nested->getResultTypes(),
                      [](Type t) { return isa<RankedTensorType>(t); }) ||
         nested->hasAttr("disc.library_call")))
      allocates = true;
  });
  if (!allocates)
    return;
  // What ownership-based deallocation realizes: a region frees what it
  // allocates before it ends, except the values it yields, which become
  // the op's results (counted by the op's point) or, in a loop, the next
  // iteration's carried values (of the results' sizes: the shape analysis
  // gives a carried value whose shape changes per iteration fresh dims).
  // One alternative per branch of an scf.if, one for a loop's regions.
  auto addAlternative = [&](ArrayRef<Region *> regions) {
    SmallVector<Operation *> calls;
    AffineExpr bytes = cst(0);
    for (Region *r : regions)
      bytes = bytes + regionAllocBytes(*r, calls);
    unsigned alt = m.regionBytes.size();
    m.regionBytes.push_back(shapes.getSolver().simplify(bytes));
    for (Operation *call : calls)
      m.regionCalls.push_back({call, alt});
  };
  if (isa<scf::IfOp>(op)) {
    for (Region &r : op->getRegions())
      addAlternative({&r});
    return;
  }
  SmallVector<Region *> all;
  for (Region &r : op->getRegions())
    all.push_back(&r);
  addAlternative(all);
}

bool MemoryModel::isIdentityLayout(Value v) {
  // Structural (no getOpMemory): describe() asks this about its operands.
  for (int guard = 0; guard < 1 << 20; ++guard) {
    Operation *def = v.getDefiningOp();
    if (!def)
      return true;
    // The lowering makes a view of a slice in a region (an If branch, a
    // Loop body) too.
    if (auto slice = dyn_cast<SliceOp>(def))
      return !isViewSlice(slice);
    if (def->getParentOp() != func.getOperation())
      return true;
    // A split of dims keeps its operand's layout.
    if (isIdentityExpand(def) || isSplitReshapeView(shapes, def)) {
      v = def->getOperand(0);
      continue;
    }
    return true;
  }
  return true;
}

bool MemoryModel::escapes(Value v) {
  // Forward through the views and identity expands that keep `v`'s buffer
  // (structural, like isIdentityLayout).
  Operation *term = func.getBody().front().getTerminator();
  SmallVector<Value> work = {v};
  llvm::DenseSet<Value> seen;
  while (!work.empty()) {
    Value x = work.pop_back_val();
    if (!seen.insert(x).second)
      continue;
    for (OpOperand &use : x.getUses()) {
      Operation *user = use.getOwner();
      if (user == term)
        return true;
      // A post-op fused into the library call that made `x` writes into
      // x's buffer (markLibraryCalls), and so does an op written in place
      // (disc-fusion, Fusion.h): its result is that buffer.
      auto idx = user->getAttrOfType<IntegerAttr>("disc.fused_into_call");
      if (!idx)
        idx = user->getAttrOfType<IntegerAttr>(kInPlaceOperandAttrName);
      if (idx && idx.getInt() == use.getOperandNumber() &&
          user->getNumResults() == 1) {
        work.push_back(user->getResult(0));
        continue;
      }
      if (use.getOperandNumber() != 0 || user->getNumResults() != 1)
        continue;
      bool view = false;
      if (auto reshape = dyn_cast<DynamicReshapeOp>(user))
        view = isIdentityLayout(x) || isSplitReshapeView(shapes, reshape);
      else if (isa<TransposeOp>(user) && user->hasAttr(kNhwcViewAttr))
        view = true;
      else if (auto slice = dyn_cast<SliceOp>(user))
        view = isViewSlice(slice);
      else
        view = isIdentityExpand(user);
      if (view)
        work.push_back(user->getResult(0));
    }
  }
  return false;
}

bool MemoryModel::isStackBuffer(Value v) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  if (!stackPlacement || !t || !t.hasStaticShape())
    return false;
  // disc-promote-small-buffers moves the allocations of the entry block
  // only: not those in a region, among them the buffers an scf op yields.
  Operation *def = v.getDefiningOp();
  if (!def || def->getParentOp() != func.getOperation() ||
      isa<scf::IfOp, scf::ForOp, scf::WhileOp>(def))
    return false;
  int64_t bytes = t.getNumElements() * elementByteWidth(t.getElementType());
  return bytes <= kMaxStackBufferBytes && !escapes(v);
}

const OpMemory &MemoryModel::getOpMemory(Operation *op) {
  // Entries are heap-allocated: describe() recurses through operands, and
  // references handed out stay valid while the map grows.
  auto it = cache.find(op);
  if (it != cache.end())
    return *it->second;
  auto m = std::make_unique<OpMemory>(describe(op));
  OpMemory &ref = *m;
  cache[op] = std::move(m);
  return ref;
}

Value MemoryModel::getViewSource(Value v) {
  for (int guard = 0; guard < 1 << 20; ++guard) {
    Operation *def = v.getDefiningOp();
    if (!def || def->getParentOp() != func.getOperation())
      return v;
    const ResultMemory &rm =
        getOpMemory(def).results[cast<OpResult>(v).getResultNumber()];
    if (rm.kind != BufferKind::View)
      return v;
    v = def->getOperand(rm.operand);
  }
  return v;
}

SmallVector<Operation *> MemoryModel::programOrder() {
  SmallVector<Operation *> order;
  for (Operation &op : func.getBody().front().without_terminator())
    order.push_back(&op);
  return order;
}

Value MemoryModel::getBufferRoot(Value v) {
  // Follow views and in-place updates to the allocating result.
  for (int guard = 0; guard < 1 << 20; ++guard) {
    Operation *def = v.getDefiningOp();
    if (!def || def->getParentOp() != func.getOperation())
      return Value();
    const OpMemory &m = getOpMemory(def);
    const ResultMemory &rm = m.results[cast<OpResult>(v).getResultNumber()];
    switch (rm.kind) {
    case BufferKind::Alloc:
      return v;
    case BufferKind::External:
    case BufferKind::Stack:
    case BufferKind::Fused:
      if (!writesOperandBuffer(rm))
        return Value();
      [[fallthrough]];
    case BufferKind::View:
    case BufferKind::InPlace:
      v = def->getOperand(rm.operand);
      continue;
    }
  }
  return Value();
}

/// Whether `e` is >= 0 for every value of its symbols (>= 0): built from
/// non-negative constants and symbols by +, *, floordiv and ceildiv by
/// positive constants, and mod (>= 0 whatever its left side).
static bool isStructurallyNonNegative(AffineExpr e) {
  switch (e.getKind()) {
  case AffineExprKind::Constant:
    return cast<AffineConstantExpr>(e).getValue() >= 0;
  case AffineExprKind::SymbolId:
  case AffineExprKind::Mod:
    return true;
  case AffineExprKind::DimId:
    return false;
  default:
    break;
  }
  auto b = cast<AffineBinaryOpExpr>(e);
  if (e.getKind() != AffineExprKind::Add &&
      e.getKind() != AffineExprKind::Mul) {
    auto c = dyn_cast<AffineConstantExpr>(b.getRHS());
    if (!c || c.getValue() <= 0)
      return false;
  }
  return isStructurallyNonNegative(b.getLHS()) &&
         isStructurallyNonNegative(b.getRHS());
}

MemoryProfile MemoryModel::profile(ArrayRef<Operation *> order) {
  MemoryProfile p;
  p.order.assign(order.begin(), order.end());
  ShapeConstraintSolver &solver = shapes.getSolver();
  unsigned n = order.size();
  llvm::DenseMap<Value, unsigned> bufferIndex;
  // Allocations in order; live ranges extended by every use.
  for (auto [i, op] : llvm::enumerate(order)) {
    const OpMemory &m = getOpMemory(op);
    for (const ResultMemory &rm : m.results) {
      if (rm.kind != BufferKind::Alloc)
        continue;
      bufferIndex[rm.value] = p.buffers.size();
      p.buffers.push_back({rm.value, rm.bytes, (unsigned)i, (unsigned)i});
    }
    p.numAllocs += m.numAllocs;
  }
  auto use = [&](Value v, unsigned at) {
    Value root = getBufferRoot(v);
    if (!root)
      return;
    auto it = bufferIndex.find(root);
    assert(it != bufferIndex.end() && "use of a buffer not in the order");
    BufferLiveRange &b = p.buffers[it->second];
    assert(b.def <= at && "order does not respect a dependency");
    b.lastUse = std::max(b.lastUse, at);
  };
  // A fused producer's operands are read when its consumer runs.
  llvm::DenseMap<Operation *, unsigned> position;
  for (auto [i, op] : llvm::enumerate(order))
    position[op] = i;
  for (auto [i, op] : llvm::enumerate(order)) {
    unsigned at = i;
    if (isFusedProducer(op)) {
      auto it = position.find(getFusionRoot(op));
      assert(it != position.end() && "fused consumer not in the order");
      at = it->second;
    }
    op->walk([&](Operation *nested) {
      for (Value v : nested->getOperands())
        if (v.getParentRegion() == &func.getBody())
          use(v, at);
    });
  }
  // A result returned as its own buffer stays live past the end; any other
  // returned value (a view, an input, a constant) is cloned at the return
  // (the function must own its results), after which its buffer dies.
  Operation *term = func.getBody().front().getTerminator();
  // (A reshape's result is a view even when the reshape copied a strided
  // source: the copy is the buffer, the returned value a view of it.)
  // (A post-op fused into a library call is in-place: its value is the
  // call's own buffer.)
  auto returnsOwned = [&](Value v) {
    Value root = getBufferRoot(v);
    while (Operation *def = v.getDefiningOp()) {
      if (def->getParentOp() != func.getOperation() ||
          !(def->hasAttr("disc.fused_into_call") ||
            def->hasAttr(kInPlaceOperandAttrName)))
        break;
      const OpMemory &m = getOpMemory(def);
      const ResultMemory &rm = m.results[cast<OpResult>(v).getResultNumber()];
      if (!writesOperandBuffer(rm))
        break;
      v = def->getOperand(rm.operand);
    }
    return root && root == v && !v.getDefiningOp<DynamicReshapeOp>();
  };
  for (Value v : term->getOperands())
    use(v, returnsOwned(v) ? n + 1 : n);

  // Live bytes per program point.
  SmallVector<SmallVector<unsigned>> freedAfter(n + 2);
  for (auto [k, b] : llvm::enumerate(p.buffers))
    freedAfter[b.lastUse].push_back(k);
  AffineExpr live = cst(0);
  for (auto [i, op] : llvm::enumerate(order)) {
    p.liveBefore.push_back(live);
    const OpMemory &m = getOpMemory(op);
    SmallVector<AffineExpr, 2> points;
    AffineExpr at = live;
    llvm::DenseSet<unsigned> freedEarly;
    if (!m.consumedByPreScratch.empty()) {
      // The padded copies are made first; an operand read only through
      // them is freed right after its copy when this is its last use.
      at = solver.simplify(at + m.preScratchBytes);
      points.push_back(at);
      llvm::DenseSet<Value> otherUses;
      for (auto [k, v] : llvm::enumerate(op->getOperands()))
        if (!llvm::is_contained(m.consumedByPreScratch, (unsigned)k))
          if (Value root = getBufferRoot(v))
            otherUses.insert(root);
      op->walk([&](Operation *nested) {
        if (nested != op)
          for (Value v : nested->getOperands())
            if (Value root = getBufferRoot(v))
              otherUses.insert(root);
      });
      for (unsigned k : m.consumedByPreScratch) {
        Value root = getBufferRoot(op->getOperand(k));
        if (!root || otherUses.contains(root))
          continue;
        unsigned b = bufferIndex.lookup(root);
        if (p.buffers[b].lastUse == i && freedEarly.insert(b).second)
          at = at - p.buffers[b].bytes;
      }
    }
    at = at + m.scratchBytes;
    for (const ResultMemory &rm : m.results)
      if (rm.kind == BufferKind::Alloc)
        at = at + rm.bytes;
    at = solver.simplify(at);
    points.push_back(at);
    p.liveAt.push_back(at);
    // What the op's regions hold while they run, per alternative.
    for (AffineExpr r : m.regionBytes)
      points.push_back(solver.simplify(at + r));
    // Later temporaries of the op, after its pre-scratch is freed.
    for (AffineExpr phase : m.postPhaseBytes)
      points.push_back(
          solver.simplify(at - m.scratchBytes - m.preScratchBytes + phase));
    p.livePoints.push_back(points);
    live = at - m.scratchBytes - m.preScratchBytes;
    for (unsigned k : freedAfter[i])
      if (!freedEarly.contains(k))
        live = live - p.buffers[k].bytes;
    live = solver.simplify(live);
  }
  // The clones of the returned values that are not owned buffers: each
  // is its payload exactly (no alignment padding) when it copies a dense
  // buffer, an aligned allocation (with padding) when it copies a strided
  // view into a dense one; the buffer it was copied from dies after its
  // last copy.
  for (auto [k, v] : llvm::enumerate(term->getOperands())) {
    if (returnsOwned(v) || !isa<RankedTensorType>(v.getType()))
      continue;
    // Returned as the state input's own buffer (InPlaceState.h).
    if (Operation *def = v.getDefiningOp();
        def && def->hasAttr(kInPlaceStateAttrName))
      continue;
    Value root = getBufferRoot(v);
    live = solver.simplify(
        live + (isIdentityLayout(v) ? payloadBytes(v) : allocBytes(v)));
    p.exitPoints.push_back(live);
    ++p.numAllocs;
    if (!root)
      continue;
    bool laterUse = false;
    for (Value w : term->getOperands().drop_front(k + 1))
      laterUse |= getBufferRoot(w) == root;
    if (laterUse)
      continue;
    const BufferLiveRange &b = p.buffers[bufferIndex.lookup(root)];
    if (b.lastUse == n)
      live = solver.simplify(live - b.bytes);
  }
  p.liveAtExit = live;

  // Peak candidates: distinct live bytes, minus the ones another candidate
  // provably covers (the difference is a polynomial with non-negative
  // coefficients over non-negative symbols).
  SmallVector<std::pair<unsigned, AffineExpr>> points;
  for (auto [i, ps] : llvm::enumerate(p.livePoints))
    for (AffineExpr e : ps)
      points.push_back({(unsigned)i, e});
  for (AffineExpr e : p.exitPoints)
    points.push_back({n, e});
  // A necessary condition first, from values: a polynomial with
  // non-negative coefficients over non-negative symbols is >= 0 at every
  // point where the symbols are >= 0, so `big` covers `small` only where
  // the values of its canonical form are >= those of `small`'s at such
  // points (canonical forms are exact identities). One value per point and
  // sample, then integer comparisons; only the pairs that pass every sample
  // build the difference. The answers are those of the check alone.
  // The first sample has every symbol at 0 (a negative constant term);
  // in the others each symbol takes its own value, log-uniform in
  // [0, 1023] (deterministic: a multiplicative hash of symbol and sample),
  // so that some symbols are small while others are large.
  constexpr unsigned kSamples = 16;
  unsigned numSymbols = solver.getNumSymbols();
  SmallVector<SmallVector<int64_t>> sampleBindings(kSamples);
  for (unsigned s = 0; s < kSamples; ++s)
    for (unsigned k = 0; k < numSymbols; ++k) {
      uint64_t h = (uint64_t(k) * kSamples + s + 1) * 0x9E3779B97F4A7C15ull;
      h ^= h >> 31;
      h *= 0xBF58476D1CE4E5B9ull;
      h ^= h >> 27;
      int64_t v = s == 0 ? 0 : int64_t((h >> 8) % (uint64_t(1) << (h % 11)));
      sampleBindings[s].push_back(v);
    }
  using Values = std::array<std::optional<int64_t>, kSamples>;
  SmallVector<Values> values;
  values.reserve(points.size());
  for (auto &pt : points) {
    AffineExpr canonical = solver.simplify(pt.second);
    Values v;
    for (unsigned s = 0; s < kSamples; ++s)
      v[s] = solver.evaluate(canonical, sampleBindings[s]);
    values.push_back(v);
  }
  auto mayCover = [&](unsigned big, unsigned small) {
    for (unsigned s = 0; s < kSamples; ++s)
      if (values[big][s] && values[small][s] &&
          *values[big][s] < *values[small][s])
        return false;
    return true;
  };
  auto covers = [&](unsigned big, unsigned small) {
    if (points[big].second == points[small].second)
      return true; // the difference simplifies to 0
    return mayCover(big, small) &&
           isStructurallyNonNegative(
               solver.simplify(points[big].second - points[small].second));
  };
  SmallVector<unsigned> kept; // indices into `points`
  for (unsigned e = 0; e < points.size(); ++e) {
    if (llvm::any_of(kept, [&](unsigned k) { return covers(k, e); }))
      continue;
    for (size_t k = kept.size(); k-- > 0;)
      if (covers(e, kept[k]))
        kept.erase(kept.begin() + k);
    kept.push_back(e);
  }
  SmallVector<AffineExpr> keptExprs;
  SmallVector<unsigned> keptAt;
  for (unsigned k : kept) {
    keptExprs.push_back(points[k].second);
    keptAt.push_back(points[k].first);
  }
  if (keptExprs.empty()) {
    keptExprs.push_back(cst(0));
    keptAt.push_back(0);
  }
  p.peakCandidates = std::move(keptExprs);
  p.peakCandidatePoints = std::move(keptAt);
  return p;
}

//===----------------------------------------------------------------------===//
// Evaluation and predictability
//===----------------------------------------------------------------------===//

static int64_t floorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

static std::optional<int64_t>
evalExpr(AffineExpr e,
         llvm::function_ref<std::optional<int64_t>(unsigned)> sym) {
  switch (e.getKind()) {
  case AffineExprKind::Constant:
    return cast<AffineConstantExpr>(e).getValue();
  case AffineExprKind::SymbolId:
    return sym(cast<AffineSymbolExpr>(e).getPosition());
  case AffineExprKind::DimId:
    return std::nullopt;
  default:
    break;
  }
  auto b = cast<AffineBinaryOpExpr>(e);
  std::optional<int64_t> l = evalExpr(b.getLHS(), sym);
  std::optional<int64_t> r = evalExpr(b.getRHS(), sym);
  if (!l || !r)
    return std::nullopt;
  switch (e.getKind()) {
  case AffineExprKind::Add:
    return *l + *r;
  case AffineExprKind::Mul:
    return *l * *r;
  case AffineExprKind::FloorDiv:
    if (*r == 0)
      return std::nullopt;
    return floorDiv(*l, *r);
  case AffineExprKind::CeilDiv:
    if (*r == 0)
      return std::nullopt;
    return -floorDiv(-*l, *r);
  case AffineExprKind::Mod: {
    if (*r == 0)
      return std::nullopt;
    int64_t m = *l % *r;
    return m < 0 ? m + (*r < 0 ? -*r : *r) : m;
  }
  default:
    return std::nullopt;
  }
}

std::optional<int64_t> MemoryModel::evaluate(AffineExpr e,
                                             ArrayRef<int64_t> bindings) const {
  return evalExpr(e, [&](unsigned i) -> std::optional<int64_t> {
    if (i >= bindings.size())
      return std::nullopt;
    return bindings[i];
  });
}

std::optional<int64_t>
MemoryModel::evaluate(AffineExpr e,
                      const llvm::StringMap<int64_t> &byName) const {
  return evalExpr(e, [&](unsigned i) -> std::optional<int64_t> {
    auto it = byName.find(shapes.getSymbolName(i));
    if (it == byName.end())
      return std::nullopt;
    return it->second;
  });
}

std::optional<int64_t>
MemoryModel::evaluatePeak(const MemoryProfile &p,
                          const llvm::StringMap<int64_t> &byName) {
  std::optional<int64_t> best;
  for (AffineExpr e : p.peakCandidates) {
    std::optional<int64_t> v = evaluate(e, byName);
    if (!v)
      return std::nullopt;
    best = best ? std::max(*best, *v) : *v;
  }
  return best;
}

static void collectSymbols(AffineExpr e, llvm::SetVector<unsigned> &out) {
  e.walk([&](AffineExpr x) {
    if (auto s = dyn_cast<AffineSymbolExpr>(x))
      out.insert(s.getPosition());
  });
}

/// `'op.name' (onnx node)` for messages.
static std::string describeOp(Operation *op) {
  std::string s = "'" + op->getName().getStringRef().str() + "'";
  op->getLoc()->walk([&](Location l) {
    if (auto n = dyn_cast<NameLoc>(l)) {
      s += " (" + n.getName().getValue().str() + ")";
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return s;
}

bool MemoryModel::isPredictable(const MemoryProfile &p, std::string *reason) {
  if (missingDims) {
    if (reason) {
      *reason = "no symbolic size for a result";
      if (Operation *def = missingDims.getDefiningOp())
        *reason += " of '" + def->getName().getStringRef().str() + "'";
    }
    return false;
  }
  llvm::DenseSet<unsigned> inputs = inputSymbols();
  computeBounds();
  llvm::SetVector<unsigned> used;
  for (AffineExpr e : p.peakCandidates)
    collectSymbols(e, used);
  // The runtime sizes each library call's temporaries from its operand
  // dims, so those must be input dims too.
  SmallVector<Operation *> calls;
  for (Operation *op : p.order) {
    if (op->hasAttr("disc.library_call"))
      calls.push_back(op);
    for (auto [call, alt] : getOpMemory(op).regionCalls)
      calls.push_back(call);
  }
  for (Operation *op : calls) {
    llvm::SetVector<unsigned> callSymbols;
    for (Value v : llvm::concat<Value>(op->getOperands(), op->getResults()))
      if (isa<RankedTensorType>(v.getType()))
        for (AffineExpr d : shapes.getDims(v))
          if (d)
            collectSymbols(d, callSymbols);
    for (unsigned s : callSymbols) {
      if (inputs.contains(s))
        continue;
      if (reason)
        *reason =
            "size '" + shapes.getSymbolName(s).str() +
            "' of an operand of the library call " + describeOp(op) +
            " is not an input dim (" +
            (shapes.isUnknownSymbol(s) ? "not derivable by the shape rules"
                                       : "known only at run time") +
            ")";
      return false;
    }
  }
  for (unsigned s : used) {
    if (inputs.contains(s) || bounds->count(s))
      continue;
    if (reason) {
      *reason = "size '" + shapes.getSymbolName(s).str() + "' is not an " +
                "input dim";
      // Name the first op whose buffer depends on it.
      for (const BufferLiveRange &b : p.buffers) {
        llvm::SetVector<unsigned> syms;
        collectSymbols(b.bytes, syms);
        if (!syms.contains(s))
          continue;
        *reason += " (result of '" +
                   b.root.getDefiningOp()->getName().getStringRef().str() +
                   "'" +
                   (shapes.isUnknownSymbol(s) ? ", not derivable by the shape "
                                                "rules"
                                              : ", known only at run time") +
                   ")";
        break;
      }
    }
    return false;
  }
  return true;
}

//===----------------------------------------------------------------------===//
// JSON and printing
//===----------------------------------------------------------------------===//

const char *mlir::disc::affineOpName(AffineExprKind kind) {
  switch (kind) {
  case AffineExprKind::Mul:
    return "*";
  case AffineExprKind::FloorDiv:
    return "floordiv";
  case AffineExprKind::CeilDiv:
    return "ceildiv";
  case AffineExprKind::Mod:
    return "mod";
  default:
    return "+";
  }
}

llvm::json::Value mlir::disc::exprToJson(AffineExpr e, ShapeAnalysis &sa) {
  switch (e.getKind()) {
  case AffineExprKind::Constant:
    return cast<AffineConstantExpr>(e).getValue();
  case AffineExprKind::SymbolId:
    return sa.getSymbolName(cast<AffineSymbolExpr>(e).getPosition()).str();
  case AffineExprKind::DimId:
    return nullptr;
  default:
    break;
  }
  auto b = cast<AffineBinaryOpExpr>(e);
  const char *op = affineOpName(e.getKind());
  return llvm::json::Array{op, exprToJson(b.getLHS(), sa),
                           exprToJson(b.getRHS(), sa)};
}

llvm::json::Object MemoryModel::toJson(const MemoryProfile &p) {
  std::string reason;
  if (!isPredictable(p, &reason))
    return llvm::json::Object{{"predictable", false}, {"reason", reason}};
  llvm::json::Array exprs, texts, calls;
  for (AffineExpr e : p.peakCandidates) {
    AffineExpr b = atBounds(e);
    exprs.push_back(exprToJson(b, shapes));
    texts.push_back(render(b));
  }
  for (auto [i, op] : llvm::enumerate(p.order)) {
    if (op->hasAttr("disc.library_call") &&
        !libraryCallJson(op, atBounds(p.liveAt[i]), calls, reason, i))
      return llvm::json::Object{{"predictable", false}, {"reason", reason}};
    // A call in a region: at the point of its alternative (which counts
    // every allocation of the region, the call's result among them).
    const OpMemory &m = getOpMemory(op);
    for (auto [call, alt] : m.regionCalls)
      if (!libraryCallJson(call,
                           atBounds(shapes.getSolver().simplify(
                               p.liveAt[i] + m.regionBytes[alt])),
                           calls, reason, i))
        return llvm::json::Object{{"predictable", false}, {"reason", reason}};
  }
  llvm::json::Object o{{"predictable", true},
                       {"num_allocs", p.numAllocs},
                       {"peak_bytes", std::move(exprs)},
                       {"peak_bytes_text", std::move(texts)}};
  std::string why;
  if (isUpperBound(p, &why)) {
    o["upper_bound"] = true;
    o["bound_reason"] = why;
  }
  if (!calls.empty())
    o["library_calls"] = std::move(calls);
  return o;
}

llvm::DenseSet<unsigned> MemoryModel::inputSymbols() {
  llvm::DenseSet<unsigned> inputs;
  for (BlockArgument arg : func.getArguments())
    for (AffineExpr d : shapes.getDims(arg))
      if (auto s = dyn_cast_or_null<AffineSymbolExpr>(d))
        inputs.insert(s.getPosition());
  return inputs;
}

/// Whether `e` never decreases when a symbol of `grows` grows (the others
/// held): sums, products of non-negative factors, and floordiv/ceildiv by
/// positive constants of such expressions.
static bool isMonotoneIn(AffineExpr e, const llvm::DenseSet<unsigned> &grows) {
  bool involves = false;
  e.walk([&](AffineExpr x) {
    if (auto s = dyn_cast<AffineSymbolExpr>(x))
      involves |= grows.contains(s.getPosition());
  });
  if (!involves || e.getKind() == AffineExprKind::SymbolId)
    return true;
  if (e.getKind() == AffineExprKind::Constant ||
      e.getKind() == AffineExprKind::DimId)
    return false;
  auto b = cast<AffineBinaryOpExpr>(e);
  switch (e.getKind()) {
  case AffineExprKind::Add:
    return isMonotoneIn(b.getLHS(), grows) && isMonotoneIn(b.getRHS(), grows);
  case AffineExprKind::Mul:
    return isStructurallyNonNegative(b.getLHS()) &&
           isStructurallyNonNegative(b.getRHS()) &&
           isMonotoneIn(b.getLHS(), grows) && isMonotoneIn(b.getRHS(), grows);
  case AffineExprKind::FloorDiv:
  case AffineExprKind::CeilDiv: {
    auto c = dyn_cast<AffineConstantExpr>(b.getRHS());
    return c && c.getValue() > 0 && isMonotoneIn(b.getLHS(), grows);
  }
  default:
    return false;
  }
}

void MemoryModel::computeBounds() {
  if (bounds)
    return;
  bounds.emplace();
  llvm::DenseSet<unsigned> inputs = inputSymbols();
  llvm::DenseSet<unsigned> bounded;
  for (unsigned i = 0, e = shapes.getNumSymbols(); i < e; ++i)
    if (!inputs.contains(i) && shapes.getUpperBound(i))
      bounded.insert(i);
  if (bounded.empty())
    return;
  // A size may be evaluated at its bound only where every dim that
  // involves it grows with it: then so does every buffer size (a product
  // of dims) and every live-byte sum of them.
  SmallVector<AffineExpr> dimExprs;
  func.walk([&](Operation *op) {
    for (Value r : op->getResults())
      llvm::append_range(dimExprs, shapes.getDims(r));
    for (Region &region : op->getRegions())
      for (Block &block : region)
        for (BlockArgument a : block.getArguments())
          llvm::append_range(dimExprs, shapes.getDims(a));
  });
  for (bool changed = true; changed;) {
    changed = false;
    for (AffineExpr d : dimExprs) {
      if (!d || isMonotoneIn(d, bounded))
        continue;
      d.walk([&](AffineExpr x) {
        if (auto s = dyn_cast<AffineSymbolExpr>(x))
          changed |= bounded.erase(s.getPosition());
      });
    }
  }
  // Each bound in input dims: a bound may involve another bounded size
  // (a compaction of a compaction), never itself.
  llvm::DenseMap<unsigned, AffineExpr> resolved;
  std::function<AffineExpr(unsigned, int)> resolve = [&](unsigned i,
                                                         int depth) {
    if (auto it = resolved.find(i); it != resolved.end())
      return it->second;
    AffineExpr b = shapes.getUpperBound(i);
    if (depth > 16 || !b || !isMonotoneIn(b, bounded))
      return AffineExpr();
    llvm::SetVector<unsigned> syms;
    collectSymbols(b, syms);
    SmallVector<AffineExpr> repl;
    for (unsigned k = 0, e = shapes.getNumSymbols(); k < e; ++k)
      repl.push_back(getAffineSymbolExpr(k, ctx));
    for (unsigned s : syms) {
      if (inputs.contains(s))
        continue;
      AffineExpr r = bounded.contains(s) ? resolve(s, depth + 1) : AffineExpr();
      if (!r)
        return AffineExpr();
      repl[s] = r;
    }
    AffineExpr r = shapes.normalize(b.replaceSymbols(repl));
    resolved[i] = r;
    return r;
  };
  for (unsigned i : bounded)
    if (AffineExpr r = resolve(i, 0))
      (*bounds)[i] = r;
}

AffineExpr MemoryModel::atBounds(AffineExpr e) {
  computeBounds();
  if (!e || bounds->empty())
    return e;
  SmallVector<AffineExpr> repl;
  for (unsigned k = 0, n = shapes.getNumSymbols(); k < n; ++k) {
    auto it = bounds->find(k);
    repl.push_back(it != bounds->end() ? it->second
                                       : getAffineSymbolExpr(k, ctx));
  }
  return shapes.getSolver().simplify(
      shapes.normalize(shapes.normalize(e).replaceSymbols(repl)));
}

bool MemoryModel::isUpperBound(const MemoryProfile &p, std::string *why) {
  computeBounds();
  SmallVector<std::string> notes;
  for (Operation *op : p.order)
    if (!getOpMemory(op).regionBytes.empty()) {
      notes.push_back("tensors allocated in the regions of " + describeOp(op) +
                      " counted as live for the whole region");
      break;
    }
  for (Operation *op : p.order)
    if (getOpMemory(op).upperBound) {
      notes.push_back("the padding ceil_mode adds to " + describeOp(op) +
                      " at its largest (stride - 1)");
      break;
    }
  llvm::SetVector<unsigned> used;
  for (AffineExpr e : p.peakCandidates)
    collectSymbols(shapes.normalize(e), used);
  for (unsigned s : used)
    if (auto it = bounds->find(s); it != bounds->end()) {
      notes.push_back("size '" + shapes.getSymbolName(s).str() +
                      "' (known only at run time) at its bound " +
                      render(it->second));
      break;
    }
  if (why)
    *why = llvm::join(notes, "; ");
  return !notes.empty();
}

bool MemoryModel::libraryCallJson(Operation *op, AffineExpr at,
                                  llvm::json::Array &out, std::string &reason,
                                  int64_t index) {
  if (!libraryTemporaries)
    return true;
  ShapeConstraintSolver &solver = shapes.getSolver();
  auto dimsOf = [&](Value v) {
    auto t = cast<RankedTensorType>(v.getType());
    SmallVector<AffineExpr> d = shapes.getDims(v);
    SmallVector<AffineExpr> r;
    for (int64_t i = 0; i < t.getRank(); ++i)
      r.push_back(!t.isDynamicDim(i)              ? cst(t.getDimSize(i))
                  : i < (int64_t)d.size() && d[i] ? d[i]
                                                  : AffineExpr());
    return r;
  };
  auto product = [&](ArrayRef<AffineExpr> d) {
    AffineExpr p = cst(1);
    for (AffineExpr x : d)
      p = p * x;
    return solver.simplify(shapes.normalize(p));
  };
  // An operand of `sizes` and `strides` (default: dense, the lowering's
  // views of dense buffers).
  llvm::json::Array operands;
  bool missing = false;
  auto operand = [&](ArrayRef<AffineExpr> sizes,
                     ArrayRef<AffineExpr> strides = {}) {
    llvm::json::Array sz, st;
    for (size_t i = 0; i < sizes.size(); ++i) {
      if (!sizes[i] || (!strides.empty() && !strides[i])) {
        missing = true;
        return;
      }
      sz.push_back(exprToJson(sizes[i], shapes));
      st.push_back(exprToJson(strides.empty() ? product(sizes.drop_front(i + 1))
                                              : strides[i],
                              shapes));
    }
    operands.push_back(llvm::json::Object{{"sizes", std::move(sz)},
                                          {"strides", std::move(st)}});
  };
  // `v` when it is a strided view (a slice with positive constant steps) of
  // a dense buffer, as ShuffleNet's channel split feeds a Conv: its sizes
  // and the strides the lowering gives the view (the operand's dense
  // strides times the steps), so that the runtime makes the same primitive
  // and reorder as at run time. False for any other operand.
  auto viewOperand = [&](Value v) {
    auto slice = v.getDefiningOp<SliceOp>();
    if (!slice || !isViewSlice(slice) || !isIdentityLayout(slice.getOperand()))
      return false;
    DenseElementsAttr stepsAttr;
    if (!matchPattern(slice.getSteps(), m_Constant(&stepsAttr)))
      return false;
    SmallVector<AffineExpr> source = dimsOf(slice.getOperand());
    SmallVector<int64_t> steps(source.size(), 1);
    for (auto [axis, step] :
         llvm::zip(slice.getAxes(), stepsAttr.getValues<APInt>()))
      steps[axis] = step.getSExtValue();
    SmallVector<AffineExpr> strides;
    for (size_t i = 0; i < source.size(); ++i) {
      ArrayRef<AffineExpr> inner = ArrayRef(source).drop_front(i + 1);
      strides.push_back(
          llvm::all_of(inner, [](AffineExpr d) { return !!d; })
              ? solver.simplify(shapes.normalize(product(inner) * steps[i]))
              : AffineExpr());
    }
    operand(dimsOf(v), strides);
    return true;
  };
  auto name = op->getName().getStringRef().str();
  SmallVector<Value> dense;
  // The call's trailing post-op attributes (flags first), as the lowering
  // passes them (LibraryCallAttrs.h).
  ArrayRef<int64_t> postAttrs;
  if (auto a = op->getAttrOfType<DenseI64ArrayAttr>("disc.post_op_attrs"))
    postAttrs = a.asArrayRef();
  int64_t flags = postAttrs.empty() ? 0 : postAttrs[0];
  // The residual: the other operand of the fused add.
  Value residual;
  if (flags & 2) {
    Value cur = op->getResult(0);
    while (Operation *user = nextPostOp(cur)) {
      auto idx = user->getAttrOfType<IntegerAttr>(kFusedIntoCallAttr);
      if (isa<AddOp, SubOp>(user) &&
          !matchPattern(user->getOperand(1 - idx.getInt()), m_Constant()))
        residual = user->getOperand(1 - idx.getInt());
      cur = user->getResult(0);
    }
  }
  llvm::json::Array attrs;
  int64_t call = 0;
  SmallVector<AffineExpr> outDims;
  // The operands and leading attributes shared by the convolution calls
  // (ConvOp, ConvTransposeOp): input, filter and result views, then the
  // group count and whether the filter is a constant.
  auto convPrologue = [&](auto c) {
    dense = {c.getFilter()};
    if (!viewOperand(c.getInput())) {
      dense.push_back(c.getInput());
      operand(dimsOf(c.getInput()));
    }
    operand(dimsOf(c.getFilter()));
    outDims = dimsOf(c.getResult());
    operand(outDims);
    Value filter = c.getFilter();
    bool constW = matchPattern(filter, m_Constant()) ||
                  isa_and_nonnull<ConstantOp>(filter.getDefiningOp());
    attrs.push_back(c.getFeatureGroupCount());
    attrs.push_back(constW ? 1 : 0);
  };
  if (auto conv = dyn_cast<ConvOp>(op)) {
    // An integer Conv is DISC_LIB_CONV_INT (LibraryCalls.h).
    call = conv.getType().getElementType().isF32() ? 2 : 5;
    convPrologue(conv);
    for (ArrayRef<int64_t> v :
         {conv.getStrides(), conv.getDilations(), conv.getPadding()})
      for (int64_t x : v)
        attrs.push_back(x);
    if (flags & 1)
      operand({outDims[1]});
  } else if (auto ct = dyn_cast<ConvTransposeOp>(op)) {
    call = 3;
    convPrologue(ct);
    int64_t k = ct.getStrides().size();
    ArrayRef<int64_t> pad = ct.getPadding(), outPad = ct.getOutputPadding();
    for (ArrayRef<int64_t> v : {ct.getStrides(), ct.getDilations()})
      for (int64_t x : v)
        attrs.push_back(x);
    for (int64_t i = 0; i < k; ++i)
      attrs.push_back(pad[i]);
    for (int64_t i = 0; i < k; ++i)
      attrs.push_back(pad[k + i] -
                      (i < (int64_t)outPad.size() ? outPad[i] : 0));
  } else if (auto bf = dyn_cast<ConvBackwardFilterOp>(op)) {
    call = 4;
    dense = {bf.getInput(), bf.getGradOutput()};
    operand(dimsOf(bf.getInput()));
    operand(dimsOf(bf.getGradOutput()));
    outDims = dimsOf(bf.getResult());
    operand(outDims);
    for (ArrayRef<int64_t> v :
         {bf.getStrides(), bf.getDilations(), bf.getPadding()})
      for (int64_t x : v)
        attrs.push_back(x);
  } else if (auto pool = dyn_cast<PoolOp>(op)) {
    // DISC_LIB_POOL: X, Y; {kind, window, strides, begin pads, flags}.
    call = 6;
    dense = {pool.getInput()};
    operand(dimsOf(pool.getInput()));
    outDims = dimsOf(pool.getResult());
    operand(outDims);
    int64_t k = pool.getWindow().size();
    attrs.push_back(pool.getKind() == PoolKind::Max ? 0
                    : pool.getCountIncludePad()     ? 1
                                                    : 2);
    for (ArrayRef<int64_t> v :
         {pool.getWindow(), pool.getStrides(), pool.getPadding().take_front(k)})
      for (int64_t x : v)
        attrs.push_back(x);
    if (postAttrs.empty())
      attrs.push_back(0); // the flags word, always passed
  } else if (auto dot = dyn_cast<DotGeneralOp>(op)) {
    call = 1;
    dense = {dot.getLhs(), dot.getRhs()};
    ArrayRef<int64_t> lc = dot.getLhsContractingDimensions(),
                      rc = dot.getRhsContractingDimensions();
    int64_t nb = dot.getLhsBatchingDimensions().size();
    SmallVector<AffineExpr> l = dimsOf(dot.getLhs()), r = dimsOf(dot.getRhs()),
                            c = dimsOf(dot.getResult());
    if (llvm::any_of(l, [](AffineExpr e) { return !e; }) ||
        llvm::any_of(r, [](AffineExpr e) { return !e; }) ||
        llvm::any_of(c, [](AffineExpr e) { return !e; })) {
      reason = "no symbolic size for an operand of '" + name + "'";
      return false;
    }
    // As lowerDotGeneralToLibraryCall views them: [B, M, K] x [B, K, N].
    auto to3 = [&](ArrayRef<AffineExpr> d) {
      int64_t lead = nb == 0 ? (int64_t)d.size() - 1 : nb;
      SmallVector<AffineExpr> v = {nb == 0 ? product(d.take_front(lead))
                                           : product(d.take_front(nb))};
      if (nb == 0)
        v = {cst(1), product(d.take_front(lead))};
      for (AffineExpr x : d.drop_front(lead))
        v.push_back(x);
      return v;
    };
    int64_t lr = l.size();
    bool transA, transB;
    // A weight gradient [K.., M] x [K.., N] contracting the k >= 2 leading
    // dims of both: the Gemm A^T B of the collapsed operands.
    int64_t k = lc.size();
    bool leading = nb == 0 && k >= 2 && lc == rc && lr == k + 1 &&
                   (int64_t)r.size() == k + 1;
    for (int64_t i = 0; leading && i < k; ++i)
      leading = lc[i] == i;
    if (leading) {
      transA = true;
      transB = false;
      operand({cst(1), product(ArrayRef(l).take_front(k)), l[k]});
      operand({cst(1), product(ArrayRef(r).take_front(k)), r[k]});
    } else if (nb == 0) {
      transB = rc[0] == 1;
      transA = lr == 2 && lc[0] == 0;
      operand(lr == 2 ? SmallVector<AffineExpr>{cst(1), l[0], l[1]} : to3(l));
      operand({cst(1), r[0], r[1]});
    } else {
      transA = lc[0] == nb;
      transB = rc[0] == nb + 1;
      operand(to3(l));
      operand(to3(r));
    }
    outDims = to3(c);
    operand(outDims);
    attrs.push_back(transA ? 1 : 0);
    attrs.push_back(transB ? 1 : 0);
    if (flags & 1)
      operand({outDims.back()});
  } else {
    reason = "unknown library call '" + name + "'";
    return false;
  }
  if (flags & 2) {
    if (!residual) {
      reason = "no residual operand for the post-op of '" + name + "'";
      return false;
    }
    dense.push_back(residual);
    operand(outDims);
  }
  for (int64_t a : postAttrs)
    attrs.push_back(a);
  if (missing) {
    reason = "no symbolic size for an operand of '" + name + "'";
    return false;
  }
  for (Value v : dense)
    if (!isIdentityLayout(v)) {
      reason =
          "an operand of the library call '" + name + "' is a strided view";
      return false;
    }
  llvm::json::Object entry{{"call", call},
                           {"at", exprToJson(at, shapes)},
                           {"operands", std::move(operands)},
                           {"attrs", std::move(attrs)}};
  if (index >= 0)
    entry["index"] = index;
  out.push_back(std::move(entry));
  return true;
}

/// Value of a symbol for printing: its LIKELY value, else its minimum.
static llvm::StringMap<int64_t> likelyBindings(ShapeAnalysis &sa) {
  llvm::StringMap<int64_t> b;
  ShapeConstraintSolver &solver = sa.getSolver();
  for (unsigned i = 0, e = sa.getNumSymbols(); i < e; ++i) {
    const SymbolInfo &info = solver.getSymbol(i);
    b[sa.getSymbolName(i)] = info.likely ? *info.likely : info.min;
  }
  return b;
}

FunctionMemory::FunctionMemory(func::FuncOp func, bool stackPlacement)
    : FunctionMemory(func, collectDimRanges(func->getParentOfType<ModuleOp>()),
                     stackPlacement) {}

FunctionMemory::FunctionMemory(func::FuncOp func,
                               llvm::StringMap<DimRange> dimRanges,
                               bool stackPlacement)
    : ranges(std::move(dimRanges)) {
  shapes.emplace(func, ranges);
  shapes->run();
  shapes->mergeEqualSymbols();
  model.emplace(func, *shapes);
  model->setStackPlacement(stackPlacement);
}

LogicalResult mlir::disc::printMemory(ModuleOp module, StringRef entry,
                                      llvm::raw_ostream &os,
                                      bool stackPlacement) {
  auto func = module.lookupSymbol<func::FuncOp>(entry);
  if (!func)
    return module.emitError("no entry function '") << entry << "'";
  FunctionMemory fm(func, stackPlacement);
  ShapeAnalysis &sa = *fm.shapes;
  MemoryModel &mm = *fm.model;
  MemoryProfile p = mm.profile();
  llvm::StringMap<int64_t> likely = likelyBindings(sa);
  // Data-dependent sizes at their bounds (MemoryModel::atBounds).
  auto value = [&](AffineExpr e) {
    std::optional<int64_t> v = mm.evaluate(mm.atBounds(e), likely);
    return v ? std::to_string(*v) : std::string("?");
  };
  os << "bindings:";
  for (auto &b : likely)
    if (llvm::any_of(func.getArguments(), [&](BlockArgument a) {
          return llvm::any_of(sa.getDims(a), [&](AffineExpr d) {
            auto s = dyn_cast_or_null<AffineSymbolExpr>(d);
            return s && sa.getSymbolName(s.getPosition()) == b.getKey();
          });
        }))
      os << " " << b.getKey() << "=" << b.getValue();
  os << "\n";
  for (auto [i, op] : llvm::enumerate(p.order)) {
    const OpMemory &m = mm.getOpMemory(op);
    os << "#" << i << " " << op->getName().getStringRef();
    if (auto n = dyn_cast<NameLoc>(op->getLoc()))
      os << " (" << n.getName().getValue() << ")";
    else if (auto fl = dyn_cast<FileLineColLoc>(op->getLoc()))
      os << " (line " << fl.getLine() << ")";
    for (const ResultMemory &rm : m.results) {
      if (!isa<RankedTensorType>(rm.value.getType()))
        continue;
      os << "  " << stringifyBufferKind(rm.kind);
      if (rm.kind == BufferKind::Alloc)
        os << "=" << mm.render(rm.bytes);
      else if (rm.operand >= 0)
        os << "(operand " << rm.operand << ")";
    }
    auto nonZero = [](AffineExpr e) {
      auto c = dyn_cast<AffineConstantExpr>(e);
      return !c || c.getValue() != 0;
    };
    if (nonZero(m.preScratchBytes))
      os << "  pre-scratch=" << mm.render(m.preScratchBytes);
    if (nonZero(m.scratchBytes))
      os << "  scratch=" << mm.render(m.scratchBytes);
    os << "\n";
    for (AffineExpr e : p.livePoints[i])
      os << "    live=" << mm.render(e) << "  [" << value(e) << "]\n";
  }
  for (AffineExpr e : p.exitPoints)
    os << "return (clone)\n    live=" << mm.render(e) << "  [" << value(e)
       << "]\n";
  os << "live at exit: " << mm.render(p.liveAtExit) << "  ["
     << value(p.liveAtExit) << "]\n";
  os << "peak = max of " << p.peakCandidates.size() << " candidates:\n";
  for (auto [e, at] : llvm::zip(p.peakCandidates, p.peakCandidatePoints))
    os << "  #" << at << " " << mm.render(e) << "  [" << value(e) << "]\n";
  std::optional<int64_t> peak;
  for (AffineExpr e : p.peakCandidates) {
    std::optional<int64_t> v = mm.evaluate(mm.atBounds(e), likely);
    peak = !v ? v : peak ? std::max(*peak, *v) : *v;
    if (!peak)
      break;
  }
  std::string reason, why;
  bool predictable = mm.isPredictable(p, &reason);
  os << "peak: " << (peak ? std::to_string(*peak) : std::string("?"))
     << " bytes at the bindings above, " << p.numAllocs << " allocations"
     << (!predictable ? "; not predictable from input shapes: " + reason
         : mm.isUpperBound(p, &why) ? "; an upper bound: " + why
                                    : std::string(""))
     << "\n";
  // The buffers live at the first peak point, largest first (what a
  // PyTorch memory snapshot shows at its peak): the bytes, the op that
  // allocates the buffer and its last use.
  if (!peak)
    return success();
  std::optional<unsigned> peakAt;
  for (auto [e, at] : llvm::zip(p.peakCandidates, p.peakCandidatePoints))
    if (mm.evaluate(mm.atBounds(e), likely) == peak &&
        (!peakAt || at < *peakAt))
      peakAt = at;
  if (!peakAt || *peakAt >= p.order.size())
    return success();
  SmallVector<std::pair<int64_t, const BufferLiveRange *>> live;
  for (const BufferLiveRange &b : p.buffers)
    if (b.def <= *peakAt && b.lastUse >= *peakAt)
      live.push_back(
          {mm.evaluate(mm.atBounds(b.bytes), likely).value_or(-1), &b});
  llvm::stable_sort(live, [](auto &a, auto &b) { return a.first > b.first; });
  os << "live at the peak (#" << *peakAt << "), largest first:\n";
  for (auto [bytes, b] : live) {
    Operation *def = p.order[b->def];
    os << "  " << bytes << "  #" << b->def << " "
       << def->getName().getStringRef();
    if (auto n = dyn_cast<NameLoc>(def->getLoc()))
      os << " (" << n.getName().getValue() << ")";
    os << "  last use #" << b->lastUse << "\n";
  }
  return success();
}

FailureOr<llvm::json::Object>
mlir::disc::buildMemoryJson(ModuleOp module, StringRef entry,
                            bool stackPlacement, bool libraryTemporaries) {
  auto func = module.lookupSymbol<func::FuncOp>(entry);
  if (!func)
    return module.emitError("no entry function '") << entry << "'";
  FunctionMemory fm(func, stackPlacement);
  fm.model->setLibraryTemporaries(libraryTemporaries);
  return fm.model->toJson(fm.model->profile());
}
