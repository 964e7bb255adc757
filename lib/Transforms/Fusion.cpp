//===- Fusion.cpp - disc-fusion: elementwise producers into consumers -----===//
//
// Marks producers that the CPU pipeline fuses into their single consumer
// (Fusion.h). A producer qualifies when
//  * it is an elementwise op (unary, binary, compare, select, convert),
//  * its result has exactly one use, by an elementwise op or by a
//    reduction in the same block,
//  * neither op is versioned by the lowering: every dynamic operand dim is
//    proven equal to its result dim, or is the only possibly non-1 source
//    of that dim (lowerElementwise's `Same`), so both become plain
//    linalg.generic ops,
//  * for a reduction consumer, some operand of the producer covers every
//    loop of the reduction without broadcasting (linalg keeps the loop
//    bounds).
// Chains fuse transitively: in `exp(x - m) -> sum`, the sub fuses into the
// exp and the exp into the sum; one loop nest reads x and m. With
// `depthwise`, depthwise convolutions become loops that read their input
// element by element, with the producer of the input fused into the read
// and the ops after them written in place (writeDepthwiseEpiloguesInPlace).
// First, an elementwise op that reads a broadcast (`expand`) reads its
// operand instead where its other operands give the broadcast dims
// (foldBroadcastsIntoReaders).
//
//===----------------------------------------------------------------------===//
#include "disc/Transforms/Fusion.h"
#include "disc/Dialect/Disc/IR/DiscDialect.h"
#include "disc/Transforms/Passes.h"
#include "disc/Transforms/ShapeAnalysis.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Matchers.h"

namespace mlir::disc {
#define GEN_PASS_DEF_DISCFUSION
#include "disc/Transforms/Passes.h.inc"
} // namespace mlir::disc

using namespace mlir;
using namespace mlir::disc;

Operation *mlir::disc::getFusionRoot(Operation *op) {
  for (int guard = 0; guard < 1 << 20 && isFusedProducer(op); ++guard) {
    assert(op->getNumResults() == 1 && op->getResult(0).hasOneUse() &&
           "a fused producer has one use");
    op = *op->getResult(0).getUsers().begin();
  }
  return op;
}

void mlir::disc::sinkFusedProducers(Block &block) {
  // Each root in block order; its group is the fused producers whose root
  // it is, moved in their current relative order.
  llvm::DenseMap<Operation *, SmallVector<Operation *>> groups;
  SmallVector<Operation *> roots;
  for (Operation &op : block) {
    if (!isFusedProducer(&op))
      continue;
    Operation *root = getFusionRoot(&op);
    auto [it, inserted] = groups.try_emplace(root);
    if (inserted)
      roots.push_back(root);
    it->second.push_back(&op);
  }
  for (Operation *root : roots)
    for (Operation *op : groups[root])
      op->moveBefore(root);
}

namespace {

/// Elementwise ops (the Elementwise trait) that take the shape analysis'
/// broadcast proofs (takesBroadcastProofs), with one ranked result.
bool isElementwise(Operation *op) {
  return takesBroadcastProofs(op) && op->getNumResults() == 1 &&
         isa<RankedTensorType>(op->getResult(0).getType());
}

/// lowerElementwise's classification of operand dim `j` of `v` against
/// the result: true when it is not `Maybe` (so the op is not versioned);
/// `stretches` is set when the dim is a static 1 broadcast to the result.
bool isMappedDim(ShapeAnalysis &sa, Operation *op, Value v, int64_t j,
                 bool &stretches) {
  auto rt = cast<RankedTensorType>(op->getResult(0).getType());
  auto t = cast<RankedTensorType>(v.getType());
  int64_t rank = rt.getRank(), i = j + rank - t.getRank();
  int64_t d = t.getDimSize(j), r = rt.getDimSize(i);
  stretches = false;
  if (r == 1)
    return true;
  if (d == 1) {
    stretches = true;
    return true;
  }
  if (!ShapedType::isDynamic(d) || sa.isProvenEqual(v, j, op->getResult(0), i))
    return true;
  if (!ShapedType::isDynamic(r))
    return false;
  // The only possibly non-1 source of the result dim.
  for (Value w : op->getOperands()) {
    auto u = cast<RankedTensorType>(w.getType());
    int64_t jw = i - (rank - u.getRank());
    if (jw < 0 || u.getDimSize(jw) == 1)
      continue;
    if (w != v || jw != j)
      return false;
  }
  return true;
}

/// Lowered to one linalg.generic with indexing maps (not versioned).
bool isUnversioned(ShapeAnalysis &sa, Operation *op) {
  for (Value v : op->getOperands()) {
    auto t = dyn_cast<RankedTensorType>(v.getType());
    if (!t)
      return false;
    for (int64_t j = 0; j < t.getRank(); ++j) {
      bool stretches;
      if (!isMappedDim(sa, op, v, j, stretches))
        return false;
    }
  }
  return true;
}

/// Some operand of `op` maps every result dim without stretching.
bool hasFullOperand(ShapeAnalysis &sa, Operation *op) {
  auto rt = cast<RankedTensorType>(op->getResult(0).getType());
  for (Value v : op->getOperands()) {
    auto t = cast<RankedTensorType>(v.getType());
    if (t.getRank() != rt.getRank())
      continue;
    bool full = true;
    for (int64_t j = 0; full && j < t.getRank(); ++j) {
      bool stretches;
      full = isMappedDim(sa, op, v, j, stretches) && !stretches &&
             (rt.getDimSize(j) != 1 || t.getDimSize(j) == 1);
    }
    if (full)
      return true;
  }
  return false;
}

/// Makes each elementwise reader of a broadcast (`disc.expand`) read the
/// broadcast's operand instead, when the reader's other operands give
/// every dim the expand adds or stretches from a static 1: the reader's
/// own NumPy broadcasting computes the same values, and the broadcast
/// tensor is never stored (a gradient's `sum` broadcast back over the
/// reduced dims, a constant expanded to a mask's shape). An expand left
/// without readers is erased.
void foldBroadcastsIntoReaders(Block &block, ShapeAnalysis &sa) {
  SmallVector<ExpandOp> expands;
  for (Operation &op : block)
    if (auto e = dyn_cast<ExpandOp>(op))
      expands.push_back(e);
  for (ExpandOp e : expands) {
    Value in = e->getOperand(0), out = e.getResult();
    auto it = cast<RankedTensorType>(in.getType());
    auto ot = cast<RankedTensorType>(out.getType());
    int64_t r = ot.getRank(), lead = r - it.getRank();
    bool ok = lead >= 0 && it.getElementType() == ot.getElementType();
    SmallVector<int64_t> stretched;
    for (int64_t k = 0; ok && k < r; ++k) {
      if (k < lead) {
        stretched.push_back(k);
        continue;
      }
      int64_t d = it.getDimSize(k - lead), o = ot.getDimSize(k);
      if (d == 1 && o != 1)
        stretched.push_back(k);
      else if (d != o || (ShapedType::isDynamic(d) &&
                          !sa.isProvenEqual(in, k - lead, out, k)))
        ok = false;
    }
    if (!ok)
      continue;
    for (OpOperand &use : llvm::make_early_inc_range(out.getUses())) {
      Operation *user = use.getOwner();
      if (user->getBlock() != &block || !isElementwise(user) ||
          cast<RankedTensorType>(user->getResult(0).getType()).getShape() !=
              ot.getShape())
        continue;
      auto gives = [&](int64_t k) {
        for (OpOperand &other : user->getOpOperands()) {
          auto wt = dyn_cast<RankedTensorType>(other.get().getType());
          if (&other == &use || !wt)
            continue;
          int64_t kw = k - (r - wt.getRank());
          if (kw < 0)
            continue;
          int64_t dw = wt.getDimSize(kw), o = ot.getDimSize(k);
          if (!ShapedType::isDynamic(o)
                  ? dw == o
                  : ShapedType::isDynamic(dw) &&
                        sa.isProvenEqual(other.get(), kw, out, k))
            return true;
        }
        return false;
      };
      if (llvm::all_of(stretched, gives))
        use.set(in);
    }
    if (!out.use_empty())
      continue;
    // The shape operand's producer (a `disc.shape_of` of the reader's
    // other operand) would otherwise remain a second use of that value,
    // which keeps it from fusing into the reader.
    Operation *shape = e.getShape().getDefiningOp();
    e->erase();
    if (shape && isa<ShapeOfOp>(shape) && shape->use_empty())
      shape->erase();
  }
}

/// The single reader of `v` when it is an elementwise op of `block` that
/// can write its result into v's buffer: one loop nest (unversioned), the
/// same result type, v read unbroadcast. Null otherwise.
Operation *inPlaceReader(Value v, Block &block, ShapeAnalysis &sa,
                         llvm::function_ref<bool(Operation *)> plain) {
  if (!v.hasOneUse())
    return nullptr;
  Operation *user = *v.getUsers().begin();
  if (user->getBlock() != &block || !isElementwise(user) ||
      user->getResult(0).getType() != v.getType() || !plain(user))
    return nullptr;
  auto type = cast<RankedTensorType>(v.getType());
  for (int64_t j = 0; j < type.getRank(); ++j) {
    bool stretches;
    if (!isMappedDim(sa, user, v, j, stretches) || stretches)
      return nullptr;
  }
  return user;
}

/// Whether a cuDNN call may take `op` as a post-op of the convolution
/// before it (markLibraryCalls on CUDA: a bias or residual Add, a ReLU as
/// `max(x, 0)`).
bool isCudaPostOpLike(Operation *op) {
  if (isa<AddOp>(op))
    return true;
  if (!isa<MaxOp>(op))
    return false;
  for (Value v : op->getOperands()) {
    DenseElementsAttr c;
    if (matchPattern(v, m_Constant(&c)) && c.isSplat() &&
        isa<FloatType>(c.getElementType()) &&
        c.getSplatValue<APFloat>().isZero())
      return true;
  }
  return false;
}

/// Whether depthwise `conv` as a cuDNN call would leave an elementwise op
/// to a kernel of its own that the convolution as loops takes: an op after
/// it (in the chain of single readers written in place) that is no cuDNN
/// post-op, or a producer of its input that disc-fusion would fuse into
/// the loops and that no call before it takes as a post-op.
bool leavesKernelToCudaCall(ConvOp conv, Block &block, ShapeAnalysis &sa,
                            llvm::function_ref<bool(Operation *)> plain) {
  for (Value v = conv.getResult();
       Operation *user = inPlaceReader(v, block, sa, plain);
       v = user->getResult(0))
    if (!isCudaPostOpLike(user))
      return true;
  Operation *def = conv.getInput().getDefiningOp();
  return def && def->getBlock() == &block && isElementwise(def) &&
         def->getResult(0).hasOneUse() && plain(def) && !isCudaPostOpLike(def);
}

/// The elementwise ops after each depthwise convolution (the bias add and
/// the activation), each the single reader of the value before it, write
/// that value's buffer (kInPlaceOperandAttrName): with no allocation
/// between their loop nests and the convolution's, the GPU runs them as one
/// kernel, and no buffer is added to the peak. An op stays a fused producer
/// where it is fused into the next depthwise convolution's input read.
void writeDepthwiseEpiloguesInPlace(
    Block &block, ShapeAnalysis &sa,
    llvm::function_ref<bool(Operation *)> plain) {
  for (Operation &op : block) {
    auto conv = dyn_cast<ConvOp>(op);
    if (!conv || !conv->hasAttr(kDepthwiseLoopsAttrName))
      continue;
    Value v = conv.getResult();
    while (Operation *user = inPlaceReader(v, block, sa, plain)) {
      if (isFusedProducer(user) && isa<ConvOp>(getFusionRoot(user)))
        break;
      int64_t idx = v.use_begin()->getOperandNumber();
      user->removeAttr(kFusedAttrName);
      user->setAttr(
          kInPlaceOperandAttrName,
          IntegerAttr::get(IntegerType::get(user->getContext(), 64), idx));
      v = user->getResult(0);
    }
  }
}

/// Whether `op`'s result gets a buffer of its own that nothing else views:
/// not a constant, nor an op the lowering may turn into a view of its
/// operand (a reshape, a slice, a transpose, an expand), nor control flow
/// (an If or Loop may yield a value from outside).
bool ownsBuffer(Operation *op) {
  return op->getNumResults() == 1 && op->getNumRegions() == 0 &&
         !op->hasTrait<OpTrait::ConstantLike>() &&
         !isa<DynamicReshapeOp, SliceOp, TransposeOp, ExpandOp>(op) &&
         !isFusedProducer(op) && !op->hasAttr(kInPlaceOperandAttrName);
}

/// The path from elementwise `op` to a value of `type` whose buffer `op`
/// can write: an operand read last there (one use), unbroadcast, made by
/// an op that owns its buffer; or such a value read through fused
/// elementwise producers (each of the same type, read unbroadcast). Each
/// step is (op, operand index), `op` first.
bool findDyingOperand(Operation *op, Type type, Block &block, ShapeAnalysis &sa,
                      SmallVectorImpl<std::pair<Operation *, unsigned>> &path) {
  for (OpOperand &use : op->getOpOperands()) {
    Value v = use.get();
    Operation *def = v.getDefiningOp();
    if (v.getType() != type || !v.hasOneUse() || !def ||
        def->getBlock() != &block)
      continue;
    bool mapped = true;
    for (int64_t j = 0, e = cast<RankedTensorType>(type).getRank(); j < e;
         ++j) {
      bool stretches;
      mapped &= isMappedDim(sa, op, v, j, stretches) && !stretches;
    }
    if (!mapped)
      continue;
    path.push_back({op, use.getOperandNumber()});
    if (isFusedProducer(def)
            ? isElementwise(def) && !def->hasAttr(kInPlaceOperandAttrName) &&
                  findDyingOperand(def, type, block, sa, path)
            : ownsBuffer(def))
      return true;
    path.pop_back();
  }
  return false;
}

/// Each returned elementwise result (a fusion root) whose loop nest reads
/// a value for the last time, element for element, writes that value's
/// buffer (kInPlaceOperandAttrName on the root and on the fused producers
/// it reads the value through): an SGD update `p - lr * g` of a training
/// step written into its gradient's buffer. The result's buffer lives to
/// the end of the run anyway; no new one is allocated while the operand is
/// still live, and on the GPU the updates of a step, with no allocation
/// between them, become one kernel (disc-gpu-fuse-independent-loops).
void writeOutputsInPlace(Block &block, ShapeAnalysis &sa,
                         llvm::function_ref<bool(Operation *)> plain) {
  Operation *term = block.getTerminator();
  for (Value out : term->getOperands()) {
    Operation *root = out.getDefiningOp();
    if (!root || root->getBlock() != &block || !isElementwise(root) ||
        isFusedProducer(root) || root->hasAttr(kInPlaceOperandAttrName) ||
        !plain(root))
      continue;
    SmallVector<std::pair<Operation *, unsigned>> path;
    if (!findDyingOperand(root, out.getType(), block, sa, path))
      continue;
    for (auto [op, idx] : path)
      op->setAttr(
          kInPlaceOperandAttrName,
          IntegerAttr::get(IntegerType::get(op->getContext(), 64), idx));
  }
}

} // namespace

bool mlir::disc::lowersToOneGeneric(ShapeAnalysis &sa, Operation *op) {
  return isElementwise(op) && isUnversioned(sa, op);
}

namespace {

struct DiscFusionPass : public disc::impl::DiscFusionBase<DiscFusionPass> {
  using DiscFusionBase::DiscFusionBase;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (depthwise != "off" && depthwise != "all" && depthwise != "cuda") {
      module.emitError("disc-fusion: depthwise must be 'off', 'all' or "
                       "'cuda', got '")
          << depthwise << "'";
      return signalPassFailure();
    }
    llvm::StringMap<DimRange> ranges = collectDimRanges(module);
    for (auto func : module.getOps<func::FuncOp>()) {
      if (func.isExternal() || !func.getBody().hasOneBlock())
        continue;
      Block &block = func.getBody().front();
      for (Operation &op : block) {
        op.removeAttr(kFusedAttrName);
        op.removeAttr(kInPlaceOperandAttrName);
        op.removeAttr(kDepthwiseLoopsAttrName);
      }
      ShapeAnalysis sa(func, ranges);
      sa.run();
      sa.mergeEqualSymbols();
      foldBroadcastsIntoReaders(block, sa);
      llvm::DenseMap<Operation *, bool> unversioned;
      auto plain = [&](Operation *op) {
        auto it = unversioned.find(op);
        if (it != unversioned.end())
          return it->second;
        return unversioned[op] = isUnversioned(sa, op);
      };
      if (depthwise != "off")
        for (Operation &op : block)
          if (auto conv = dyn_cast<ConvOp>(op);
              conv && conv.isDepthwise() &&
              (depthwise == "all" ||
               leavesKernelToCudaCall(conv, block, sa, plain)))
            conv->setAttr(kDepthwiseLoopsAttrName,
                          UnitAttr::get(&getContext()));
      for (Operation &op : block) {
        if (!isElementwise(&op) || !op.getResult(0).hasOneUse())
          continue;
        Operation *user = *op.getResult(0).getUsers().begin();
        if (user->getBlock() != &block || !plain(&op))
          continue;
        bool ok = false;
        if (isElementwise(user))
          ok = plain(user);
        else if (auto reduce = dyn_cast<ReduceOp>(user))
          ok = reduce.getInput() == op.getResult(0) && hasFullOperand(sa, &op);
        else if (auto conv = dyn_cast<ConvOp>(user))
          ok = conv->hasAttr(kDepthwiseLoopsAttrName) &&
               conv.getInput() == op.getResult(0);
        if (ok)
          op.setAttr(kFusedAttrName, UnitAttr::get(&getContext()));
      }
      writeDepthwiseEpiloguesInPlace(block, sa, plain);
      if (inPlaceOutputs)
        writeOutputsInPlace(block, sa, plain);
      sinkFusedProducers(block);
    }
  }
};
} // namespace

std::unique_ptr<Pass> mlir::disc::createDiscFusionPass() {
  return createDiscFusion();
}
