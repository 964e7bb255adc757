//===- Sequences.cpp - ONNX sequence ops
//------------------------------------===//
//
//===----------------------------------------------------------------------===//
#include "Importer.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/MathExtras.h"

#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <map>

namespace mlir::disc::onnx_import {

FailureOr<SmallVector<Value>> Importer::inSeq(unsigned i) {
  if (!has(i)) {
    err() << "expects a sequence as input #" << i;
    return failure();
  }
  auto it = sequences.find(node->input(i));
  if (it == sequences.end()) {
    err() << "input #" << i << " ('" << node->input(i)
          << "') is not a sequence";
    return failure();
  }
  return it->second;
}

/// A sequence position as a run-time i64 [1] tensor: negative positions
/// count from the end, `n` being the sequence length (ONNX
/// SequenceAt/Insert/Erase).
FailureOr<Value> Importer::seqIndex(Value pos, int64_t n) {
  if (!pos || tt(pos).getNumElements() != 1 || !isa<IntegerType>(elt(pos))) {
    err() << "position must be an integer scalar";
    return failure();
  }
  return wrapNegative(reshapeT(toI64(pos), {tdimConst(1)}), n);
}

/// Sequence ops on compile-time lists. A position known at compile time
/// indexes the list; a run-time position selects among the elements
/// (which must then share one type): SequenceAt is a select chain,
/// Erase/Insert rebuild each slot as a select between its neighbours.
/// Spec: ONNX operators SequenceEmpty ... SplitToSequence (opset 11).
LogicalResult Importer::importSequence(StringRef op) {
  auto setSeq = [&](SmallVector<Value> elems) {
    if (wantOut(0))
      sequences[node->output(0)] = std::move(elems);
    return success();
  };
  // The run-time position input `i` in a sequence of length `n` whose
  // elements `elems` must then share one static type.
  auto runtimePos = [&](ArrayRef<Value> elems, unsigned i,
                        int64_t n) -> FailureOr<Value> {
    for (Value e : elems)
      if (e.getType() != elems.front().getType() || !tt(e).hasStaticShape())
        return err() << "a run-time position needs sequence elements of one "
                        "static type";
    return seqIndex(in(i), n);
  };
  auto knownPos = [&](unsigned i) -> std::optional<int64_t> {
    if (!has(i))
      return std::nullopt;
    std::optional<SmallVector<int64_t>> k = knownInts(in(i));
    if (!k || k->size() != 1)
      return std::nullopt;
    return (*k)[0];
  };
  if (op == "SequenceEmpty")
    return setSeq({});
  if (op == "SequenceConstruct") {
    SmallVector<Value> elems;
    for (unsigned i = 0; i < numIn(); ++i)
      if (Value v = in(i))
        elems.push_back(v);
    return setSeq(elems);
  }
  if (op == "SplitToSequence") {
    Value x = in(0);
    if (!x)
      return err() << "expects an input";
    int64_t r = rank(x);
    FailureOr<int64_t> axis = normAxis(aInt("axis", 0), r);
    if (::mlir::failed(axis))
      return failure();
    bool keep = aInt("keepdims", 1) != 0;
    Dim d = dims(x)[*axis];
    SmallVector<Value> elems;
    Value one = constI64({1});
    auto piece = [&](Value start, Value end, Dim size) {
      Dims o = dims(x);
      o[*axis] = size;
      return mk<SliceOp>(o, elt(x), x, start, end, one,
                         ArrayRef<int64_t>{*axis});
    };
    if (!has(1)) {
      // Pieces of size 1; keepdims = 0 drops the axis.
      if (!d.isStatic())
        return err() << "without 'split', the split axis must be static";
      for (int64_t i = 0; i < d.size; ++i) {
        Value p = piece(constI64({i}), constI64({i + 1}), Dim(1));
        if (!keep) {
          SmallVector<TDim> t;
          for (int64_t j = 0; j < r; ++j)
            if (j != *axis)
              t.push_back(tdimOf(p, j));
          p = reshapeT(p, t);
        }
        elems.push_back(p);
      }
      return setSeq(elems);
    }
    Value splitV = toI64(in(1));
    if (rank(splitV) == 0) {
      std::optional<SmallVector<int64_t>> k = knownInts(splitV);
      if (!k || (*k)[0] <= 0 || !d.isStatic())
        return err() << "a scalar 'split' must be a positive constant and the "
                        "split axis static";
      int64_t chunk = (*k)[0];
      for (int64_t st = 0; st < d.size; st += chunk) {
        int64_t en = std::min(d.size, st + chunk);
        elems.push_back(piece(constI64({st}), constI64({en}), Dim(en - st)));
      }
      return setSeq(elems);
    }
    if (rank(splitV) != 1 || ShapedType::isDynamic(tt(splitV).getDimSize(0)))
      return err() << "'split' must be a scalar or a 1-D tensor of static "
                      "length";
    std::optional<Dims> ks = known(splitV);
    Value start = constI64({0});
    for (int64_t i = 0, n = tt(splitV).getDimSize(0); i < n; ++i) {
      Value size = slice1D(splitV, i, i + 1);
      Value end = binary<AddOp>(start, size);
      elems.push_back(piece(start, end, ks ? (*ks)[i] : Dim()));
      start = end;
    }
    return setSeq(elems);
  }

  FailureOr<SmallVector<Value>> seq = inSeq(0);
  if (::mlir::failed(seq))
    return failure();
  SmallVector<Value> elems = *seq;
  int64_t n = elems.size();
  if (op == "SequenceLength") {
    out(0, constI64Scalar(n));
    return success();
  }
  if (op == "ConcatFromSequence") {
    if (elems.empty())
      return err() << "cannot concatenate an empty sequence";
    int64_t r = rank(elems[0]);
    bool newAxis = aInt("new_axis", 0) != 0;
    FailureOr<int64_t> axis = normAxis(aInt("axis", 0), newAxis ? r + 1 : r);
    if (::mlir::failed(axis))
      return failure();
    SmallVector<Value> parts;
    for (Value e : elems) {
      if (rank(e) != r || elt(e) != elt(elems[0]))
        return err() << "sequence elements must have one rank and element "
                        "type";
      parts.push_back(newAxis ? unsqueezeAt(e, *axis) : e);
    }
    Dims o = dims(parts[0]);
    for (Value v : ArrayRef(parts).drop_front()) {
      Dims dv = dims(v);
      for (size_t i = 0; i < o.size(); ++i)
        if (i == (size_t)*axis)
          o[i] = o[i].isStatic() && dv[i].isStatic()
                     ? Dim(o[i].size + dv[i].size)
                     : Dim();
        else if (!o[i].isStatic() && dv[i].isStatic())
          o[i] = dv[i];
    }
    out(0, parts.size() == 1
               ? parts[0]
               : mk<ConcatenateOp>(o, elt(parts[0]), parts, (uint64_t)*axis));
    return success();
  }
  if (op == "SequenceAt") {
    if (n == 0)
      return err() << "position out of range of an empty sequence";
    if (std::optional<int64_t> k = knownPos(1)) {
      int64_t p = *k < 0 ? *k + n : *k;
      if (p < 0 || p >= n)
        return err() << "position " << *k << " out of range for length " << n;
      out(0, elems[p]);
      return success();
    }
    FailureOr<Value> p = runtimePos(elems, 1, n);
    if (::mlir::failed(p))
      return failure();
    Value r = elems[0];
    for (int64_t i = 1; i < n; ++i)
      r = select(compare(CompareDirection::EQ, *p, constI64({i})), elems[i], r);
    out(0, r);
    return success();
  }
  if (op == "SequenceErase") {
    if (n == 0)
      return err() << "cannot erase from an empty sequence";
    if (!has(1)) {
      elems.pop_back();
      return setSeq(elems);
    }
    if (std::optional<int64_t> k = knownPos(1)) {
      int64_t p = *k < 0 ? *k + n : *k;
      if (p < 0 || p >= n)
        return err() << "position " << *k << " out of range for length " << n;
      elems.erase(elems.begin() + p);
      return setSeq(elems);
    }
    FailureOr<Value> p = runtimePos(elems, 1, n);
    if (::mlir::failed(p))
      return failure();
    SmallVector<Value> res;
    for (int64_t i = 0; i + 1 < n; ++i) // slot i: e[i] before p, else e[i+1]
      res.push_back(select(compare(CompareDirection::GT, *p, constI64({i})),
                           elems[i], elems[i + 1]));
    return setSeq(res);
  }
  if (op == "SequenceInsert") {
    Value t = in(1);
    if (!t)
      return err() << "expects a tensor to insert";
    if (!has(2)) {
      elems.push_back(t);
      return setSeq(elems);
    }
    if (std::optional<int64_t> k = knownPos(2)) {
      int64_t p = *k < 0 ? *k + n : *k;
      if (p < 0 || p > n)
        return err() << "position " << *k << " out of range for length " << n;
      elems.insert(elems.begin() + p, t);
      return setSeq(elems);
    }
    SmallVector<Value> all = elems;
    all.push_back(t);
    FailureOr<Value> p = runtimePos(all, 2, n);
    if (::mlir::failed(p))
      return failure();
    SmallVector<Value> res;
    for (int64_t i = 0; i <= n; ++i) {
      // slot i: e[i] before p, t at p, e[i-1] after p.
      Value after = i > 0 ? elems[i - 1] : t;
      Value at =
          select(compare(CompareDirection::EQ, *p, constI64({i})), t, after);
      res.push_back(
          i < n ? select(compare(CompareDirection::GT, *p, constI64({i})),
                         elems[i], at)
                : at);
    }
    return setSeq(res);
  }
  return err() << "unsupported sequence op";
}

} // namespace mlir::disc::onnx_import

namespace mlir::disc::onnx_import {

/// ONNX OptionalHasElement / OptionalGetElement (opsets 15, 18) on an
/// optional tensor graph input, a [count, dims...] tensor with count 0 or 1
/// (importInputs): HasElement is `count == 1` (a bool scalar); GetElement
/// takes element 0 of the count dim (a gather, whose index check stops the
/// run when the optional is empty, as the spec requires an error there). On a
/// plain tensor (opset 18 allows it), HasElement is true and GetElement the
/// identity.
LogicalResult Importer::importOptionalInput(StringRef op) {
  Value x = in(0);
  bool optional = optionalInputs.contains(node->input(0));
  if (op == "OptionalHasElement") {
    if (!optional)
      return finish(constScalar(b.getI1Type(), 1));
    return finish(
        compare(CompareDirection::EQ, dimScalar(x, 0), constI64Scalar(1)));
  }
  if (!optional)
    return finish(x);
  // A gather of element 0, not a reshape: a reshape would tell the shape
  // analysis that the count is 1 and fold OptionalHasElement elsewhere.
  Dims d = dims(x);
  d.erase(d.begin());
  Value e = mk<GatherOp>(d, elt(x), x, constI64Scalar(0), (uint64_t)0);
  return finish(markUnsigned(e, isUns(x)));
}

} // namespace mlir::disc::onnx_import
