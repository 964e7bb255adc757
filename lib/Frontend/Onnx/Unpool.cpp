//===- Unpool.cpp - ONNX MaxUnpool ----------------------------------------===//
//
//===----------------------------------------------------------------------===//
#include "Importer.h"

namespace mlir::disc::onnx_import {

/// ONNX MaxUnpool-9/11 (the ONNX reference implementation's semantics).
/// X: [N, C, D1..Dk], I: X's shape, int64 flat indices into the unpooled
/// tensor (as MaxPool's Indices output: row-major over [N, C, O1..Ok]),
/// optional output_shape: 1-D int64 of length k + 2. The unpooled size is
///   O_i = (D_i - 1) * strides_i - (pads_i + pads_{k+i}) + kernel_shape_i;
/// the values are scattered (`disc.scatter_elements` on the flattened
/// tensors) into zeros [N * C * O1 * .. * Ok], reshaped to [N, C, O..].
/// With output_shape, that tensor is padded with zeros at the end of every
/// dim up to output_shape (`disc.pad` by max(0, output_shape - O), then a
/// `disc.slice` to output_shape that checks at run time that no dim of
/// output_shape is smaller than the unpooled one). Cost: linear in the
/// output size.
LogicalResult Importer::importMaxUnpool(StringRef) {
  Value x = in(0), idx = in(1), outShape = in(2);
  int64_t r = rank(x), k = r - 2;
  if (r < 3)
    return err() << "X must have rank >= 3";
  if (rank(idx) != r || !isa<IntegerType>(elt(idx)) || elt(idx).isInteger(1))
    return err() << "I must be an integer tensor of X's rank";
  if (elt(x).isInteger(1))
    return err() << "does not accept bool inputs";
  std::optional<SmallVector<int64_t>> ks = aInts("kernel_shape");
  if (!ks)
    return err() << "missing attribute 'kernel_shape'";
  SmallVector<int64_t> kernel = *ks;
  SmallVector<int64_t> strides =
      aInts("strides").value_or(SmallVector<int64_t>(k, 1));
  SmallVector<int64_t> pads =
      aInts("pads").value_or(SmallVector<int64_t>(2 * k, 0));
  if (failed)
    return failure();
  if ((int64_t)kernel.size() != k || (int64_t)strides.size() != k ||
      (int64_t)pads.size() != 2 * k)
    return err() << "kernel_shape/strides/pads have the wrong length for " << k
                 << " spatial dims";
  for (int64_t i = 0; i < k; ++i)
    if (kernel[i] < 1 || strides[i] < 1 || pads[i] < 0 || pads[k + i] < 0)
      return err() << "kernel_shape and strides must be positive and pads "
                      "non-negative";
  if (outShape) {
    if (rank(outShape) != 1 || !elt(outShape).isInteger(64))
      return err() << "output_shape must be a 1-D int64 tensor";
    int64_t n = tt(outShape).getDimSize(0);
    if (!ShapedType::isDynamic(n) && n != r)
      return err() << "output_shape has " << n << " entries, expected " << r;
  }

  // The unpooled dims [N, C, O1..Ok].
  SmallVector<TDim> unpooled = {tdimOf(x, 0), tdimOf(x, 1)};
  for (int64_t i = 0; i < k; ++i) {
    int64_t add = kernel[i] - strides[i] - pads[i] - pads[k + i];
    TDim d = tdimOf(x, 2 + i);
    if (d.d.isStatic()) {
      int64_t o = d.d.size * strides[i] + add;
      if (o < 1)
        return err() << "the unpooled size of spatial dim " << i << " is " << o;
      unpooled.push_back(tdimConst(o));
      continue;
    }
    Value o =
        binaryFolded("Add", binaryFolded("Mul", d.v, constI64({strides[i]})),
                     constI64({add}));
    unpooled.push_back({Dim(), o});
  }
  TDim total = tdimConst(1), count = tdimConst(1);
  for (int64_t i = 0; i < r; ++i) {
    total = tdimMul(total, unpooled[i]);
    count = tdimMul(count, tdimOf(x, i));
  }
  Type e = elt(x);
  Value zeros = expandTo(scalarLike(x, 0), shapeFrom({total}), {total.d});
  Value flatIdx = reshapeT(toI64(idx), {count});
  Value flatX = reshapeT(x, {count});
  Value flat = mk<ScatterElementsOp>(Dims{total.d}, e, zeros, flatIdx, flatX,
                                     (uint64_t)0, b.getStringAttr("none"));
  Value y = reshapeT(flat, unpooled);
  if (!y)
    return failure();
  if (!outShape)
    return finish(markUnsigned(y, isUns(x)));

  // Zero-pad at the end of each dim up to output_shape.
  Value want = outShape;
  Value have = shapeFrom(unpooled);
  Value hi = binary<MaxOp>(binary<SubOp>(want, have), constI64({0}));
  Value pv = concatI64({constI64(SmallVector<int64_t>(r, 0)), hi});
  Dims pd(r, Dim());
  Value padded = mk<PadOp>(pd, e, PadMode::Constant, y, pv, scalarLike(x, 0));
  Dims od(r, Dim());
  if (std::optional<SmallVector<int64_t>> kw = knownInts(outShape))
    for (int64_t i = 0; i < r; ++i)
      od[i] = Dim((*kw)[i]);
  Value res = mk<SliceOp>(od, e, padded, constI64(SmallVector<int64_t>(r, 0)),
                          want, constI64(SmallVector<int64_t>(r, 1)),
                          llvm::to_vector(llvm::seq<int64_t>(0, r)));
  res.getDefiningOp()->setAttr(
      kSliceEndMessageAttr,
      b.getStringAttr("output_shape entry {1} is smaller than the unpooled "
                      "size {2}"));
  return finish(markUnsigned(res, isUns(x)));
}

} // namespace mlir::disc::onnx_import
