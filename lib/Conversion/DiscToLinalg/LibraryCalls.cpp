//===- LibraryCalls.cpp - disc ops lowered to runtime library calls -------===//
//
// See LibraryCalls.h. Operands reach the call as read-only buffers
// (`bufferization.to_buffer ... read_only`) cast to fully dynamic strided
// memrefs, so any layout one-shot bufferization picks (a transposed or
// sliced view) is passed without a copy; the runtime reads the strides.
//
//===----------------------------------------------------------------------===//
#include "LibraryCalls.h"

#include "disc/Conversion/Passes.h"
#include "disc/Transforms/Fusion.h"
#include "disc/Transforms/ShapeAnalysis.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/bit.h"

#include <cmath>
#include <limits>

namespace mlir::disc {
#define GEN_PASS_DEF_DISCMARKLIBRARYCALLS
#include "disc/Conversion/Passes.h.inc"
} // namespace mlir::disc

using namespace mlir;
using namespace mlir::disc;

namespace {

constexpr int64_t kDyn = ShapedType::kDynamic;

/// memref<?x...x?xf32, strided<[?, ...], offset: ?>> of `rank` dims, or
/// with the static `shape` when given.
MemRefType stridedType(MLIRContext *ctx, Type elt, int64_t rank,
                       ArrayRef<int64_t> shape = {}) {
  SmallVector<int64_t> dims(shape.begin(), shape.end());
  if (dims.empty())
    dims.assign(rank, kDyn);
  auto layout =
      StridedLayoutAttr::get(ctx, kDyn, SmallVector<int64_t>(rank, kDyn));
  return MemRefType::get(dims, elt, layout);
}

/// `tensor` as a read-only buffer of fully dynamic shape and strides.
Value asStridedBuffer(OpBuilder &b, Location loc, Value tensor) {
  auto t = cast<RankedTensorType>(tensor.getType());
  MLIRContext *ctx = b.getContext();
  Value buf = bufferization::ToBufferOp::create(
      b, loc, stridedType(ctx, t.getElementType(), t.getRank(), t.getShape()),
      tensor,
      /*read_only=*/true);
  return memref::CastOp::create(
      b, loc, stridedType(ctx, t.getElementType(), t.getRank()), buf);
}

/// The private function `name` (C interface) with `args` operand types.
func::FuncOp declare(OpBuilder &b, Operation *anchor, StringRef name,
                     TypeRange args) {
  auto module = anchor->getParentOfType<ModuleOp>();
  if (auto f = module.lookupSymbol<func::FuncOp>(name))
    return f;
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(module.getBody());
  auto f = func::FuncOp::create(b, module.getLoc(), name,
                                b.getFunctionType(args, {}));
  f.setPrivate();
  f->setAttr("llvm.emit_c_interface", b.getUnitAttr());
  return f;
}

/// A call of the runtime function `name` with `args`, in place of `op`.
void callRuntime(OpBuilder &b, Operation *op, StringRef name,
                 ArrayRef<Value> args) {
  func::FuncOp f = declare(b, op, name, ValueRange(args).getTypes());
  func::CallOp::create(b, op->getLoc(), f, args);
}

OpFoldResult mul(OpBuilder &b, Location loc, OpFoldResult x, OpFoldResult y) {
  std::optional<int64_t> cx = getConstantIntValue(x),
                         cy = getConstantIntValue(y);
  if (cx && cy)
    return b.getIndexAttr(*cx * *cy);
  return arith::MulIOp::create(b, loc,
                               getValueOrCreateConstantIndexOp(b, loc, x),
                               getValueOrCreateConstantIndexOp(b, loc, y))
      .getResult();
}

OpFoldResult product(OpBuilder &b, Location loc, ArrayRef<OpFoldResult> v) {
  OpFoldResult p = b.getIndexAttr(1);
  for (OpFoldResult x : v)
    p = mul(b, loc, p, x);
  return p;
}

/// A 64-byte aligned output buffer of `sizes` (identity layout) and its
/// tensor view.
std::pair<Value, Value> allocOutput(OpBuilder &b, Location loc, Type elt,
                                    ArrayRef<OpFoldResult> sizes) {
  SmallVector<int64_t> shape;
  SmallVector<Value> dyn;
  for (OpFoldResult s : sizes) {
    if (std::optional<int64_t> c = getConstantIntValue(s)) {
      shape.push_back(*c);
    } else {
      shape.push_back(kDyn);
      dyn.push_back(getValueOrCreateConstantIndexOp(b, loc, s));
    }
  }
  auto type = MemRefType::get(shape, elt);
  Value alloc =
      memref::AllocOp::create(b, loc, type, dyn, b.getI64IntegerAttr(64));
  Value tensor = bufferization::ToTensorOp::create(
      b, loc, RankedTensorType::get(shape, elt), alloc, /*restrict=*/true,
      /*writable=*/true);
  return {alloc, tensor};
}

/// `m` cast to fully dynamic shape and strides.
Value castStrided(OpBuilder &b, Location loc, Value m) {
  auto t = cast<MemRefType>(m.getType());
  return memref::CastOp::create(
      b, loc, stridedType(b.getContext(), t.getElementType(), t.getRank()), m);
}

/// The reassociation that collapses dims [0, n) of a rank-`rank` shape
/// into one, keeping the others.
SmallVector<ReassociationIndices> collapseLeadingDims(int64_t rank, int64_t n) {
  SmallVector<ReassociationIndices> assoc(1);
  for (int64_t i = 0; i < n; ++i)
    assoc[0].push_back(i);
  for (int64_t i = n; i < rank; ++i)
    assoc.push_back({i});
  return assoc;
}

/// Collapses dims [0, n) of the identity-layout buffer `m` into one.
Value collapseLeadingBuffer(OpBuilder &b, Location loc, Value m, int64_t n) {
  int64_t rank = cast<MemRefType>(m.getType()).getRank();
  return memref::CollapseShapeOp::create(b, loc, m,
                                         collapseLeadingDims(rank, n));
}

/// [X0, X1] -> [1, X0, X1].
Value prependUnitDim(OpBuilder &b, Location loc, Value x) {
  auto t = cast<RankedTensorType>(x.getType());
  SmallVector<OpFoldResult> out = {b.getIndexAttr(1)};
  llvm::append_range(out, tensor::getMixedSizes(b, loc, x));
  auto type = RankedTensorType::get({1, t.getDimSize(0), t.getDimSize(1)},
                                    t.getElementType());
  return tensor::ExpandShapeOp::create(
      b, loc, type, x, SmallVector<ReassociationIndices>{{0, 1}, {2}}, out);
}

/// Collapses dims [0, n) of `x` into one (n >= 2), keeping the others.
Value collapseLeading(OpBuilder &b, Location loc, Value x, int64_t n) {
  int64_t rank = cast<RankedTensorType>(x.getType()).getRank();
  return tensor::CollapseShapeOp::create(b, loc, x,
                                         collapseLeadingDims(rank, n));
}

Value i64(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(v));
}

} // namespace

static bool isF32(Value v) {
  return cast<RankedTensorType>(v.getType()).getElementType().isF32();
}

/// The number of leading dims a weight-gradient dot_general contracts
/// (`[K.., M] x [K.., N] -> [M, N]`, both operands contracting the same
/// k >= 2 leading dims, no batch dims), else 0.
static int64_t leadingContraction(DotGeneralOp op) {
  ArrayRef<int64_t> lc = op.getLhsContractingDimensions(),
                    rc = op.getRhsContractingDimensions();
  int64_t k = lc.size();
  if (k < 2 || lc != rc || !op.getLhsBatchingDimensions().empty() ||
      op.getLhs().getType().getRank() != k + 1 ||
      op.getRhs().getType().getRank() != k + 1)
    return 0;
  for (int64_t i = 0; i < k; ++i)
    if (lc[i] != i)
      return 0;
  return k;
}

/// The dot_general forms of lowerDotGeneralToLibraryCall.
static bool dotGeneralFits(DotGeneralOp op) {
  if (!isF32(op.getResult()) || !isF32(op.getLhs()) || !isF32(op.getRhs()))
    return false;
  ArrayRef<int64_t> lb = op.getLhsBatchingDimensions(),
                    rb = op.getRhsBatchingDimensions(),
                    lc = op.getLhsContractingDimensions(),
                    rc = op.getRhsContractingDimensions();
  int64_t lr = op.getLhs().getType().getRank();
  int64_t rr = op.getRhs().getType().getRank();
  int64_t nb = lb.size();
  if (leadingContraction(op))
    return true;
  if (lc.size() != 1 || rc.size() != 1 || lb != rb)
    return false;
  for (int64_t i = 0; i < nb; ++i)
    if (lb[i] != i)
      return false;
  if (nb == 0)
    return rr == 2 && lr >= 2 && (lr == 2 || lc[0] == lr - 1);
  return lr == nb + 2 && rr == nb + 2;
}

/// True when `v` is 8-bit integer data widened to i32 (`disc.convert`),
/// optionally minus a zero point also widened from 8 bits (`disc.sub`,
/// broadcast): what ConvInteger, QLinearConv and MatMulInteger import
/// their operands as (Frontend/Onnx/Quantization.cpp, toI32Centered), so
/// `v` spans at most 256 values (per channel of a per-channel zero point).
static bool isCentered8Bit(Value v) {
  auto widened = [](Value x) {
    auto c = x.getDefiningOp<ConvertOp>();
    if (!c)
      return false;
    Type src =
        cast<RankedTensorType>(c.getOperand().getType()).getElementType();
    return src.isInteger(8) &&
           cast<RankedTensorType>(x.getType()).getElementType().isInteger(32);
  };
  // A zero point folded to an i32 constant: its values are 8-bit ones.
  auto eightBitConstant = [](Value x) {
    DenseIntElementsAttr attr;
    if (!matchPattern(x, m_Constant(&attr)))
      return false;
    return llvm::all_of(attr.getValues<APInt>(), [](const APInt &a) {
      int64_t i = a.getSExtValue();
      return i >= -128 && i <= 255;
    });
  };
  if (widened(v))
    return true;
  auto sub = v.getDefiningOp<SubOp>();
  return sub && widened(sub.getLhs()) &&
         (widened(sub.getRhs()) || eightBitConstant(sub.getRhs()));
}

/// An int32 Conv of centered 8-bit operands (isCentered8Bit): the integer
/// Conv call (DISC_LIB_CONV_INT, oneDNN's u8 x s8 -> s32 convolution; see
/// runtime/lib/cpu/LibraryCalls.cpp for how the zero points are handled
/// exactly). The filter must be computed from constants (a constant, or
/// its widening and centering): the runtime keeps it reordered. Other
/// integer Convs (dynamic weights, data of wider types) keep the linalg
/// lowering, as do integer MatMuls (MatMulInteger) for now.
static bool intConvFits(ConvOp op) {
  auto i32 = [](Value v) {
    return cast<RankedTensorType>(v.getType()).getElementType().isInteger(32);
  };
  if (!i32(op.getResult()) || !i32(op.getInput()) || !i32(op.getFilter()) ||
      !isCentered8Bit(op.getInput()))
    return false;
  Value w = op.getFilter();
  auto fromConstants = [](Value x) {
    Operation *def = x.getDefiningOp();
    return def && (matchPattern(x, m_Constant()) || isa<ConstantOp>(def));
  };
  if (fromConstants(w))
    return true;
  if (!isCentered8Bit(w))
    return false;
  Operation *def = w.getDefiningOp();
  auto widenedConstant = [&](Value x) {
    auto c = x.getDefiningOp<ConvertOp>();
    return c ? fromConstants(c.getOperand()) : fromConstants(x);
  };
  if (auto sub = dyn_cast<SubOp>(def))
    return widenedConstant(sub.getLhs()) && widenedConstant(sub.getRhs());
  return widenedConstant(w);
}

static bool convFits(ConvOp op) {
  int64_t k = op.getType().getRank() - 2;
  auto ft = cast<RankedTensorType>(op.getFilter().getType());
  if (op.getFeatureGroupCount() > 1 &&
      (ft.isDynamicDim(0) || ft.isDynamicDim(1)))
    return false; // the linalg lowering reports it
  if (k < 1 || k > 3)
    return false;
  if (intConvFits(op))
    return true;
  return isF32(op.getResult()) && isF32(op.getInput()) && isF32(op.getFilter());
}

/// True for a Conv that becomes the integer Conv call.
static bool isIntConvCall(Operation *op) {
  auto c = dyn_cast<ConvOp>(op);
  return c && !isF32(c.getResult()) && convFits(c);
}

/// ConvTranspose forms oneDNN's deconvolution takes: no negative begin pad
/// (an output_padding beyond the end pad is a negative end pad, which
/// oneDNN takes: the data gradient of a strided Conv that never read the
/// input's last positions).
static bool convTransposeFits(ConvTransposeOp op) {
  int64_t k = op.getType().getRank() - 2;
  if (!isF32(op.getResult()) || !isF32(op.getInput()) ||
      !isF32(op.getFilter()) || k < 1 || k > 3)
    return false;
  ArrayRef<int64_t> pad = op.getPadding();
  for (int64_t i = 0; i < k; ++i)
    if (pad[i] < 0)
      return false;
  return true;
}

/// MaxPool / AveragePool forms oneDNN's pooling takes (DISC_LIB_POOL):
/// f32, 1-3 spatial dims, no dilation, pads below the window (oneDNN's
/// limit), and no average counting the padding in ceil_mode (oneDNN would
/// count the windows' overhang past the end pad too).
static bool poolFits(PoolOp op) {
  int64_t k = op.getWindow().size();
  if (!isF32(op.getResult()) || !isF32(op.getInput()) || k < 1 || k > 3 ||
      op.getType().getRank() != k + 2 ||
      (op.getKind() == PoolKind::Avg && op.getCountIncludePad() &&
       op.getCeilMode()))
    return false;
  ArrayRef<int64_t> pad = op.getPadding();
  for (int64_t i = 0; i < k; ++i)
    if (op.getDilations()[i] != 1 || pad[i] >= op.getWindow()[i] ||
        pad[k + i] >= op.getWindow()[i])
      return false;
  return true;
}

bool mlir::disc::fitsLibraryCall(Operation *op) {
  if (auto p = dyn_cast<PoolOp>(op))
    return poolFits(p);
  if (auto t = dyn_cast<ConvTransposeOp>(op))
    return convTransposeFits(t);
  if (auto f = dyn_cast<ConvBackwardFilterOp>(op)) {
    int64_t k = f.getType().getRank() - 2;
    return isF32(f.getResult()) && isF32(f.getInput()) &&
           isF32(f.getGradOutput()) && k >= 1 && k <= 3;
  }
  if (auto d = dyn_cast<DotGeneralOp>(op))
    return dotGeneralFits(d);
  if (auto c = dyn_cast<ConvOp>(op))
    return convFits(c);
  return false;
}

/// The value of `v` when it is a constant f32 splat.
static std::optional<float> splatF32(Value v) {
  DenseElementsAttr attr;
  if (!matchPattern(v, m_Constant(&attr)) || !attr.isSplat() ||
      !attr.getElementType().isF32())
    return std::nullopt;
  return attr.getSplatValue<APFloat>().convertToFloat();
}

/// The dim of a right-aligned bias `bias` that carries the channels of a
/// result of rank `rank` whose channel dim is `channelDim` with static size
/// `channels`: true when `bias` is a constant with that many elements along
/// that dim and size 1 elsewhere.
static bool isChannelBias(Value bias, int64_t rank, int64_t channelDim,
                          int64_t channels) {
  auto t = cast<RankedTensorType>(bias.getType());
  if (!matchPattern(bias, m_Constant()) || !t.hasStaticShape() ||
      t.getRank() < 1 || t.getRank() > rank || channels == ShapedType::kDynamic)
    return false;
  for (int64_t i = 0; i < t.getRank(); ++i) {
    int64_t at = rank - t.getRank() + i;
    if (t.getDimSize(i) != (at == channelDim ? channels : 1))
      return false;
  }
  return t.getNumElements() == channels;
}

/// The NHWC bits of the Conv, ConvTranspose and pooling calls of `body`
/// (docs/runtime-abi.md, *Post-ops*): a call's final value (`finalOf`:
/// after its fused post-ops) whose every reader reads NHWC is written NHWC
/// (bit 64), and each reader that is a call reads it NHWC (bit 128 input,
/// 256 residual). The readers that read NHWC: such a call of `body` reading
/// the value as its input (operand 0, not as its weights) or as the
/// residual of a Conv's post-op chain (`residualOwner`: a fused residual add
/// -> its call), and a Concat along the channels whose every operand is
/// written NHWC (a call's final value or such a Concat) and whose every
/// reader reads NHWC (kNhwcConcatAttr, set here: its copies run on NHWC
/// views; SqueezeNet's fire modules, Inception's blocks). A value returned,
/// viewed or read by a loop nest keeps NCHW. NHWC has the byte size of NCHW,
/// so the buffers and the memory model are unchanged.
static llvm::DenseMap<Operation *, int64_t>
nhwcBits(Block &body, ArrayRef<std::pair<Operation *, Value>> finalOf,
         const llvm::DenseMap<Operation *, Operation *> &residualOwner) {
  llvm::DenseMap<Operation *, int64_t> bits;
  auto isConvCall = [](Operation *op) {
    return isa<ConvOp, ConvTransposeOp, PoolOp>(op) &&
           op->hasAttr(kLibraryCallAttr);
  };
  // The channel Concats that may run NHWC: shrunk to a fixed point below.
  llvm::SmallPtrSet<Operation *, 8> concats;
  llvm::SmallPtrSet<Value, 16> written; // call final values
  for (auto [call, v] : finalOf)
    if (isa<ConvOp, ConvTransposeOp, PoolOp>(call))
      written.insert(v);
  for (Operation &op : body) {
    auto c = dyn_cast<ConcatenateOp>(op);
    int64_t rank = c ? cast<RankedTensorType>(c.getType()).getRank() : 0;
    if (c && c.getDimension() == 1 && rank >= 3 && rank <= 5 &&
        !c->use_empty() && c.getInputs().size() >= 2)
      concats.insert(c);
  }
  auto readsNhwc = [&](OpOperand &use) {
    Operation *user = use.getOwner();
    Value v = use.get();
    if (user->getBlock() != &body)
      return false;
    if (isConvCall(user))
      return use.getOperandNumber() == 0 &&
             (isa<PoolOp>(user) || user->getOperand(1) != v);
    if (concats.contains(user))
      return true;
    if (auto it = residualOwner.find(user);
        it != residualOwner.end() && isa<ConvOp>(it->second)) {
      auto idx = user->getAttrOfType<IntegerAttr>(kFusedIntoCallAttr);
      return idx && use.getOperandNumber() == 1 - idx.getInt();
    }
    return false;
  };
  auto allReadNhwc = [&](Value v) {
    return llvm::all_of(v.getUses(),
                        [&](OpOperand &use) { return readsNhwc(use); });
  };
  for (bool changed = true; changed;) {
    changed = false;
    for (Operation *c : llvm::to_vector(concats)) {
      bool ok =
          allReadNhwc(c->getResult(0)) &&
          llvm::all_of(c->getOperands(), [&](Value in) {
            Operation *def = in.getDefiningOp();
            return (written.contains(in) || (def && concats.contains(def))) &&
                   allReadNhwc(in);
          });
      if (!ok) {
        concats.erase(c);
        changed = true;
      }
    }
  }
  // The readers of an NHWC value `v` read it NHWC.
  auto markReaders = [&](Value v) {
    for (OpOperand &use : v.getUses()) {
      Operation *user = use.getOwner();
      if (isConvCall(user))
        bits[user] |= 128;
      else if (!concats.contains(user))
        bits[residualOwner.lookup(user)] |= 256;
    }
  };
  for (auto [call, v] : finalOf) {
    if (!isa<ConvOp, ConvTransposeOp, PoolOp>(call) || v.use_empty() ||
        !allReadNhwc(v))
      continue;
    bits[call] |= 64;
    markReaders(v);
  }
  UnitAttr unit = UnitAttr::get(body.getParentOp()->getContext());
  for (Operation *c : concats) {
    c->setAttr(kNhwcConcatAttr, unit);
    markReaders(c->getResult(0));
  }
  return bits;
}

/// True when `v` is a splat f32 constant within 1e-6 (relative) of `want`.
static bool isSplatNear(Value v, float want) {
  std::optional<float> c = splatF32(v);
  return c && std::fabs(*c - want) <= 1e-6f * std::max(1.0f, std::fabs(want));
}

/// True when `op` is an `OpT` of `a` and `b` in either order (a Value) or
/// of `a` and a splat constant near `b` (a float; for a DivOp only as the
/// divisor).
template <typename OpT>
static bool isBinaryOf(Operation *op, Value a, Value b) {
  return op && isa<OpT>(op) &&
         ((op->getOperand(0) == a && op->getOperand(1) == b) ||
          (op->getOperand(1) == a && op->getOperand(0) == b));
}
template <typename OpT>
static bool isBinaryOf(Operation *op, Value a, float b) {
  if (!op || !isa<OpT>(op))
    return false;
  if (op->getOperand(0) == a && isSplatNear(op->getOperand(1), b))
    return true;
  return !isa<DivOp>(op) && op->getOperand(1) == a &&
         isSplatNear(op->getOperand(0), b);
}

/// An activation the importer or the exporter writes as several ops
/// reading the chain value twice, fused as one post-op (its flag).
struct ActivationGroup {
  int64_t flag = 0;
  /// Its ops in block order; the chain value's readers are ops[0] and one
  /// other, each op's result is read only by the next, the last one's is
  /// the activation's value.
  SmallVector<Operation *> ops;
  /// The post-op list entries: one per step of the chain (nextPostOp),
  /// from the chain value to the op that reads it last, then one per op
  /// after that.
  SmallVector<StringRef> kinds;
};

/// The group activation applied to `cur` by the ops after `last` in block
/// order (`next`: the next non-constant op): SiLU (`Sigmoid`, `Mul` by the
/// value), HardSwish (`Mul` by 1/6, `Add` 0.5, `Min` 1 and `Max` 0 in
/// either order, `Mul` by the value: ONNX HardSwish and HardSigmoid(1/6,
/// 0.5) * x as imported) and GELU as torch.onnx exports nn.GELU (`Div` by
/// sqrt(2) or `Mul` by its inverse, `Erf`, `Add` 1, `Mul` by the value,
/// `Mul` 0.5).
static std::optional<ActivationGroup>
matchActivationGroup(Value cur, Operation *last,
                     llvm::function_ref<Operation *(Operation *)> next) {
  if (!llvm::hasNItems(cur.getUses(), 2))
    return std::nullopt;
  SmallVector<Operation *> ops;
  for (Operation *op = next(last); op && ops.size() < 5; op = next(op))
    ops.push_back(op);
  auto res = [&](size_t i) { return ops[i]->getResult(0); };
  auto has = [&](size_t n) { return ops.size() >= n; };
  ActivationGroup g;
  if (has(2) && isa<LogisticOp>(ops[0]) && ops[0]->getOperand(0) == cur &&
      isBinaryOf<MulOp>(ops[1], cur, res(0))) {
    g = {kSwishFlag, {ops[0], ops[1]}, {"silu"}};
  } else if (has(5) && isBinaryOf<MulOp>(ops[0], cur, 1.0f / 6.0f) &&
             isBinaryOf<AddOp>(ops[1], res(0), 0.5f) &&
             ((isBinaryOf<MinOp>(ops[2], res(1), 1.0f) &&
               isBinaryOf<MaxOp>(ops[3], res(2), 0.0f)) ||
              (isBinaryOf<MaxOp>(ops[2], res(1), 0.0f) &&
               isBinaryOf<MinOp>(ops[3], res(2), 1.0f))) &&
             isBinaryOf<MulOp>(ops[4], cur, res(3))) {
    g = {kHardSwishFlag, ops, {"hardswish"}};
  } else if (has(5) &&
             (isBinaryOf<DivOp>(ops[0], cur, std::sqrt(2.0f)) ||
              isBinaryOf<MulOp>(ops[0], cur, 1.0f / std::sqrt(2.0f))) &&
             isa<ErfOp>(ops[1]) && ops[1]->getOperand(0) == res(0) &&
             isBinaryOf<AddOp>(ops[2], res(1), 1.0f) &&
             isBinaryOf<MulOp>(ops[3], cur, res(2)) &&
             isBinaryOf<MulOp>(ops[4], res(3), 0.5f)) {
    g = {kGeluErfFlag, ops, {"gelu", "gelu_half"}};
  } else {
    return std::nullopt;
  }
  // Same shape throughout (no broadcast), and nothing else reads the
  // group's values but the group.
  for (auto [i, op] : llvm::enumerate(g.ops)) {
    if (op->getNumResults() != 1 || op->getResult(0).getType() != cur.getType())
      return std::nullopt;
    if (i + 1 < g.ops.size() && !op->getResult(0).hasOneUse())
      return std::nullopt;
  }
  return g;
}

/// True when `perm` moves the channels dim of a rank-`r` tensor from last
/// to second (`toNchw`, NHWC -> NCHW: [0, r-1, 1, ..., r-2]) or from
/// second to last (NCHW -> NHWC: [0, 2, ..., r-1, 1]).
static bool isChannelsPermutation(ArrayRef<int64_t> perm, bool toNchw) {
  int64_t r = perm.size();
  if (r < 3 || r > 5 || perm[0] != 0)
    return false;
  for (int64_t i = 1; i < r; ++i) {
    int64_t want = toNchw ? (i == 1 ? r - 1 : i - 1) : (i == r - 1 ? 1 : i + 1);
    if (perm[i] != want)
      return false;
  }
  return true;
}

/// True when `v` is known to be a dense buffer in row-major order once
/// bufferized: not a strided slice or a broadcast, through the NHWC views.
static bool isDenseRowMajor(Block &body, Value v) {
  while (Operation *def = v.getDefiningOp()) {
    if (def->getBlock() != &body || isa<SliceOp, ExpandOp>(def))
      return false;
    if (!def->hasAttr(kNhwcViewAttr))
      return true;
    v = def->getOperand(0);
  }
  return true;
}

/// The Transposes that only reorder a Conv or ConvTranspose call's
/// operand or result between NHWC and NCHW, as tf2onnx exports TensorFlow
/// graphs (`Transpose(0,3,1,2) -> Conv -> Transpose(0,2,3,1)`), become
/// views (kNhwcViewAttr) and the call reads or writes NHWC instead: a
/// call's final value whose every reader is such a Transpose to NHWC is
/// written NHWC (bit 64); a Transpose to NCHW of a dense buffer whose
/// every reader is a call reading it as its input is read NHWC (bit 128).
/// Returns the bits per call; the buffers are the same size, the copies
/// (and the reorders the call made around the kernel) are gone.
static llvm::DenseMap<Operation *, int64_t>
nhwcTransposeViews(Block &body,
                   ArrayRef<std::pair<Operation *, Value>> finalOf) {
  llvm::DenseMap<Operation *, int64_t> bits;
  UnitAttr unit = UnitAttr::get(body.getParentOp()->getContext());
  auto isConvCall = [](Operation *op) {
    return isa<ConvOp, ConvTransposeOp>(op) && op->hasAttr(kLibraryCallAttr);
  };
  auto isTransposeTo = [&](Operation *op, bool toNchw) {
    auto t = dyn_cast<TransposeOp>(op);
    return t && t->getBlock() == &body &&
           isChannelsPermutation(t.getPermutation(), toNchw);
  };
  for (auto [call, v] : finalOf) {
    if (!isConvCall(call) || v.use_empty() ||
        !llvm::all_of(v.getUsers(), [&](Operation *user) {
          return isTransposeTo(user, /*toNchw=*/false);
        }))
      continue;
    bits[call] |= 64;
    for (Operation *user : v.getUsers())
      user->setAttr(kNhwcViewAttr, unit);
  }
  for (Operation &op : body) {
    if (!isTransposeTo(&op, /*toNchw=*/true) || op.use_empty() ||
        !isDenseRowMajor(body, op.getOperand(0)))
      continue;
    Value t = op.getResult(0);
    if (!llvm::all_of(t.getUses(), [&](OpOperand &use) {
          Operation *user = use.getOwner();
          return isConvCall(user) && use.getOperandNumber() == 0 &&
                 user->getOperand(1) != t;
        }))
      continue;
    op.setAttr(kNhwcViewAttr, unit);
    for (Operation *user : t.getUsers())
      bits[user] |= 128;
  }
  return bits;
}

void mlir::disc::markLibraryCalls(func::FuncOp func,
                                  llvm::function_ref<bool(Operation *)> fits,
                                  bool clipAndEltwise, bool nhwc,
                                  bool scaledResidual, bool transposePostOps) {
  if (func.isExternal())
    return;
  Block &body = func.getBody().front();
  func.walk([&](Operation *op) {
    op->removeAttr(kLibraryCallAttr);
    op->removeAttr(kPostOpsAttr);
    op->removeAttr(kFusedIntoCallAttr);
    op->removeAttr(kPostOpAttrsAttr);
    op->removeAttr(kNhwcViewAttr);
    op->removeAttr(kNhwcConcatAttr);
  });
  // The CPU lowering takes ops in regions (If/Loop bodies, recurrent
  // layers) to the same calls by fitsLibraryCall, without post-ops (the
  // integer Conv by its mark, given in the entry block only): marked too,
  // so that the memory model counts their temporaries.
  if (!fits)
    func.walk([&](Operation *op) {
      if (op->getBlock() != &body && !isIntConvCall(op) && fitsLibraryCall(op))
        op->setAttr(kLibraryCallAttr, UnitAttr::get(op->getContext()));
    });
  auto module = func->getParentOfType<ModuleOp>();
  llvm::StringMap<DimRange> ranges = collectDimRanges(module);
  ShapeAnalysis sa(func, ranges); // keeps a reference to `ranges`
  sa.run();
  sa.mergeEqualSymbols();
  Builder b(func.getContext());
  // Same dims (proven) as `ref`, so the op does not broadcast.
  auto sameShape = [&](Value v, Value ref) {
    auto vt = cast<RankedTensorType>(v.getType());
    auto rt = cast<RankedTensorType>(ref.getType());
    if (vt != rt)
      return false;
    for (int64_t j = 0; j < rt.getRank(); ++j)
      if (rt.isDynamicDim(j) && !sa.isProvenEqual(v, j, ref, j))
        return false;
    return true;
  };
  // The next op after `op` in the block that is not a constant.
  auto nextNonConstant = [](Operation *op) -> Operation * {
    for (Operation *n = op->getNextNode(); n; n = n->getNextNode())
      if (!n->hasTrait<OpTrait::ConstantLike>())
        return n;
    return nullptr;
  };
  // Each call's final value (after its post-ops), and the call each fused
  // residual add belongs to, for the NHWC chains.
  SmallVector<std::pair<Operation *, Value>> finalOf;
  llvm::DenseMap<Operation *, Operation *> residualOwner;
  for (Operation &op : body) {
    if (!(fits ? fits(&op) : fitsLibraryCall(&op)))
      continue;
    op.setAttr(kLibraryCallAttr, b.getUnitAttr());
    if (isa<ConvBackwardFilterOp>(op) || isIntConvCall(&op))
      continue; // no post-ops, never NHWC
    if (isa<PoolOp>(op) || (isa<ConvTransposeOp>(op) && !transposePostOps)) {
      finalOf.push_back({&op, op.getResult(0)});
      continue; // no post-ops
    }
    auto rt = cast<RankedTensorType>(op.getResult(0).getType());
    bool isConv = isa<ConvOp, ConvTransposeOp>(op);
    int64_t channelDim = isConv ? 1 : rt.getRank() - 1;
    int64_t channels = rt.getDimSize(channelDim);
    bool bias = false, residual = false;
    // MatMul: the product's scale (a scaled residual add or subtraction).
    std::optional<float> alpha;
    // The activation: none yet, a clip (bounds so far), or a final one.
    enum { None, Clip, Final } act = None;
    float lo = -std::numeric_limits<float>::infinity(),
          hi = std::numeric_limits<float>::infinity();
    bool hasLo = false, hasHi = false, relu = false;
    int64_t eltFlag = 0;
    SmallVector<Attribute> post;
    Value cur = op.getResult(0);
    Operation *last = &op;
    // `other` may be a residual: not a constant, same dims as the chain,
    // defined before the call in a buffer of its own (dense).
    auto residualFits = [&](Value other, Value chain) {
      if (!sameShape(other, chain) || matchPattern(other, m_Constant()))
        return false;
      Operation *def = other.getDefiningOp();
      return !def || (def->getBlock() == &body && def->isBeforeInBlock(&op) &&
                      !isa<SliceOp, DynamicReshapeOp, ExpandOp>(def));
    };
    // Marks `user` (its chain operand `idx`) as fused into the call.
    auto markFused = [&](Operation *user, unsigned idx) {
      user->setAttr(kFusedIntoCallAttr, b.getI64IntegerAttr(idx));
      // A post-op is computed by the call, not by a fused loop nest: it
      // and the producer of its other operand (read from memory by the
      // call) leave disc-fusion's chains, and it no longer writes the
      // buffer of an operand of its own (a depthwise epilogue's).
      user->removeAttr(kFusedAttrName);
      user->removeAttr(kInPlaceOperandAttrName);
      if (user->getNumOperands() == 2)
        if (Operation *def = user->getOperand(1 - idx).getDefiningOp())
          def->removeAttr(kFusedAttrName);
      cur = user->getResult(0);
      last = user;
    };
    // Marks `user` as the post-op `kind`.
    auto fuse = [&](Operation *user, StringRef kind, unsigned idx) {
      post.push_back(b.getStringAttr(kind));
      markFused(user, idx);
    };
    // A MatMul whose product is scaled by a constant and added to or
    // subtracted from a residual, `r - c * (A x B)` (an SGD step on the
    // weight gradient A x B) or `r + c * (A x B)`: the scale and the add as
    // two post-ops, the call's output scale and residual add.
    if (scaledResidual && isa<DotGeneralOp>(op) && cur.hasOneUse()) {
      Operation *mul = *cur.getUsers().begin();
      Operation *next =
          mul->getNumResults() == 1 && mul->getResult(0).hasOneUse()
              ? *mul->getResult(0).getUsers().begin()
              : nullptr;
      if (isa<MulOp>(mul) && mul == nextNonConstant(&op) &&
          mul->getOperand(0) != mul->getOperand(1) &&
          sameShape(mul->getResult(0), cur) && next &&
          next == nextNonConstant(mul) && isa<AddOp, SubOp>(next) &&
          next->getOperand(0) != next->getOperand(1) &&
          sameShape(next->getResult(0), cur)) {
        unsigned mi = mul->getOperand(0) == cur ? 0 : 1;
        unsigned ri = next->getOperand(0) == mul->getResult(0) ? 0 : 1;
        std::optional<float> c = splatF32(mul->getOperand(1 - mi));
        if (c && std::isfinite(*c) && (isa<AddOp>(next) || ri == 1) &&
            residualFits(next->getOperand(1 - ri), cur)) {
          alpha = isa<SubOp>(next) ? -*c : *c;
          residual = true;
          fuse(mul, "scale", mi);
          fuse(next, isa<SubOp>(next) ? "sub" : "add", ri);
          residualOwner[next] = &op;
          act = Final;
        }
      }
    }
    while (act != Final && !cur.use_empty()) {
      if (!cur.hasOneUse()) {
        // SiLU, HardSwish, GELU: the last post-op.
        std::optional<ActivationGroup> g;
        if (act == None && clipAndEltwise)
          g = matchActivationGroup(cur, last, nextNonConstant);
        if (!g)
          break;
        Value value = cur;
        for (Operation *user : g->ops) {
          Value chain =
              llvm::is_contained(user->getOperands(), value) ? value : cur;
          markFused(user, user->getOperand(0) == chain ? 0 : 1);
        }
        for (StringRef kind : g->kinds)
          post.push_back(b.getStringAttr(kind));
        eltFlag = g->flag;
        act = Final;
        break;
      }
      Operation *user = *cur.getUsers().begin();
      if (user != nextNonConstant(last) || user->getNumResults() != 1 ||
          !sameShape(user->getResult(0), cur))
        break;
      StringRef kind;
      unsigned idx = 0;
      if (user->getNumOperands() == 1) {
        // Sigmoid, Tanh: the last post-op.
        if (act != None || !clipAndEltwise)
          break;
        if (isa<LogisticOp>(user)) {
          kind = "sigmoid";
          eltFlag = 16;
        } else if (isa<TanhOp>(user)) {
          kind = "tanh";
          eltFlag = 32;
        } else {
          break;
        }
        act = Final;
      } else {
        if (user->getNumOperands() != 2 ||
            user->getOperand(0) == user->getOperand(1))
          break;
        idx = user->getOperand(0) == cur ? 0 : 1;
        Value other = user->getOperand(1 - idx);
        std::optional<float> c = splatF32(other);
        if (isa<AddOp>(user) && act == None && !bias &&
            isChannelBias(other, rt.getRank(), channelDim, channels)) {
          kind = "bias";
          bias = true;
        } else if (isa<AddOp>(user) && act == None && !residual &&
                   sameShape(other, cur) &&
                   !matchPattern(other, m_Constant())) {
          if (!residualFits(other, cur))
            break;
          kind = "add";
          residual = true;
          residualOwner[user] = &op;
        } else if (isa<MaxOp>(user) && c && !std::isnan(*c) && !hasLo &&
                   (!hasHi || *c <= hi) &&
                   (clipAndEltwise || (*c == 0.0f && !hasHi))) {
          // Relu (max with 0) or a Clip's lower bound.
          kind = *c == 0.0f && !hasHi ? "relu" : "max";
          relu = *c == 0.0f && !hasHi;
          lo = *c;
          hasLo = true;
          act = hasHi ? Final : Clip;
        } else if (isa<MinOp>(user) && c && !std::isnan(*c) && !hasHi &&
                   (!hasLo || lo <= *c) && clipAndEltwise) {
          kind = "min";
          hi = *c;
          hasHi = true;
          act = hasLo ? Final : Clip;
        } else {
          break;
        }
      }
      fuse(user, kind, idx);
    }
    finalOf.push_back({&op, cur});
    if (post.empty())
      continue;
    op.setAttr(kPostOpsAttr, b.getArrayAttr(post));
    // The runtime's encoding (kPostOpAttrsAttr).
    SmallVector<int64_t> attrs = {(bias ? 1 : 0) | (residual ? 2 : 0)};
    if (relu && !hasHi) {
      attrs[0] |= 4;
    } else if (hasLo || hasHi) {
      attrs[0] |= 8;
      attrs.push_back(llvm::bit_cast<uint32_t>(lo));
      attrs.push_back(llvm::bit_cast<uint32_t>(hi));
    } else {
      attrs[0] |= eltFlag;
    }
    if (alpha) {
      attrs[0] |= kMatmulScaleFlag;
      attrs.push_back(llvm::bit_cast<uint32_t>(*alpha));
    }
    op.setAttr(kPostOpAttrsAttr, b.getDenseI64ArrayAttr(attrs));
  }
  if (!nhwc)
    return;
  // The NHWC bits join the flags word; a call without post-ops gets one.
  llvm::DenseMap<Operation *, int64_t> bits =
      nhwcBits(body, finalOf, residualOwner);
  for (auto [call, bit] : nhwcTransposeViews(body, finalOf))
    bits[call] |= bit;
  // MatMuls by constant weights: packed once by the runtime.
  for (auto [call, v] : finalOf)
    if (auto dot = dyn_cast<DotGeneralOp>(call);
        dot && dot.getLhsBatchingDimensions().empty() &&
        matchPattern(dot.getRhs(), m_Constant()))
      bits[call] |= kMatmulConstWeightsFlag;
  for (auto [call, bit] : bits) {
    SmallVector<int64_t> attrs = {0};
    if (auto a = call->getAttrOfType<DenseI64ArrayAttr>(kPostOpAttrsAttr))
      attrs.assign(a.asArrayRef().begin(), a.asArrayRef().end());
    attrs[0] |= bit;
    call->setAttr(kPostOpAttrsAttr, b.getDenseI64ArrayAttr(attrs));
  }
}

namespace {
struct DiscMarkLibraryCallsPass
    : public disc::impl::DiscMarkLibraryCallsBase<DiscMarkLibraryCallsPass> {
  void runOnOperation() override { markLibraryCalls(getOperation()); }
};
} // namespace

/// Post-op operands and attributes of a marked call (kPostOpsAttr): bias
/// (a 1-D constant), residual (the lowered tensor), and the trailing call
/// attributes (kPostOpAttrsAttr: flags, clip bounds; docs/runtime-abi.md).
struct PostOps {
  Value bias, residual;
  int64_t flags = 0;
  SmallVector<int64_t> attrs;
  bool any = false;
};

static PostOps collectPostOps(OpBuilder &b, Operation *op) {
  PostOps p;
  // A Conv call with only NHWC bits has the flags word and no post-op list.
  auto encoded = op->getAttrOfType<DenseI64ArrayAttr>(kPostOpAttrsAttr);
  auto list = op->getAttrOfType<ArrayAttr>(kPostOpsAttr);
  if (!encoded && !list)
    return p;
  p.any = true;
  assert(encoded && !encoded.empty() && "post-ops without their encoding");
  p.attrs.assign(encoded.asArrayRef().begin(), encoded.asArrayRef().end());
  p.flags = p.attrs[0];
  if (!list)
    return p;
  Value cur = op->getResult(0);
  for (Attribute a : list) {
    Operation *user = nextPostOp(cur);
    assert(user && "a post-op list longer than the chain");
    auto idx = user->getAttrOfType<IntegerAttr>(kFusedIntoCallAttr).getInt();
    Value other =
        user->getNumOperands() == 2 ? user->getOperand(1 - idx) : Value();
    StringRef kind = cast<StringAttr>(a).getValue();
    if (kind == "bias") {
      // Materialized at the call (the constant may come later in the
      // block), viewed as 1-D. Large initializers are resource attributes,
      // so the attribute is kept as is and the tensor collapsed.
      Attribute attr;
      bool ok = matchPattern(other, m_Constant(&attr));
      assert(ok && "a bias post-op is a constant");
      (void)ok;
      auto t = cast<RankedTensorType>(other.getType());
      Value c =
          arith::ConstantOp::create(b, op->getLoc(), t, cast<TypedAttr>(attr));
      if (t.getRank() != 1)
        c = tensor::CollapseShapeOp::create(
            b, op->getLoc(), c, collapseLeadingDims(t.getRank(), t.getRank()));
      p.bias = c;
    } else if (kind == "add" || kind == "sub") {
      p.residual = other;
    }
    cur = user->getResult(0);
  }
  return p;
}

/// Appends the post-op attributes of `p` to `args`; returns the suffix of
/// the callee's name: `_post<M>` (M: bit 0 bias, bit 1 residual operand),
/// then `c` when the clip bounds follow the flags, then (`matmul`) `s`
/// when the product's scale follows them.
static std::string postOpArgs(OpBuilder &b, Location loc, const PostOps &p,
                              SmallVectorImpl<Value> &args,
                              bool matmul = false) {
  for (int64_t a : p.attrs)
    args.push_back(i64(b, loc, a));
  return "_post" + std::to_string(p.flags & 3) + ((p.flags & 8) ? "c" : "") +
         (matmul && (p.flags & kMatmulScaleFlag) ? "s" : "");
}

std::optional<Value>
mlir::disc::lowerDotGeneralToLibraryCall(OpBuilder &b, DotGeneralOp op,
                                         ArrayRef<OpFoldResult> dims) {
  if (!dotGeneralFits(op))
    return std::nullopt;
  RankedTensorType rt = op.getType();
  Type elt = rt.getElementType();
  Value lhs = op.getLhs(), rhs = op.getRhs();
  ArrayRef<int64_t> lc = op.getLhsContractingDimensions(),
                    rc = op.getRhsContractingDimensions();
  int64_t lr = cast<RankedTensorType>(lhs.getType()).getRank();
  int64_t nb = op.getLhsBatchingDimensions().size();
  Location loc = op.getLoc();
  bool transA = false, transB = false;
  Value a3, b3;
  int64_t cr = rt.getRank();
  if (int64_t k = leadingContraction(op)) {
    // [K.., M] x [K.., N]: the Gemm A^T B of the collapsed operands.
    transA = true;
    a3 = prependUnitDim(b, loc, collapseLeading(b, loc, lhs, k));
    b3 = prependUnitDim(b, loc, collapseLeading(b, loc, rhs, k));
  } else if (nb == 0) {
    // [.., M, K] x [K, N] (or transposed 2-D operands, Gemm).
    transB = rc[0] == 1;
    transA = lr == 2 && lc[0] == 0;
    Value l2 = lr > 2 ? collapseLeading(b, loc, lhs, lr - 1) : lhs;
    a3 = prependUnitDim(b, loc, l2);
    b3 = prependUnitDim(b, loc, rhs);
  } else {
    // [B.., M, K] x [B.., K, N], either operand transposed.
    transA = lc[0] == nb;
    transB = rc[0] == nb + 1;
    a3 = nb > 1 ? collapseLeading(b, loc, lhs, nb) : lhs;
    b3 = nb > 1 ? collapseLeading(b, loc, rhs, nb) : rhs;
  }
  Value aBuf = asStridedBuffer(b, loc, a3);
  Value bBuf = asStridedBuffer(b, loc, b3);
  PostOps post = collectPostOps(b, op);
  // The output is allocated with the result's shape and viewed as
  // [B, M, N] (expanding a buffer instead trips expand-strided-metadata on
  // groups of several dynamic sizes). An accumulating call
  // (disc-mark-in-place-state) writes the residual's own buffer instead:
  // the state input it updates in place.
  bool accumulate = post.flags & kMatmulAccumulateFlag;
  Value cAlloc, cTensor;
  if (accumulate) {
    assert(post.residual && rt.hasStaticShape() &&
           "an accumulating call updates a static residual");
    cAlloc = bufferization::ToBufferOp::create(
        b, loc, MemRefType::get(rt.getShape(), elt), post.residual);
  } else {
    std::tie(cAlloc, cTensor) = allocOutput(b, loc, elt, dims);
  }
  Value c3 = cAlloc;
  if (nb == 0) {
    if (cr > 2)
      c3 = collapseLeadingBuffer(b, loc, c3, cr - 1);
    auto t = cast<MemRefType>(c3.getType());
    SmallVector<OpFoldResult> out = {
        b.getIndexAttr(1),
        dims.size() > 2 ? product(b, loc, dims.drop_back()) : dims[0],
        dims.back()};
    c3 = memref::ExpandShapeOp::create(
        b, loc, MemRefType::get({1, t.getDimSize(0), t.getDimSize(1)}, elt), c3,
        SmallVector<ReassociationIndices>{{0, 1}, {2}}, out);
  } else if (nb > 1) {
    c3 = collapseLeadingBuffer(b, loc, c3, nb);
  }
  Value cBuf = castStrided(b, loc, c3);
  Value tA = i64(b, loc, transA), tB = i64(b, loc, transB);
  SmallVector<Value> args = {aBuf, bBuf, cBuf};
  if (post.bias)
    args.push_back(asStridedBuffer(b, loc, post.bias));
  if (post.residual && !accumulate) {
    // Viewed as [B, M, N] like the output.
    Value r = post.residual;
    if (nb == 0)
      r = prependUnitDim(b, loc,
                         cr > 2 ? collapseLeading(b, loc, r, cr - 1) : r);
    else if (nb > 1)
      r = collapseLeading(b, loc, r, nb);
    args.push_back(asStridedBuffer(b, loc, r));
  }
  args.append({tA, tB});
  std::string name = disc::kLibMatmulFn.str();
  if (post.any)
    name += postOpArgs(b, loc, post, args, /*matmul=*/true);
  callRuntime(b, op, name, args);
  // After the call: right after the to_buffer it would fold into the
  // state's old value, which bufferization would then keep in a copy.
  if (accumulate)
    cTensor = bufferization::ToTensorOp::create(b, loc, rt, cAlloc,
                                                /*restrict=*/true,
                                                /*writable=*/true);
  return cTensor;
}

/// The call `<symbolPrefix><k>d` (`disc_lib_conv2d`, ...) of the Conv or
/// ConvTranspose `op`: the input, weights and output buffers, the post-op
/// buffers, the group count and whether the weights are constant, the
/// strides, the dilations, the begin pads and the end pads less `outPad`
/// (ConvTranspose's output_padding), then the post-op attributes. Returns
/// the output.
template <typename ConvLike>
static Value lowerConvLikeToLibraryCall(OpBuilder &b, ConvLike op,
                                        ArrayRef<OpFoldResult> dims,
                                        StringRef symbolPrefix,
                                        ArrayRef<int64_t> outPad) {
  RankedTensorType rt = op.getType();
  int64_t k = rt.getRank() - 2;
  Location loc = op.getLoc();
  Value filter = op.getFilter();
  bool constW = matchPattern(filter, m_Constant()) ||
                isa_and_nonnull<ConstantOp>(filter.getDefiningOp());
  Value x = asStridedBuffer(b, loc, op.getInput());
  Value w = asStridedBuffer(b, loc, filter);
  auto [yAlloc, yTensor] = allocOutput(b, loc, rt.getElementType(), dims);
  Value y = castStrided(b, loc, yAlloc);
  SmallVector<Value> args = {x, w, y};
  PostOps post = collectPostOps(b, op);
  if (post.bias)
    args.push_back(asStridedBuffer(b, loc, post.bias));
  if (post.residual)
    args.push_back(asStridedBuffer(b, loc, post.residual));
  args.append({i64(b, loc, op.getFeatureGroupCount()), i64(b, loc, constW)});
  for (ArrayRef<int64_t> v : {op.getStrides(), op.getDilations()})
    for (int64_t s : v)
      args.push_back(i64(b, loc, s));
  ArrayRef<int64_t> pad = op.getPadding();
  for (int64_t i = 0; i < k; ++i)
    args.push_back(i64(b, loc, pad[i]));
  for (int64_t i = 0; i < k; ++i)
    args.push_back(
        i64(b, loc, pad[k + i] - (i < (int64_t)outPad.size() ? outPad[i] : 0)));
  std::string name = (symbolPrefix + Twine(k) + "d").str();
  if (post.any)
    name += postOpArgs(b, loc, post, args);
  callRuntime(b, op, name, args);
  return yTensor;
}

std::optional<Value>
mlir::disc::lowerConvToLibraryCall(OpBuilder &b, ConvOp op,
                                   ArrayRef<OpFoldResult> dims) {
  // An integer Conv goes by its mark (markLibraryCalls, which runs before
  // the lowering and marks no other non-f32 Conv): intConvFits reads its
  // operands' producers, which may be lowered already.
  bool intCall = isa<IntegerType>(op.getType().getElementType());
  if (intCall ? !op->hasAttr(kLibraryCallAttr) : !convFits(op))
    return std::nullopt;
  return lowerConvLikeToLibraryCall(
      b, op, dims, intCall ? disc::kLibConvIntPrefix : disc::kLibConvPrefix,
      /*outPad=*/{});
}

std::optional<Value> mlir::disc::lowerConvBackwardFilterToLibraryCall(
    OpBuilder &b, ConvBackwardFilterOp op, ArrayRef<OpFoldResult> dims) {
  if (!fitsLibraryCall(op))
    return std::nullopt;
  RankedTensorType rt = op.getType();
  int64_t k = rt.getRank() - 2;
  Location loc = op.getLoc();
  Value x = asStridedBuffer(b, loc, op.getInput());
  Value g = asStridedBuffer(b, loc, op.getGradOutput());
  auto [wAlloc, wTensor] = allocOutput(b, loc, rt.getElementType(), dims);
  SmallVector<Value> args = {x, g, castStrided(b, loc, wAlloc)};
  for (ArrayRef<int64_t> v :
       {op.getStrides(), op.getDilations(), op.getPadding()})
    for (int64_t s : v)
      args.push_back(i64(b, loc, s));
  callRuntime(
      b, op, (disc::kLibConvBackwardFilterPrefix + Twine(k) + "d").str(), args);
  return wTensor;
}

Value mlir::disc::lowerPoolToLibraryCall(OpBuilder &b, PoolOp op,
                                         ArrayRef<OpFoldResult> dims) {
  assert(op->hasAttr(kLibraryCallAttr) && poolFits(op) &&
         "a pooling call is marked (markLibraryCalls)");
  RankedTensorType rt = op.getType();
  int64_t k = rt.getRank() - 2;
  Location loc = op.getLoc();
  Value x = asStridedBuffer(b, loc, op.getInput());
  auto [yAlloc, yTensor] = allocOutput(b, loc, rt.getElementType(), dims);
  SmallVector<Value> args = {x, castStrided(b, loc, yAlloc)};
  int64_t kind = op.getKind() == PoolKind::Max ? 0
                 : op.getCountIncludePad()     ? 1
                                               : 2;
  args.push_back(i64(b, loc, kind));
  for (ArrayRef<int64_t> v :
       {op.getWindow(), op.getStrides(), op.getPadding().take_front(k)})
    for (int64_t s : v)
      args.push_back(i64(b, loc, s));
  // The NHWC bits (markLibraryCalls), else 0.
  int64_t flags = 0;
  if (auto a = op->getAttrOfType<DenseI64ArrayAttr>(kPostOpAttrsAttr))
    flags = a.asArrayRef()[0];
  args.push_back(i64(b, loc, flags));
  callRuntime(b, op, (disc::kLibPoolPrefix + Twine(k) + "d").str(), args);
  return yTensor;
}

std::optional<Value>
mlir::disc::lowerConvTransposeToLibraryCall(OpBuilder &b, ConvTransposeOp op,
                                            ArrayRef<OpFoldResult> dims) {
  if (!convTransposeFits(op))
    return std::nullopt;
  // Its post-op attributes: the NHWC bits (oneDNN), or on CUDA the post-ops
  // of a Conv (markLibraryCalls' `transposePostOps`).
  return lowerConvLikeToLibraryCall(b, op, dims, disc::kLibConvTransposePrefix,
                                    op.getOutputPadding());
}
