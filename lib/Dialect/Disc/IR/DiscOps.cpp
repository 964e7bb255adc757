//===- DiscOps.cpp - disc op verifiers and folders ------------------------===//
#include "disc/Dialect/Disc/IR/DiscDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallSet.h"

using namespace mlir;
using namespace mlir::disc;

static RankedTensorType rankedType(Value v) {
  return cast<RankedTensorType>(v.getType());
}

/// Checks NumPy broadcasting of `operands` into `result`: ranks aligned from
/// the right, result rank is the largest operand rank, and static dims agree
/// (an operand dim of 1 stretches).
static LogicalResult verifyBroadcast(Operation *op, ValueRange operands,
                                     RankedTensorType result) {
  int64_t rank = 0;
  for (Value v : operands)
    rank = std::max(rank, rankedType(v).getRank());
  if (result.getRank() != rank)
    return op->emitOpError("result rank ")
           << result.getRank() << " does not match broadcast rank " << rank;
  for (Value v : operands) {
    RankedTensorType t = rankedType(v);
    int64_t shift = rank - t.getRank();
    for (int64_t i = 0; i < t.getRank(); ++i) {
      int64_t d = t.getDimSize(i), r = result.getDimSize(i + shift);
      if (ShapedType::isDynamic(d) || ShapedType::isDynamic(r) || d == 1)
        continue;
      if (d != r)
        return op->emitOpError("operand dim ")
               << i << " of size " << d << " cannot broadcast to result dim "
               << (i + shift) << " of size " << r;
    }
  }
  return success();
}

static LogicalResult verifySameElementType(Operation *op,
                                           ArrayRef<Type> types) {
  Type elt = getElementTypeOrSelf(types.front());
  for (Type t : types.drop_front())
    if (getElementTypeOrSelf(t) != elt)
      return op->emitOpError("element types must match, got ")
             << elt << " and " << getElementTypeOrSelf(t);
  return success();
}

/// Checks that every entry of `dims` lies in [0, rank) and appears once.
static LogicalResult verifyDimList(Operation *op, StringRef name,
                                   ArrayRef<int64_t> dims, int64_t rank) {
  llvm::SmallSet<int64_t, 8> seen;
  for (int64_t d : dims) {
    if (d < 0 || d >= rank)
      return op->emitOpError(name)
             << " entry " << d << " out of range [0, " << rank << ")";
    if (!seen.insert(d).second)
      return op->emitOpError(name) << " entry " << d << " repeated";
  }
  return success();
}

/// Checks that `axis` (the attribute `name`) lies in [0, rank).
static LogicalResult verifyAxis(Operation *op, StringRef name, int64_t axis,
                                int64_t rank) {
  if (axis < 0 || axis >= rank)
    return op->emitOpError(name) << " " << axis << " out of range";
  return success();
}

/// Checks the operands shared by the gather and scatter ops: `data`,
/// `updates` (null for gathers) and the result have one element type, and
/// the `indices` elements are i32 or i64.
static LogicalResult verifyIndexedOperands(Operation *op, RankedTensorType data,
                                           RankedTensorType idx,
                                           RankedTensorType upd) {
  SmallVector<Type> types = {data, op->getResult(0).getType()};
  if (upd)
    types.insert(types.begin() + 1, upd);
  if (failed(verifySameElementType(op, types)))
    return failure();
  Type e = idx.getElementType();
  if (!e.isInteger(32) && !e.isInteger(64))
    return op->emitOpError("indices must be i32 or i64");
  return success();
}

/// The `reduction` of a scatter op: none, add or mul.
static LogicalResult verifyScatterReduction(Operation *op,
                                            StringRef reduction) {
  if (!llvm::is_contained({"none", "add", "mul"}, reduction))
    return op->emitOpError("unknown reduction '") << reduction << "'";
  return success();
}

/// GatherND / ScatterND: the index tuple length `k` that the rank of `what`
/// ("result" or "updates") implies lies in [1, maxK] and matches the last
/// dim of `idx` [..., k] when that dim is static.
static LogicalResult verifyIndexTuple(Operation *op, StringRef what, int64_t k,
                                      int64_t maxK, RankedTensorType idx) {
  if (k < 1 || k > maxK)
    return op->emitOpError(what) << " rank implies an index tuple of " << k
                                 << " entries, outside [1, " << maxK << "]";
  int64_t last = idx.getDimSize(idx.getRank() - 1);
  if (!ShapedType::isDynamic(last) && last != k)
    return op->emitOpError("indices last dim ")
           << last << " does not match the " << what << " rank (expects " << k
           << ")";
  return success();
}

OpFoldResult ConstantOp::fold(FoldAdaptor) { return getValue(); }

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

// The elementwise op classes' verifiers (extraClassDefinition in DiscOps.td).

LogicalResult mlir::disc::detail::verifyBinaryOp(Operation *op) {
  if (failed(verifySameElementType(op, {op->getOperand(0).getType(),
                                        op->getOperand(1).getType(),
                                        op->getResult(0).getType()})))
    return failure();
  return verifyBroadcast(op, op->getOperands(), rankedType(op->getResult(0)));
}

LogicalResult mlir::disc::detail::verifyPredicateOp(Operation *op) {
  auto in = cast<RankedTensorType>(op->getOperand(0).getType());
  auto out = cast<RankedTensorType>(op->getResult(0).getType());
  if (!isa<FloatType>(in.getElementType()))
    return op->emitOpError("expects a floating-point operand");
  if (failed(verifyCompatibleShape(in, out)))
    return op->emitOpError("result shape must match operand shape");
  return success();
}

bool mlir::disc::takesBroadcastProofs(Operation *op) {
  return op->hasTrait<OpTrait::disc::Elementwise>() &&
         !isa<ShiftLeftOp, ShiftRightOp>(op);
}

LogicalResult CompareOp::verify() {
  if (failed(verifySameElementType(*this,
                                   {getLhs().getType(), getRhs().getType()})))
    return failure();
  return verifyBroadcast(*this, getOperands().drop_front(0), getType());
}

LogicalResult SelectOp::verify() {
  if (failed(verifySameElementType(*this, {getOnTrue().getType(),
                                           getOnFalse().getType(),
                                           getResult().getType()})))
    return failure();
  return verifyBroadcast(*this, getOperands(), getType());
}

LogicalResult ConvertOp::verify() {
  if (failed(verifyCompatibleShape(getOperand().getType(), getType())))
    return emitOpError("result shape must match operand shape");
  return success();
}

//===----------------------------------------------------------------------===//
// Linear algebra, convolution, pooling, reduction
//===----------------------------------------------------------------------===//

LogicalResult DotGeneralOp::verify() {
  RankedTensorType lhs = getLhs().getType(), rhs = getRhs().getType();
  if (failed(verifySameElementType(*this, {lhs, rhs, getType()})))
    return failure();
  auto lb = getLhsBatchingDimensions(), rb = getRhsBatchingDimensions();
  auto lc = getLhsContractingDimensions(), rc = getRhsContractingDimensions();
  if (lb.size() != rb.size())
    return emitOpError("batching dimension lists differ in length");
  if (lc.size() != rc.size())
    return emitOpError("contracting dimension lists differ in length");
  SmallVector<int64_t> lhsUsed(lb), rhsUsed(rb);
  llvm::append_range(lhsUsed, lc);
  llvm::append_range(rhsUsed, rc);
  if (failed(verifyDimList(*this, "lhs dims", lhsUsed, lhs.getRank())) ||
      failed(verifyDimList(*this, "rhs dims", rhsUsed, rhs.getRank())))
    return failure();
  auto sameDim = [](int64_t a, int64_t b) {
    return ShapedType::isDynamic(a) || ShapedType::isDynamic(b) || a == b;
  };
  for (auto [l, r] : llvm::zip(lc, rc))
    if (!sameDim(lhs.getDimSize(l), rhs.getDimSize(r)))
      return emitOpError("contracting dims ")
             << l << " and " << r << " have different sizes";
  int64_t expected = lhs.getRank() + rhs.getRank() - lb.size() - 2 * lc.size();
  if (getType().getRank() != expected)
    return emitOpError("result rank ")
           << getType().getRank() << " does not match expected " << expected;
  return success();
}

/// Common checks of conv and pool window attributes for `k` spatial dims.
static LogicalResult verifyWindowAttrs(Operation *op, int64_t k,
                                       ArrayRef<int64_t> strides,
                                       ArrayRef<int64_t> dilations,
                                       ArrayRef<int64_t> padding) {
  if (static_cast<int64_t>(strides.size()) != k ||
      static_cast<int64_t>(dilations.size()) != k)
    return op->emitOpError("expects ") << k << " strides and dilations";
  if (static_cast<int64_t>(padding.size()) != 2 * k)
    return op->emitOpError("expects ") << 2 * k << " padding entries";
  if (llvm::any_of(strides, [](int64_t s) { return s <= 0; }) ||
      llvm::any_of(dilations, [](int64_t s) { return s <= 0; }))
    return op->emitOpError("strides and dilations must be positive");
  if (llvm::any_of(padding, [](int64_t s) { return s < 0; }))
    return op->emitOpError("padding must be non-negative");
  return success();
}

LogicalResult ConvOp::verify() {
  RankedTensorType in = getInput().getType(), w = getFilter().getType();
  if (failed(verifySameElementType(*this, {in, w, getType()})))
    return failure();
  if (in.getRank() < 3 || w.getRank() != in.getRank() ||
      getType().getRank() != in.getRank())
    return emitOpError("expects input, filter and result of equal rank >= 3");
  int64_t k = in.getRank() - 2;
  if (failed(verifyWindowAttrs(*this, k, getStrides(), getDilations(),
                               getPadding())))
    return failure();
  int64_t groups = getFeatureGroupCount();
  if (groups <= 0)
    return emitOpError("feature_group_count must be positive");
  int64_t c = in.getDimSize(1), wc = w.getDimSize(1), oc = w.getDimSize(0);
  if (!ShapedType::isDynamic(c) && !ShapedType::isDynamic(wc) &&
      c != wc * groups)
    return emitOpError("input channels ")
           << c << " != filter channels " << wc << " * groups " << groups;
  if (!ShapedType::isDynamic(oc) && oc % groups != 0)
    return emitOpError("output channels ")
           << oc << " not divisible by groups " << groups;
  return success();
}

bool ConvOp::isDepthwise() {
  RankedTensorType w = getFilter().getType();
  int64_t groups = getFeatureGroupCount();
  return groups > 1 && w.getDimSize(0) == groups && w.getDimSize(1) == 1;
}

LogicalResult ConvBackwardFilterOp::verify() {
  RankedTensorType in = getInput().getType(), g = getGradOutput().getType();
  RankedTensorType rt = getType();
  if (failed(verifySameElementType(*this, {in, g, rt})))
    return failure();
  if (in.getRank() < 3 || g.getRank() != in.getRank() ||
      rt.getRank() != in.getRank())
    return emitOpError(
        "expects input, grad_output and result of equal rank >= 3");
  if (!rt.hasStaticShape())
    return emitOpError("expects a static result (the filter's shape)");
  int64_t k = in.getRank() - 2;
  if (static_cast<int64_t>(getStrides().size()) != k ||
      static_cast<int64_t>(getDilations().size()) != k)
    return emitOpError("expects ") << k << " strides and dilations";
  if (static_cast<int64_t>(getPadding().size()) != 2 * k)
    return emitOpError("expects ") << 2 * k << " padding entries";
  if (llvm::any_of(getStrides(), [](int64_t s) { return s <= 0; }) ||
      llvm::any_of(getDilations(), [](int64_t s) { return s <= 0; }))
    return emitOpError("strides and dilations must be positive");
  auto mismatch = [](int64_t a, int64_t b) {
    return !ShapedType::isDynamic(a) && !ShapedType::isDynamic(b) && a != b;
  };
  if (mismatch(in.getDimSize(1), rt.getDimSize(1)) ||
      mismatch(g.getDimSize(1), rt.getDimSize(0)) ||
      mismatch(in.getDimSize(0), g.getDimSize(0)))
    return emitOpError("input ")
           << in << " and grad_output " << g << " do not give filter " << rt;
  return success();
}

LogicalResult ConvTransposeOp::verify() {
  RankedTensorType in = getInput().getType(), w = getFilter().getType();
  if (failed(verifySameElementType(*this, {in, w, getType()})))
    return failure();
  if (in.getRank() < 3 || w.getRank() != in.getRank() ||
      getType().getRank() != in.getRank())
    return emitOpError("expects input, filter and result of equal rank >= 3");
  int64_t k = in.getRank() - 2;
  if (static_cast<int64_t>(getStrides().size()) != k ||
      static_cast<int64_t>(getDilations().size()) != k ||
      static_cast<int64_t>(getOutputPadding().size()) != k)
    return emitOpError("expects ")
           << k << " strides, dilations and output_padding entries";
  if (static_cast<int64_t>(getPadding().size()) != 2 * k)
    return emitOpError("expects ") << 2 * k << " padding entries";
  if (llvm::any_of(getStrides(), [](int64_t s) { return s <= 0; }) ||
      llvm::any_of(getDilations(), [](int64_t s) { return s <= 0; }))
    return emitOpError("strides and dilations must be positive");
  if (llvm::any_of(getOutputPadding(), [](int64_t s) { return s < 0; }))
    return emitOpError("output_padding must be non-negative");
  int64_t groups = getFeatureGroupCount();
  if (groups <= 0)
    return emitOpError("feature_group_count must be positive");
  int64_t c = in.getDimSize(1), wc = w.getDimSize(0), ocg = w.getDimSize(1);
  if (!ShapedType::isDynamic(c) && !ShapedType::isDynamic(wc) && c != wc)
    return emitOpError("input channels ")
           << c << " != filter dim 0 (" << wc << ")";
  if (!ShapedType::isDynamic(wc) && wc % groups != 0)
    return emitOpError("input channels ")
           << wc << " not divisible by groups " << groups;
  int64_t oc = getType().getDimSize(1);
  if (!ShapedType::isDynamic(oc) && !ShapedType::isDynamic(ocg) &&
      oc != ocg * groups)
    return emitOpError("output channels ")
           << oc << " != filter dim 1 (" << ocg << ") * groups " << groups;
  return success();
}

LogicalResult CumSumOp::verify() {
  if (failed(verifySameElementType(*this, {getOperand().getType(), getType()})))
    return failure();
  if (failed(verifyCompatibleShape(getOperand().getType(), getType())))
    return emitOpError("result shape must match the operand shape");
  int64_t r = getOperand().getType().getRank();
  // The I64Attr getter is unsigned: read the stored value as signed.
  auto d = static_cast<int64_t>(getDimension());
  if (d < 0 || d >= r)
    return emitOpError("dimension ") << d << " out of range [0, " << r << ")";
  return success();
}

LogicalResult PoolOp::verify() {
  RankedTensorType in = getInput().getType();
  if (failed(verifySameElementType(*this, {in, getType()})))
    return failure();
  if (in.getRank() < 3 || getType().getRank() != in.getRank())
    return emitOpError("expects input and result of equal rank >= 3");
  int64_t k = in.getRank() - 2;
  if (static_cast<int64_t>(getWindow().size()) != k)
    return emitOpError("expects ") << k << " window dims";
  return verifyWindowAttrs(*this, k, getStrides(), getDilations(),
                           getPadding());
}

LogicalResult ReduceOp::verify() {
  RankedTensorType in = getInput().getType();
  if (failed(verifySameElementType(*this, {in, getType()})))
    return failure();
  if (failed(verifyDimList(*this, "dimensions", getDimensions(), in.getRank())))
    return failure();
  int64_t expected = getKeepDims()
                         ? in.getRank()
                         : in.getRank() - (int64_t)getDimensions().size();
  if (getType().getRank() != expected)
    return emitOpError("result rank ")
           << getType().getRank() << " does not match expected " << expected;
  return success();
}

LogicalResult ArgReduceOp::verify() {
  int64_t rank = getInput().getType().getRank();
  if (failed(verifyAxis(*this, "dimension", getDimension(), rank)))
    return failure();
  int64_t expected = getKeepDims() ? rank : rank - 1;
  if (getType().getRank() != expected)
    return emitOpError("result rank ")
           << getType().getRank() << " does not match expected " << expected;
  return success();
}

//===----------------------------------------------------------------------===//
// Data movement and shape ops
//===----------------------------------------------------------------------===//

LogicalResult ShapeOfOp::verify() {
  int64_t n = getType().getDimSize(0);
  if (!ShapedType::isDynamic(n) && n != getOperand().getType().getRank())
    return emitOpError("result has ") << n << " elements but operand has rank "
                                      << getOperand().getType().getRank();
  return success();
}

OpFoldResult ShapeOfOp::fold(FoldAdaptor) {
  RankedTensorType t = getOperand().getType();
  if (!t.hasStaticShape())
    return {};
  auto type =
      RankedTensorType::get({t.getRank()}, IntegerType::get(getContext(), 64));
  return DenseIntElementsAttr::get(type, t.getShape());
}

LogicalResult ExpandOp::verify() {
  if (failed(verifySameElementType(*this, {getOperand().getType(), getType()})))
    return failure();
  int64_t n = getShape().getType().getDimSize(0);
  if (ShapedType::isDynamic(n))
    return emitOpError("shape operand must have a static length");
  if (getType().getRank() != std::max(n, getOperand().getType().getRank()))
    return emitOpError("result rank must be max(operand rank, shape length)");
  return success();
}

LogicalResult DynamicReshapeOp::verify() {
  if (failed(verifySameElementType(*this, {getOperand().getType(), getType()})))
    return failure();
  int64_t n = getShape().getType().getDimSize(0);
  if (ShapedType::isDynamic(n) || n != getType().getRank())
    return emitOpError("shape operand length must equal the result rank");
  RankedTensorType in = getOperand().getType(), out = getType();
  if (in.hasStaticShape() && out.hasStaticShape() &&
      in.getNumElements() != out.getNumElements())
    return emitOpError("element count changes from ")
           << in.getNumElements() << " to " << out.getNumElements();
  return success();
}

LogicalResult TransposeOp::verify() {
  RankedTensorType in = getOperand().getType(), out = getType();
  ArrayRef<int64_t> perm = getPermutation();
  if (failed(verifySameElementType(*this, {in, out})))
    return failure();
  if ((int64_t)perm.size() != in.getRank() || out.getRank() != in.getRank())
    return emitOpError("permutation size must equal the rank");
  if (failed(verifyDimList(*this, "permutation", perm, in.getRank())))
    return failure();
  for (auto [i, p] : llvm::enumerate(perm)) {
    int64_t a = out.getDimSize(i), b = in.getDimSize(p);
    if (!ShapedType::isDynamic(a) && !ShapedType::isDynamic(b) && a != b)
      return emitOpError("result dim ") << i << " must equal operand dim " << p;
  }
  return success();
}

LogicalResult ConcatenateOp::verify() {
  if (getInputs().empty())
    return emitOpError("expects at least one input");
  SmallVector<Type> types(getInputs().getTypes());
  types.push_back(getType());
  if (failed(verifySameElementType(*this, types)))
    return failure();
  int64_t rank = getType().getRank();
  if (failed(verifyAxis(*this, "dimension", getDimension(), rank)))
    return failure();
  for (Value v : getInputs())
    if (rankedType(v).getRank() != rank)
      return emitOpError("all inputs must have rank ") << rank;
  return success();
}

LogicalResult SliceOp::verify() {
  RankedTensorType in = getOperand().getType();
  if (failed(verifySameElementType(*this, {in, getType()})))
    return failure();
  if (getType().getRank() != in.getRank())
    return emitOpError("result rank must equal operand rank");
  if (failed(verifyDimList(*this, "axes", getAxes(), in.getRank())))
    return failure();
  int64_t n = getAxes().size();
  for (Value v : {getStarts(), getEnds(), getSteps()}) {
    int64_t len = rankedType(v).getDimSize(0);
    if (!ShapedType::isDynamic(len) && len != n)
      return emitOpError("starts, ends and steps need one entry per axis");
  }
  return success();
}

LogicalResult GatherOp::verify() {
  RankedTensorType data = getData().getType(), idx = getIndices().getType();
  if (failed(verifyIndexedOperands(*this, data, idx, {})) ||
      failed(verifyAxis(*this, "axis", getAxis(), data.getRank())))
    return failure();
  if (getType().getRank() != data.getRank() + idx.getRank() - 1)
    return emitOpError("result rank must be data rank + indices rank - 1");
  return success();
}

LogicalResult PadOp::verify() {
  RankedTensorType in = getOperand().getType();
  if (failed(
          verifySameElementType(*this, {in, getValue().getType(), getType()})))
    return failure();
  if (getType().getRank() != in.getRank())
    return emitOpError("result rank must equal operand rank");
  int64_t n = getPads().getType().getDimSize(0);
  if (!ShapedType::isDynamic(n) && n != 2 * in.getRank())
    return emitOpError("pads needs ") << 2 * in.getRank() << " entries";
  return success();
}

LogicalResult RangeOp::verify() {
  if (getType().getRank() != 1)
    return emitOpError("result must be 1-D");
  return verifySameElementType(*this,
                               {getStart().getType(), getLimit().getType(),
                                getDelta().getType(), getType()});
}

LogicalResult ResizeOp::verify() {
  RankedTensorType in = getOperand().getType();
  int64_t r = in.getRank();
  if (failed(verifySameElementType(*this, {in, getType()})))
    return failure();
  StringRef mode = getMode();
  if (mode != "nearest" && !isa<FloatType>(in.getElementType()))
    return emitOpError(mode) << " mode needs a float element type";
  if (getType().getRank() != r)
    return emitOpError("result rank must equal operand rank");
  std::tuple<StringRef, Value, int64_t> vectors[] = {{"sizes", getSizes(), r},
                                                     {"scales", getScales(), r},
                                                     {"roi", getRoi(), 2 * r}};
  for (auto [name, v, n] : vectors) {
    if (!v)
      continue;
    int64_t len = rankedType(v).getDimSize(0);
    if (!ShapedType::isDynamic(len) && len != n)
      return emitOpError(name) << " needs " << n << " entries";
  }
  if (mode != "nearest" && mode != "linear" && mode != "cubic")
    return emitOpError("unknown mode '") << mode << "'";
  StringRef ct = getCoordinateTransformationMode();
  if (!llvm::is_contained({"half_pixel", "pytorch_half_pixel", "align_corners",
                           "asymmetric", "tf_half_pixel_for_nn",
                           "tf_crop_and_resize"},
                          ct))
    return emitOpError("unknown coordinate_transformation_mode '") << ct << "'";
  if (ct == "tf_crop_and_resize" && !getRoi())
    return emitOpError("tf_crop_and_resize needs a roi operand");
  if (!llvm::is_contained({"round_prefer_floor", "round_prefer_ceil", "floor",
                           "ceil", "simple"},
                          getNearestMode()))
    return emitOpError("unknown nearest_mode '") << getNearestMode() << "'";
  if (failed(verifyDimList(*this, "axes", getAxes(), r)))
    return failure();
  for (int64_t i = 0; i < r; ++i) {
    if (llvm::is_contained(getAxes(), i))
      continue;
    int64_t a = in.getDimSize(i), c = getType().getDimSize(i);
    if (!ShapedType::isDynamic(a) && !ShapedType::isDynamic(c) && a != c)
      return emitOpError("dim ")
             << i << " is not in axes but changes size from " << a << " to "
             << c;
  }
  return success();
}

LogicalResult GatherElementsOp::verify() {
  RankedTensorType data = getData().getType(), idx = getIndices().getType();
  if (failed(verifyIndexedOperands(*this, data, idx, {})) ||
      failed(verifyAxis(*this, "axis", static_cast<int64_t>(getAxis()),
                        data.getRank())))
    return failure();
  if (idx.getRank() != data.getRank())
    return emitOpError("indices rank must equal data rank");
  if (failed(verifyCompatibleShape(getType(), idx)))
    return emitOpError("result shape must be the indices shape");
  return success();
}

LogicalResult GatherNdOp::verify() {
  RankedTensorType data = getData().getType(), idx = getIndices().getType();
  if (failed(verifyIndexedOperands(*this, data, idx, {})))
    return failure();
  int64_t b = static_cast<int64_t>(getBatchDims());
  int64_t r = data.getRank(), q = idx.getRank();
  if (q < 1 || b < 0 || b >= std::min(r, q))
    return emitOpError("batch_dims ")
           << b << " must be below the ranks of data and indices";
  return verifyIndexTuple(*this, "result", q - 1 + r - b - getType().getRank(),
                          r - b, idx);
}

LogicalResult ScatterElementsOp::verify() {
  RankedTensorType data = getData().getType(), idx = getIndices().getType(),
                   upd = getUpdates().getType();
  if (failed(verifyIndexedOperands(*this, data, idx, upd)) ||
      failed(verifyAxis(*this, "axis", static_cast<int64_t>(getAxis()),
                        data.getRank())))
    return failure();
  if (idx.getRank() != data.getRank() || upd.getRank() != data.getRank() ||
      getType().getRank() != data.getRank())
    return emitOpError("data, indices, updates and result must have the "
                       "same rank");
  if (failed(verifyCompatibleShape(idx, upd)))
    return emitOpError("indices and updates must have the same shape");
  return verifyScatterReduction(*this, getReduction());
}

LogicalResult ScatterNdOp::verify() {
  RankedTensorType data = getData().getType(), idx = getIndices().getType(),
                   upd = getUpdates().getType();
  if (failed(verifyIndexedOperands(*this, data, idx, upd)))
    return failure();
  if (getType().getRank() != data.getRank())
    return emitOpError("result rank must equal data rank");
  int64_t r = data.getRank(), q = idx.getRank();
  if (q < 1)
    return emitOpError("indices must have rank >= 1");
  if (failed(verifyIndexTuple(*this, "updates", r - upd.getRank() + q - 1, r,
                              idx)))
    return failure();
  return verifyScatterReduction(*this, getReduction());
}

LogicalResult RandomUniformOp::verify() {
  int64_t n = getShape().getType().getDimSize(0);
  if (!ShapedType::isDynamic(n) && n != getType().getRank())
    return emitOpError("shape has ")
           << n << " entries for a result of rank " << getType().getRank();
  return success();
}

LogicalResult ArgSortOp::verify() {
  RankedTensorType in = getOperand().getType();
  if (failed(verifyAxis(*this, "dimension",
                        static_cast<int64_t>(getDimension()), in.getRank())))
    return failure();
  if (failed(verifyCompatibleShape(in.getShape(), getType().getShape())))
    return emitOpError("result shape must be the operand shape");
  return success();
}

LogicalResult GridSampleOp::verify() {
  RankedTensorType in = getInput().getType(), grid = getGrid().getType();
  if (failed(verifySameElementType(*this, {in, grid, getType()})))
    return failure();
  if (!isa<FloatType>(in.getElementType()))
    return emitOpError("needs a float element type");
  if (in.getRank() != 4 || grid.getRank() != 4 || getType().getRank() != 4)
    return emitOpError("input, grid and result must be 4-d");
  if (!grid.isDynamicDim(3) && grid.getDimSize(3) != 2)
    return emitOpError("grid must end in a dim of size 2");
  if (!llvm::is_contained({"bilinear", "nearest", "bicubic"}, getMode()))
    return emitOpError("unknown mode '") << getMode() << "'";
  if (!llvm::is_contained({"zeros", "border", "reflection"}, getPaddingMode()))
    return emitOpError("unknown padding_mode '") << getPaddingMode() << "'";
  return success();
}

#define GET_OP_CLASSES
#include "disc/Dialect/Disc/IR/DiscOps.cpp.inc"
