//===- LibraryCalls.cpp - disc ops lowered to runtime library calls -------===//
//
// See LibraryCalls.h. Operands reach the call as read-only buffers
// (`bufferization.to_buffer ... read_only`) cast to fully dynamic strided
// memrefs, so any layout one-shot bufferization picks (a transposed or
// sliced view) is passed without a copy; the runtime reads the strides.
//
//===----------------------------------------------------------------------===//
#include "LibraryCalls.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Matchers.h"

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

/// Collapses dims [0, n) of the identity-layout buffer `m` into one.
Value collapseLeadingBuffer(OpBuilder &b, Location loc, Value m, int64_t n) {
  int64_t rank = cast<MemRefType>(m.getType()).getRank();
  SmallVector<ReassociationIndices> assoc(1);
  for (int64_t i = 0; i < n; ++i)
    assoc[0].push_back(i);
  for (int64_t i = n; i < rank; ++i)
    assoc.push_back({i});
  return memref::CollapseShapeOp::create(b, loc, m, assoc);
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
  SmallVector<ReassociationIndices> assoc(1);
  for (int64_t i = 0; i < n; ++i)
    assoc[0].push_back(i);
  for (int64_t i = n; i < rank; ++i)
    assoc.push_back({i});
  return tensor::CollapseShapeOp::create(b, loc, x, assoc);
}

Value i64(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(v));
}

} // namespace

std::optional<Value>
mlir::disc::lowerDotGeneralToLibraryCall(OpBuilder &b, DotGeneralOp op,
                                         ArrayRef<OpFoldResult> dims) {
  RankedTensorType rt = op.getType();
  Type elt = rt.getElementType();
  Value lhs = op.getLhs(), rhs = op.getRhs();
  if (!elt.isF32() ||
      !cast<RankedTensorType>(lhs.getType()).getElementType().isF32() ||
      !cast<RankedTensorType>(rhs.getType()).getElementType().isF32())
    return std::nullopt;
  ArrayRef<int64_t> lb = op.getLhsBatchingDimensions(),
                    rb = op.getRhsBatchingDimensions(),
                    lc = op.getLhsContractingDimensions(),
                    rc = op.getRhsContractingDimensions();
  int64_t lr = cast<RankedTensorType>(lhs.getType()).getRank();
  int64_t rr = cast<RankedTensorType>(rhs.getType()).getRank();
  int64_t nb = lb.size();
  if (lc.size() != 1 || rc.size() != 1 || lb != rb)
    return std::nullopt;
  for (int64_t i = 0; i < nb; ++i)
    if (lb[i] != i)
      return std::nullopt;
  Location loc = op.getLoc();
  bool transA = false, transB = false;
  Value a3, b3;
  if (nb == 0) {
    // [.., M, K] x [K, N] (or transposed 2-D operands, Gemm).
    if (rr != 2 || lr < 2)
      return std::nullopt;
    transB = rc[0] == 1;
    transA = lr == 2 && lc[0] == 0;
    if (lr > 2 && lc[0] != lr - 1)
      return std::nullopt;
    Value l2 = lr > 2 ? collapseLeading(b, loc, lhs, lr - 1) : lhs;
    a3 = prependUnitDim(b, loc, l2);
    b3 = prependUnitDim(b, loc, rhs);
  } else {
    // [B.., M, K] x [B.., K, N], either operand transposed.
    if (lr != nb + 2 || rr != nb + 2)
      return std::nullopt;
    transA = lc[0] == nb;
    transB = rc[0] == nb + 1;
    a3 = nb > 1 ? collapseLeading(b, loc, lhs, nb) : lhs;
    b3 = nb > 1 ? collapseLeading(b, loc, rhs, nb) : rhs;
  }
  Value aBuf = asStridedBuffer(b, loc, a3);
  Value bBuf = asStridedBuffer(b, loc, b3);
  // The output is allocated with the result's shape and viewed as
  // [B, M, N] (expanding a buffer instead trips expand-strided-metadata on
  // groups of several dynamic sizes).
  auto [cAlloc, cTensor] = allocOutput(b, loc, elt, dims);
  Value c3 = cAlloc;
  if (nb == 0) {
    if (lr > 2)
      c3 = collapseLeadingBuffer(b, loc, c3, lr - 1);
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
  SmallVector<Value> args = {aBuf, bBuf, cBuf, tA, tB};
  func::FuncOp f =
      declare(b, op, "disc_lib_matmul", ValueRange(args).getTypes());
  func::CallOp::create(b, loc, f, args);
  return cTensor;
}

std::optional<Value>
mlir::disc::lowerConvToLibraryCall(OpBuilder &b, ConvOp op,
                                   ArrayRef<OpFoldResult> dims) {
  RankedTensorType rt = op.getType();
  Type elt = rt.getElementType();
  Value input = op.getInput(), filter = op.getFilter();
  int64_t k = rt.getRank() - 2;
  if (!elt.isF32() ||
      !cast<RankedTensorType>(input.getType()).getElementType().isF32() ||
      !cast<RankedTensorType>(filter.getType()).getElementType().isF32() ||
      k < 1 || k > 3)
    return std::nullopt;
  Location loc = op.getLoc();
  bool constW = matchPattern(filter, m_Constant()) ||
                isa_and_nonnull<ConstantOp>(filter.getDefiningOp());
  Value x = asStridedBuffer(b, loc, input);
  Value w = asStridedBuffer(b, loc, filter);
  auto [yAlloc, yTensor] = allocOutput(b, loc, elt, dims);
  Value y = castStrided(b, loc, yAlloc);
  SmallVector<Value> args = {x, w, y, i64(b, loc, op.getFeatureGroupCount()),
                             i64(b, loc, constW)};
  for (ArrayRef<int64_t> v :
       {op.getStrides(), op.getDilations(), op.getPadding()})
    for (int64_t s : v)
      args.push_back(i64(b, loc, s));
  func::FuncOp f = declare(b, op, ("disc_lib_conv" + Twine(k) + "d").str(),
                           ValueRange(args).getTypes());
  func::CallOp::create(b, loc, f, args);
  return yTensor;
}
