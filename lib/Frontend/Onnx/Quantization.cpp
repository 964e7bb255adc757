//===- Quantization.cpp - ONNX quantization ops
//-----------------------------===//
//
//===----------------------------------------------------------------------===//
#include "Importer.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/MathExtras.h"

#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <map>

namespace mlir::disc::onnx_import {

/// A 0-d or 1-D parameter `v`, shaped to broadcast along `axis` of a rank-r
/// tensor (1-D tensors align by themselves).
Value Importer::perAxis(Value v, int64_t r, int64_t axis) {
  if (rank(v) == 0 || r <= 1)
    return v;
  SmallVector<TDim> t(r, tdimConst(1));
  t[axis] = tdimOf(v, 0);
  return reshapeT(v, t);
}

/// Saturates the (already rounded) `y` to the 8-bit range and converts.
Value Importer::quantizeFloat(Value y, Type qType, bool qUns) {
  double lo = qUns ? 0 : -128, hi = qUns ? 255 : 127;
  y = binary<MinOp>(binary<MaxOp>(y, scalarLike(y, lo)), scalarLike(y, hi));
  if (!y)
    return nullptr;
  return convert(y, qType, false, qUns);
}

/// `x` as i32 minus its zero point `zp` (broadcast along `axis`, or as is
/// when `axis` < 0).
FailureOr<Value> Importer::toI32Centered(Value x, Value zp, int64_t axis) {
  if (!isa<IntegerType>(elt(x)) || elt(x).isInteger(1) ||
      elt(x).getIntOrFloatBitWidth() > 32)
    return err() << "expects 8-bit integer inputs";
  Type i32 = b.getI32Type();
  if (zp && rank(zp) > 1)
    return err() << "zero points must be scalars or 1-D";
  // Constant data with a constant (or no) zero point, e.g. a Conv's
  // weights: one i32 constant, so that a run does not compute it again.
  DenseIntElementsAttr xc, zc;
  auto type = cast<RankedTensorType>(x.getType());
  ArrayRef<int64_t> shape = type.getShape();
  if (matchPattern(x, m_Constant(&xc)) &&
      (!zp || (matchPattern(zp, m_Constant(&zc)) &&
               (zc.getNumElements() == 1 ||
                (axis >= 0 && axis < (int64_t)shape.size() &&
                 zc.getNumElements() == shape[axis]))))) {
    int64_t inner = 1;
    for (int64_t i = axis >= 0 ? axis + 1 : 0; i < (int64_t)shape.size(); ++i)
      inner *= shape[i];
    auto value = [](const APInt &a, bool uns) {
      return uns ? (int64_t)a.getZExtValue() : a.getSExtValue();
    };
    SmallVector<int64_t> zs;
    if (zc)
      for (const APInt &a : zc.getValues<APInt>())
        zs.push_back(value(a, isUns(zp)));
    SmallVector<int32_t> out;
    out.reserve(type.getNumElements());
    int64_t i = 0;
    for (const APInt &a : xc.getValues<APInt>()) {
      int64_t z = 0;
      if (!zs.empty())
        z = zs.size() == 1 ? zs[0] : zs[(i / inner) % shape[axis]];
      out.push_back(static_cast<int32_t>(value(a, isUns(x)) - z));
      ++i;
    }
    return constDense(
        DenseIntElementsAttr::get(type.clone(i32), ArrayRef<int32_t>(out)));
  }
  Value v = convert(x, i32, isUns(x), false);
  if (!zp)
    return v;
  Value z = convert(zp, i32, isUns(zp), false);
  if (axis >= 0)
    z = perAxis(z, rank(x), axis);
  Value r = binary<SubOp>(v, z);
  if (!r)
    return failure();
  return r;
}

/// The axis of the per-axis (1-D) `scale` of QuantizeLinear and
/// DequantizeLinear on `x` (attribute `axis`, default 1); 0 when the scale is
/// a scalar or `x` has rank <= 1, where the axis does not matter.
FailureOr<int64_t> Importer::quantAxis(Value x, Value scale) {
  int64_t r = rank(x);
  if (r <= 1 || rank(scale) != 1)
    return 0;
  return normAxis(aInt("axis", 1), r);
}

LogicalResult Importer::importQuantizeLinear(StringRef) {
  Value x = in(0), scale = in(1), zp = in(2);
  if (!isFloat(scale) || rank(scale) > 1)
    return err() << "y_scale must be a floating-point scalar or 1-D tensor";
  int64_t r = rank(x);
  FailureOr<int64_t> axis = quantAxis(x, scale);
  if (::mlir::failed(axis))
    return failure();
  Type qt = zp ? elt(zp) : b.getIntegerType(8);
  bool qUns = zp ? isUns(zp) : true;
  if (!qt.isInteger(8))
    return err() << "only int8/uint8 outputs are supported (opset " << opset
                 << ")";
  Value xf = convert(x, elt(scale), isUns(x), false);
  // As the reference: round(x / scale) (half to even), then + zero point.
  Value y = binary<DivOp>(xf, perAxis(scale, r, *axis));
  y = y ? unary<RoundOp>(y) : Value();
  if (zp && y)
    y = binary<AddOp>(y,
                      perAxis(convert(zp, elt(scale), qUns, false), r, *axis));
  if (!y)
    return failure();
  y = quantizeFloat(y, qt, qUns);
  return finish(y);
}

LogicalResult Importer::importDequantizeLinear(StringRef) {
  Value x = in(0), scale = in(1), zp = in(2);
  if (!isFloat(scale) || rank(scale) > 1)
    return err() << "x_scale must be a floating-point scalar or 1-D tensor";
  if (!isa<IntegerType>(elt(x)) || elt(x).isInteger(1))
    return err() << "expects an integer input";
  int64_t r = rank(x);
  FailureOr<int64_t> axis = quantAxis(x, scale);
  if (::mlir::failed(axis))
    return failure();
  Type ft = elt(scale);
  Value xf = convert(x, ft, isUns(x), false);
  if (zp)
    xf =
        binary<SubOp>(xf, perAxis(convert(zp, ft, isUns(zp), false), r, *axis));
  Value y = xf ? binary<MulOp>(xf, perAxis(scale, r, *axis)) : Value();
  return finish(y);
}

/// As the ONNX function body: scale = (max(x, 0) - min(x, 0)) / 255,
/// zero point = round(clip(0 - min / scale, 0, 255)), uint8 outputs.
LogicalResult Importer::importDynamicQuantizeLinear(StringRef) {
  Value x = in(0);
  SmallVector<int64_t> all = llvm::to_vector(llvm::seq<int64_t>(0, rank(x)));
  Value zero = scalarLike(x, 0);
  Value lo = binary<MinOp>(reduce(ReduceKind::Min, x, all, false), zero);
  Value hi = binary<MaxOp>(reduce(ReduceKind::Max, x, all, false), zero);
  Value scale = binary<DivOp>(binary<SubOp>(hi, lo), scalarLike(x, 255));
  Value zpf = binary<SubOp>(zero, binary<DivOp>(lo, scale));
  zpf = binary<MinOp>(binary<MaxOp>(zpf, zero), scalarLike(x, 255));
  Type u8 = b.getIntegerType(8);
  Value zp = convert(unary<RoundOp>(zpf), u8, false, true);
  Value y = binary<AddOp>(unary<RoundOp>(binary<DivOp>(x, scale)),
                          convert(zp, elt(x), true, false));
  y = y ? quantizeFloat(y, u8, true) : Value();
  return finishAll({y, scale, zp});
}

/// `product` (matmul or conv) of `a` and `c` in i32 after subtracting their
/// zero points, the node's inputs `aZp` and `cZp` (broadcast along dim
/// `aAxis` / `cAxis`; as is when negative).
FailureOr<Value> Importer::centeredProduct(ProductFn product, Value a,
                                           unsigned aZp, int64_t aAxis, Value c,
                                           unsigned cZp, int64_t cAxis) {
  FailureOr<Value> a32 = toI32Centered(a, in(aZp), aAxis);
  if (::mlir::failed(a32))
    return failure();
  FailureOr<Value> c32 = toI32Centered(c, in(cZp), cAxis);
  if (::mlir::failed(c32))
    return failure();
  return (this->*product)(*a32, *c32);
}

/// MatMul: the zero point of A is per row (its dim -2), B's per column
/// (dim -1).
FailureOr<Value> Importer::centeredMatmul(Value a, unsigned aZp, Value c,
                                          unsigned cZp) {
  int64_t ra = rank(a), rc = rank(c);
  return centeredProduct(&Importer::matmul, a, aZp, ra >= 2 ? ra - 2 : -1, c,
                         cZp, rc >= 2 ? rc - 1 : -1);
}

LogicalResult Importer::importMatMulInteger(StringRef) {
  Value a = in(0), c = in(1);
  return finish(centeredMatmul(a, 2, c, 3));
}

LogicalResult Importer::importConvInteger(StringRef) {
  Value x = in(0), w = in(1);
  if (has(2) && rank(in(2)) != 0 && !maybeScalar(in(2)))
    return err() << "x_zero_point must be a scalar";
  // Conv: the zero point of W is per output channel.
  return finish(centeredProduct(&Importer::conv, x, 2, -1, w, 3, 0));
}

LogicalResult Importer::importQLinearMatMul(StringRef) {
  Value a = in(0), as = in(1), c = in(3), cs = in(4), ys = in(6), yzp = in(7);
  int64_t ra = rank(a);
  if (!isFloat(as) || !isFloat(cs) || !isFloat(ys))
    return err() << "scales must be floating-point";
  FailureOr<Value> acc = centeredMatmul(a, 2, c, 5);
  if (::mlir::failed(acc))
    return failure();
  Type ft = elt(as);
  // a_scale may be per row of A, b_scale per column of B.
  Value mult = binary<DivOp>(
      binary<MulOp>(ra >= 2 ? perAxis(as, ra, ra - 2) : as, cs), ys);
  Value y = binary<MulOp>(convert(*acc, ft, false, false), mult);
  y = binary<AddOp>(unary<RoundOp>(y), convert(yzp, ft, isUns(yzp), false));
  y = y ? quantizeFloat(y, elt(yzp), isUns(yzp)) : Value();
  return finish(y);
}

LogicalResult Importer::importQLinearConv(StringRef) {
  Value x = in(0), xs = in(1), w = in(3), ws = in(4), ys = in(6), yzp = in(7);
  int64_t r = rank(x);
  if (!isFloat(xs) || !isFloat(ws) || !isFloat(ys))
    return err() << "scales must be floating-point";
  FailureOr<Value> acc = centeredProduct(&Importer::conv, x, 2, -1, w, 5, 0);
  if (::mlir::failed(acc))
    return failure();
  Value y = *acc;
  if (Value bias = in(8)) {
    if (rank(bias) != 1 || !elt(bias).isInteger(32))
      return err() << "B must be a 1-D int32 tensor";
    y = addChannelBias(y, bias, r - 2);
  }
  Type ft = elt(xs);
  Value mult = binary<DivOp>(binary<MulOp>(xs, perAxis(ws, r, 1)), ys);
  y = y ? binary<MulOp>(convert(y, ft, false, false), mult) : Value();
  y = y ? binary<AddOp>(unary<RoundOp>(y), convert(yzp, ft, isUns(yzp), false))
        : Value();
  y = y ? quantizeFloat(y, elt(yzp), isUns(yzp)) : Value();
  return finish(y);
}

} // namespace mlir::disc::onnx_import
