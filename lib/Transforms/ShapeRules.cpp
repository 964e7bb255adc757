//===- ShapeRules.cpp - the symbolic shape rule of every op ---------------===//
//
// ShapeAnalysis::visit: the dims (and, for small integer tensors, the
// values) of an op's results from those of its operands. See
// docs/symbolic-shapes.md, "Symbolic dims and passes".
//
//===----------------------------------------------------------------------===//
#include "disc/Dialect/Disc/IR/DiscDialect.h"
#include "disc/Transforms/ShapeAnalysis.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::disc;

/// Integer element values of a small constant (flattened), if any.
static std::optional<SmallVector<int64_t>> constantInts(Attribute attr) {
  auto dense = dyn_cast<DenseIntElementsAttr>(attr);
  if (!dense || dense.getNumElements() > 64)
    return std::nullopt;
  SmallVector<int64_t> r;
  for (const APInt &v : dense.getValues<APInt>())
    r.push_back(dense.getElementType().isInteger(1) ? (int64_t)v.getZExtValue()
                                                    : v.getSExtValue());
  return r;
}

/// Small statically shaped integer tensors carry symbolic values.
static bool isShapeLike(Value v) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  return t && t.hasStaticShape() && t.getNumElements() <= 64 &&
         isa<IntegerType, IndexType>(t.getElementType());
}

void ShapeAnalysis::visit(Operation *op) {
  auto res = [&](unsigned i = 0) { return op->getResult(i); };
  auto setVals = [&](SmallVector<AffineExpr> v) {
    if (op->getNumResults() == 1 && isShapeLike(res()) &&
        v.size() ==
            (size_t)cast<RankedTensorType>(res().getType()).getNumElements())
      values[res()] = std::move(v);
  };
  // Elementwise-broadcast values of several operands, combined by `fn`.
  auto mapValues =
      [&](ArrayRef<Value> ins,
          llvm::function_ref<AffineExpr(ArrayRef<AffineExpr>)> fn) {
        if (op->getNumResults() != 1 || !isShapeLike(res()))
          return;
        size_t n = cast<RankedTensorType>(res().getType()).getNumElements();
        SmallVector<SmallVector<AffineExpr>> vs;
        for (Value in : ins) {
          auto v = valuesOf(in);
          if (!v || (v->size() != n && v->size() != 1))
            return;
          vs.push_back(*v);
        }
        SmallVector<AffineExpr> out;
        for (size_t i = 0; i < n; ++i) {
          SmallVector<AffineExpr> args;
          for (auto &v : vs)
            args.push_back(v.size() == 1 ? v[0] : v[i]);
          if (llvm::any_of(args, [](AffineExpr e) { return !e; })) {
            out.push_back(AffineExpr());
            continue;
          }
          AffineExpr r = fn(args);
          out.push_back(r ? normalize(r) : r);
        }
        setVals(out);
      };

  // Binary elementwise ops: broadcast dims; the values of small integer
  // tensors where the op has a symbolic counterpart.
  auto binaryRule = [&](Operation *bin) {
    Value l = bin->getOperand(0), r = bin->getOperand(1);
    SmallVector<SmallVector<AffineExpr>> ins = {dimsOrFresh(l), dimsOrFresh(r)};
    setDims(res(), broadcast(ins, op), op);
    mapValues({l, r}, [&](ArrayRef<AffineExpr> a) -> AffineExpr {
      AffineExpr x = normalize(a[0]), y = normalize(a[1]);
      if (isa<disc::AddOp>(bin))
        return x + y;
      if (isa<disc::SubOp>(bin))
        return x - y;
      if (isa<disc::MulOp>(bin))
        return x * y;
      if (isa<disc::DivOp>(bin)) {
        // Truncating division equals floordiv for non-negative sizes.
        if (auto c = constOf(y); c && *c > 0) {
          if (auto xc = constOf(x))
            return cst(*xc / *c);
          return x.floorDiv(*c);
        }
        return exactDiv(x, y);
      }
      if (isa<disc::MaxOp, disc::MinOp>(bin)) {
        CompareResult cr = x == y ? CompareResult::EQ : solver.compare(x, y);
        bool isMax = isa<disc::MaxOp>(bin);
        switch (cr) {
        case CompareResult::EQ:
          return x;
        case CompareResult::GT:
        case CompareResult::GE:
          return isMax ? x : y;
        case CompareResult::LT:
        case CompareResult::LE:
          return isMax ? y : x;
        default:
          return AffineExpr();
        }
      }
      auto xc = constOf(x), yc = constOf(y);
      if (xc && yc) {
        if (isa<disc::RemOp>(bin) && *yc != 0)
          return cst(*xc % *yc);
        if (isa<disc::AndOp>(bin))
          return cst(*xc & *yc);
        if (isa<disc::OrOp>(bin))
          return cst(*xc | *yc);
        if (isa<disc::XorOp>(bin))
          return cst(*xc ^ *yc);
      }
      return AffineExpr();
    });
  };

  llvm::TypeSwitch<Operation *>(op)
      .Case([&](disc::ConstantOp c) {
        setDims(res(), {}, op);
        if (auto ints = constantInts(c.getValue())) {
          SmallVector<AffineExpr> v;
          for (int64_t x : *ints)
            v.push_back(cst(x));
          setVals(v);
        }
      })
      .Case([&](disc::ShapeOfOp s) {
        setDims(res(), {}, op);
        setVals(dimsOrFresh(s.getOperand()));
      })
      .Case([&](disc::ConvertOp c) {
        setDims(res(), dimsOrFresh(c.getOperand()), op);
        if (isa<IntegerType>(getElementTypeOrSelf(c.getOperand().getType())))
          if (auto v = valuesOf(c.getOperand()))
            setVals(*v);
      })
      .Case([&](disc::NegOp n) {
        setDims(res(), dimsOrFresh(n.getOperand()), op);
        mapValues({n.getOperand()},
                  [&](ArrayRef<AffineExpr> a) { return -a[0]; });
      })
      .Case([&](disc::SelectOp s) {
        SmallVector<SmallVector<AffineExpr>> ins = {
            dimsOrFresh(s.getPred()), dimsOrFresh(s.getOnTrue()),
            dimsOrFresh(s.getOnFalse())};
        setDims(res(), broadcast(ins, op), op);
        mapValues({s.getPred(), s.getOnTrue(), s.getOnFalse()},
                  [&](ArrayRef<AffineExpr> a) -> AffineExpr {
                    if (auto c = constOf(a[0]))
                      return *c ? a[1] : a[2];
                    if (normalize(a[1]) == normalize(a[2]))
                      return a[1];
                    return AffineExpr();
                  });
      })
      .Case([&](disc::CompareOp c) {
        SmallVector<SmallVector<AffineExpr>> ins = {dimsOrFresh(c.getLhs()),
                                                    dimsOrFresh(c.getRhs())};
        setDims(res(), broadcast(ins, op), op);
        auto dir = c.getDirection();
        mapValues({c.getLhs(), c.getRhs()},
                  [&](ArrayRef<AffineExpr> a) -> AffineExpr {
                    CompareResult r = solver.compare(a[0], a[1]);
                    if (normalize(a[0]) == normalize(a[1]))
                      r = CompareResult::EQ;
                    auto yes = [&] { return cst(1); };
                    auto no = [&] { return cst(0); };
                    using D = disc::CompareDirection;
                    switch (r) {
                    case CompareResult::EQ:
                      return (dir == D::EQ || dir == D::LE || dir == D::GE)
                                 ? yes()
                                 : no();
                    case CompareResult::LT:
                      return (dir == D::LT || dir == D::LE || dir == D::NE)
                                 ? yes()
                                 : no();
                    case CompareResult::GT:
                      return (dir == D::GT || dir == D::GE || dir == D::NE)
                                 ? yes()
                                 : no();
                    case CompareResult::LE:
                      if (dir == D::LE)
                        return yes();
                      if (dir == D::GT)
                        return no();
                      return AffineExpr();
                    case CompareResult::GE:
                      if (dir == D::GE)
                        return yes();
                      if (dir == D::LT)
                        return no();
                      return AffineExpr();
                    default:
                      return AffineExpr();
                    }
                  });
      })
      .Case([&](disc::DotGeneralOp d) {
        SmallVector<AffineExpr> l = dimsOrFresh(d.getLhs()),
                                r = dimsOrFresh(d.getRhs());
        auto lb = d.getLhsBatchingDimensions(),
             rb = d.getRhsBatchingDimensions();
        auto lc = d.getLhsContractingDimensions(),
             rc = d.getRhsContractingDimensions();
        SmallVector<AffineExpr> out;
        for (auto [a, b] : llvm::zip(lb, rb)) {
          equate(l[a], r[b]);
          out.push_back(l[a]);
        }
        for (auto [a, b] : llvm::zip(lc, rc))
          equate(l[a], r[b]);
        for (int64_t i = 0; i < (int64_t)l.size(); ++i)
          if (!llvm::is_contained(lb, i) && !llvm::is_contained(lc, i))
            out.push_back(l[i]);
        for (int64_t i = 0; i < (int64_t)r.size(); ++i)
          if (!llvm::is_contained(rb, i) && !llvm::is_contained(rc, i))
            out.push_back(r[i]);
        setDims(res(), out, op);
      })
      .Case([&](disc::ConvOp c) {
        SmallVector<AffineExpr> in = dimsOrFresh(c.getInput()),
                                w = dimsOrFresh(c.getFilter());
        SmallVector<AffineExpr> out = {in[0], w[0]};
        size_t k = in.size() - 2;
        auto pad = c.getPadding();
        for (size_t i = 0; i < k; ++i) {
          int64_t lo = pad.size() == 2 * k ? pad[i] : 0;
          int64_t hi = pad.size() == 2 * k ? pad[k + i] : 0;
          int64_t dil = c.getDilations()[i], st = c.getStrides()[i];
          AffineExpr num = in[2 + i] + (lo + hi) - (w[2 + i] - 1) * dil - 1;
          out.push_back(normalize(num.floorDiv(st) + 1));
        }
        setDims(res(), out, op);
      })
      .Case([&](disc::ConvTransposeOp c) {
        // ONNX ConvTranspose: s * (D - 1) + out_pad + (K - 1) * dil + 1 -
        // pad_lo - pad_hi.
        SmallVector<AffineExpr> in = dimsOrFresh(c.getInput()),
                                w = dimsOrFresh(c.getFilter());
        SmallVector<AffineExpr> out = {in[0], w[1] * c.getFeatureGroupCount()};
        size_t k = in.size() - 2;
        auto pad = c.getPadding();
        for (size_t i = 0; i < k; ++i) {
          int64_t st = c.getStrides()[i], dil = c.getDilations()[i];
          AffineExpr o = (in[2 + i] - 1) * st + (w[2 + i] - 1) * dil +
                         (c.getOutputPadding()[i] + 1 - pad[i] - pad[k + i]);
          out.push_back(normalize(o));
        }
        equate(in[1], w[0]);
        setDims(res(), out, op);
      })
      .Case([&](disc::PoolOp p) {
        SmallVector<AffineExpr> in = dimsOrFresh(p.getInput());
        SmallVector<AffineExpr> out = {in[0], in[1]};
        size_t k = in.size() - 2;
        auto pad = p.getPadding();
        for (size_t i = 0; i < k; ++i) {
          int64_t lo = pad.size() == 2 * k ? pad[i] : 0;
          int64_t hi = pad.size() == 2 * k ? pad[k + i] : 0;
          int64_t dil = p.getDilations()[i], st = p.getStrides()[i];
          int64_t win = p.getWindow()[i];
          AffineExpr num = in[2 + i] + (lo + hi - dil * (win - 1) - 1);
          out.push_back(normalize(
              (p.getCeilMode() ? num.ceilDiv(st) : num.floorDiv(st)) + 1));
        }
        setDims(res(), out, op);
      })
      .Case([&](disc::ReduceOp r) {
        SmallVector<AffineExpr> in = dimsOrFresh(r.getInput()), out;
        for (int64_t i = 0; i < (int64_t)in.size(); ++i) {
          if (!llvm::is_contained(r.getDimensions(), i))
            out.push_back(in[i]);
          else if (r.getKeepDims())
            out.push_back(cst(1));
        }
        setDims(res(), out, op);
      })
      .Case([&](disc::ArgReduceOp r) {
        SmallVector<AffineExpr> in = dimsOrFresh(r.getInput()), out;
        for (int64_t i = 0; i < (int64_t)in.size(); ++i) {
          if (i != static_cast<int64_t>(r.getDimension()))
            out.push_back(in[i]);
          else if (r.getKeepDims())
            out.push_back(cst(1));
        }
        setDims(res(), out, op);
      })
      .Case([&](disc::ExpandOp e) {
        SmallVector<AffineExpr> in = dimsOrFresh(e.getOperand());
        auto target = valuesOf(e.getShape());
        int64_t rank = cast<RankedTensorType>(e.getType()).getRank();
        SmallVector<AffineExpr> tv;
        if (target)
          tv = *target;
        else
          tv.assign(rank, AffineExpr());
        SmallVector<AffineExpr> out(rank);
        for (int64_t i = 0; i < rank; ++i) {
          int64_t j = i - (rank - (int64_t)in.size());
          AffineExpr t = i < (int64_t)tv.size() ? tv[i] : AffineExpr();
          AffineExpr d = j >= 0 ? in[j] : cst(1);
          if (!t) {
            // Unknown target entry: only a static non-1 operand dim decides.
            auto dc = constOf(d);
            out[i] = (dc && *dc != 1) ? d : AffineExpr();
            continue;
          }
          SmallVector<SmallVector<AffineExpr>> pair = {{d}, {t}};
          out[i] = broadcast(pair, op)[0];
        }
        setDims(res(), out, op);
        if (auto v = valuesOf(e.getOperand()); v && v->size() == 1) {
          auto rt = cast<RankedTensorType>(e.getType());
          if (isShapeLike(res()))
            setVals(SmallVector<AffineExpr>(rt.getNumElements(), (*v)[0]));
        }
      })
      .Case([&](disc::DynamicReshapeOp r) {
        SmallVector<AffineExpr> in = dimsOrFresh(r.getOperand());
        auto rt = cast<RankedTensorType>(r.getType());
        auto target = valuesOf(r.getShape());
        SmallVector<AffineExpr> out(rt.getRank());
        if (target && (int64_t)target->size() == rt.getRank()) {
          int inferred = -1;
          // An entry the run-time checks would reject (a negative other
          // than -1, a 0 past the input rank) keeps them.
          bool badEntry = false;
          for (int64_t i = 0; i < rt.getRank(); ++i) {
            AffineExpr t = (*target)[i];
            auto c = constOf(t);
            badEntry |= c && (*c < -1 || (*c == 0 && !r.getAllowZero() &&
                                          i >= (int64_t)in.size()));
            if (c && *c == 0 && !r.getAllowZero())
              out[i] = i < (int64_t)in.size() ? in[i] : AffineExpr();
            else if (c && *c == -1)
              inferred = inferred == -1 ? (int)i : -2;
            else if (!c || *c >= 0)
              out[i] = t;
          }
          for (int64_t i = 0; i < rt.getRank(); ++i)
            if (!rt.isDynamicDim(i) && !out[i])
              out[i] = cst(rt.getDimSize(i));
          // Element count equality resolves -1 (or one unknown entry).
          AffineExpr total = cst(1);
          for (AffineExpr d : in)
            total = total * d;
          int missing = -1, numMissing = 0;
          AffineExpr known = cst(1);
          for (int64_t i = 0; i < rt.getRank(); ++i) {
            if (!out[i]) {
              missing = i;
              ++numMissing;
            } else {
              known = known * out[i];
            }
          }
          if (numMissing == 1 &&
              llvm::all_of(in, [](AffineExpr e) { return (bool)e; })) {
            AffineExpr q = exactDiv(total, known);
            if (!q) {
              q = fresh(op, false);
              equate(normalize(known * q), total);
            } else if (!badEntry && !hasUnknown(q) &&
                       !hasUnknown(normalize(total))) {
              provenReshapes.insert(op);
            }
            out[missing] = q;
          } else if (numMissing == 0 &&
                     llvm::all_of(in, [](AffineExpr e) { return (bool)e; })) {
            if (!badEntry && normalize(total) == normalize(known) &&
                !hasUnknown(normalize(total)))
              provenReshapes.insert(op);
            equate(total, known);
          }
        }
        setDims(res(), out, op);
        if (auto v = valuesOf(r.getOperand()))
          setVals(*v);
      })
      .Case([&](disc::TransposeOp t) {
        SmallVector<AffineExpr> in = dimsOrFresh(t.getOperand()), out;
        for (int64_t p : t.getPermutation())
          out.push_back(in[p]);
        setDims(res(), out, op);
        if (in.size() <= 1)
          if (auto v = valuesOf(t.getOperand()))
            setVals(*v);
      })
      .Case([&](disc::ConcatenateOp c) {
        int64_t axis = c.getDimension();
        SmallVector<AffineExpr> out;
        AffineExpr sum = cst(0);
        SmallVector<AffineExpr> vals;
        bool valsOk = cast<RankedTensorType>(c.getType()).getRank() == 1;
        for (auto [k, in] : llvm::enumerate(c.getInputs())) {
          SmallVector<AffineExpr> d = dimsOrFresh(in);
          if (k == 0)
            out = d;
          else
            for (size_t i = 0; i < d.size(); ++i)
              if ((int64_t)i != axis)
                equate(out[i], d[i]);
          sum = sum + d[axis];
          if (auto v = valuesOf(in); v && valsOk)
            vals.append(*v);
          else
            valsOk = false;
        }
        out[axis] = sum;
        setDims(res(), out, op);
        if (valsOk)
          setVals(vals);
      })
      .Case([&](disc::SliceOp s) {
        SmallVector<AffineExpr> in = dimsOrFresh(s.getOperand());
        SmallVector<AffineExpr> out = in;
        auto st = valuesOf(s.getStarts()), en = valuesOf(s.getEnds()),
             sp = valuesOf(s.getSteps());
        for (auto [k, axis] : llvm::enumerate(s.getAxes())) {
          AffineExpr a = st && k < st->size() ? (*st)[k] : AffineExpr();
          AffineExpr b = en && k < en->size() ? (*en)[k] : AffineExpr();
          AffineExpr c = sp && k < sp->size() ? (*sp)[k] : AffineExpr();
          out[axis] = sliceSize(in[axis], a, b, c, op);
        }
        setDims(res(), out, op);
        // Slice of a shape vector with constant bounds.
        auto v = valuesOf(s.getOperand());
        if (v && in.size() == 1 && st && en && sp) {
          auto a = constOf((*st)[0]), b = constOf((*en)[0]),
               c = constOf((*sp)[0]);
          int64_t n = v->size();
          if (a && b && c && *c != 0) {
            auto wrap = [&](int64_t x, int64_t lo, int64_t hi) {
              if (x < 0)
                x += n;
              return std::min(std::max(x, lo), hi);
            };
            int64_t s0 = *c < 0 ? wrap(*a, 0, n - 1) : wrap(*a, 0, n);
            int64_t e0 = *c < 0 ? wrap(*b, -1, n - 1) : wrap(*b, 0, n);
            SmallVector<AffineExpr> r;
            for (int64_t i = s0; *c > 0 ? i < e0 : i > e0; i += *c)
              r.push_back((*v)[i]);
            setVals(r);
          }
        }
      })
      .Case([&](disc::GatherOp g) {
        SmallVector<AffineExpr> data = dimsOrFresh(g.getData()),
                                idx = dimsOrFresh(g.getIndices());
        int64_t axis = g.getAxis();
        SmallVector<AffineExpr> out(data.begin(), data.begin() + axis);
        out.append(idx.begin(), idx.end());
        out.append(data.begin() + axis + 1, data.end());
        setDims(res(), out, op);
        auto v = valuesOf(g.getData());
        auto iv = valuesOf(g.getIndices());
        if (v && iv && data.size() == 1) {
          SmallVector<AffineExpr> r;
          for (AffineExpr i : *iv) {
            auto c = constOf(i);
            if (!c) {
              r.push_back(AffineExpr());
              continue;
            }
            int64_t k = *c < 0 ? *c + (int64_t)v->size() : *c;
            r.push_back(k >= 0 && k < (int64_t)v->size() ? (*v)[k]
                                                         : AffineExpr());
          }
          setVals(r);
        }
      })
      .Case([&](disc::PadOp p) {
        SmallVector<AffineExpr> in = dimsOrFresh(p.getOperand()), out = in;
        auto pads = valuesOf(p.getPads());
        for (size_t i = 0; i < in.size(); ++i) {
          if (pads && pads->size() == 2 * in.size() && (*pads)[i] &&
              (*pads)[in.size() + i])
            out[i] = in[i] + (*pads)[i] + (*pads)[in.size() + i];
          else
            out[i] = AffineExpr();
        }
        setDims(res(), out, op);
      })
      .Case([&](disc::RangeOp r) {
        auto s = valuesOf(r.getStart()), l = valuesOf(r.getLimit()),
             d = valuesOf(r.getDelta());
        AffineExpr count;
        if (s && l && d && (*s)[0] && (*l)[0] && (*d)[0]) {
          auto dc = constOf((*d)[0]);
          AffineExpr span = normalize((*l)[0] - (*s)[0]);
          if (dc && *dc > 0) {
            auto sc = constOf(span);
            if (sc)
              count = cst(std::max<int64_t>(0, (*sc + *dc - 1) / *dc));
            else if (solver.compare(span, cst(0)) != CompareResult::LT)
              // Sizes are non-negative: the count is the ceil division.
              count = span.ceilDiv(*dc);
          }
        }
        if (!count)
          count = fresh(op, false);
        setDims(res(), {count}, op);
      })
      .Case([&](disc::ResizeOp r) {
        SmallVector<AffineExpr> in = dimsOrFresh(r.getOperand());
        auto sizes = valuesOf(r.getSizes());
        SmallVector<AffineExpr> out(in.size());
        for (int64_t i = 0; i < (int64_t)in.size(); ++i) {
          if (!llvm::is_contained(r.getAxes(), i))
            out[i] = in[i];
          else if (sizes && i < (int64_t)sizes->size() && (*sizes)[i])
            out[i] = (*sizes)[i];
          else
            out[i] = fresh(op, false); // sizes or scales known at run time
        }
        setDims(res(), out, op);
      })
      .Case([&](disc::GatherElementsOp g) {
        setDims(res(), dimsOrFresh(g.getIndices()), op);
      })
      .Case([&](disc::GatherNdOp g) {
        SmallVector<AffineExpr> data = dimsOrFresh(g.getData()),
                                idx = dimsOrFresh(g.getIndices());
        SmallVector<AffineExpr> out(idx.begin(), idx.end() - 1);
        int64_t tail =
            cast<RankedTensorType>(g.getType()).getRank() - (int64_t)out.size();
        out.append(data.end() - tail, data.end());
        setDims(res(), out, op);
      })
      .Case([&](disc::GridSampleOp g) {
        SmallVector<AffineExpr> in = dimsOrFresh(g.getInput()),
                                grid = dimsOrFresh(g.getGrid());
        equate(in[0], grid[0]);
        setDims(res(), {in[0], in[1], grid[1], grid[2]}, op);
      })
      .Case<disc::ScatterElementsOp, disc::ScatterNdOp, disc::ArgSortOp>(
          [&](Operation *o) {
            setDims(res(), dimsOrFresh(o->getOperand(0)), op);
          })
      .Case([&](scf::ForOp f) {
        // Loops built by the importer (recurrent layers) carry values of a
        // loop-invariant shape: each region argument and result has the
        // dims of its init value.
        for (auto [init, arg, r] : llvm::zip(
                 f.getInitArgs(), f.getRegionIterArgs(), f.getResults())) {
          SmallVector<AffineExpr> d = dimsOrFresh(init);
          setDims(arg, d, op);
          setDims(r, d, op);
        }
      })
      .Case([&](tensor::InsertSliceOp s) {
        setDims(res(), dimsOrFresh(s.getDest()), op);
      })
      .Case([&](tensor::CastOp c) {
        setDims(res(), dimsOrFresh(c.getSource()), op);
      })
      // disc-remat's regenerate point (Remat.cpp): the buffer of the value,
      // sized by `tensor.dim`s of it at the evict point, then an scf.if
      // that yields that buffer or the recomputed value written into it.
      // All three have the evicted value's dims, so ops after a regenerate
      // point keep their proven shapes (no versioned lowering, fusion).
      .Case([&](bufferization::AllocTensorOp a) {
        auto t = cast<RankedTensorType>(a.getType());
        SmallVector<AffineExpr> d;
        unsigned next = 0;
        for (int64_t i = 0; i < t.getRank(); ++i) {
          if (!t.isDynamicDim(i)) {
            d.push_back(cst(t.getDimSize(i)));
            continue;
          }
          auto dim = a.getDynamicSizes()[next++].getDefiningOp<tensor::DimOp>();
          std::optional<int64_t> j =
              dim ? dim.getConstantIndex() : std::nullopt;
          SmallVector<AffineExpr> src;
          if (j)
            src = dimsOrFresh(dim.getSource());
          d.push_back(j && *j < (int64_t)src.size() ? src[*j]
                                                    : fresh(op, false));
        }
        setDims(res(), d, op);
      })
      .Case([&](bufferization::MaterializeInDestinationOp m) {
        setDims(res(), dimsOrFresh(m.getDest()), op);
      })
      .Case([&](scf::IfOp ifOp) {
        if (!ifOp->hasAttr("disc.remat_regenerate")) {
          for (Value r : ifOp.getResults())
            setDims(r, {}, op);
          return;
        }
        setDims(res(), dimsOrFresh(ifOp.thenYield().getOperand(0)), op);
      })
      .Default([&](Operation *other) {
        // Compare and select have their own rules above.
        if (other->hasTrait<OpTrait::disc::Elementwise>() &&
            other->getNumOperands() == 2) {
          binaryRule(other);
          return;
        }
        // Ops with one same-shaped operand (unary elementwise and friends).
        if (other->getNumOperands() == 1 && other->getNumResults() == 1 &&
            other->getOperand(0).getType() == res().getType() &&
            isa<disc::DiscDialect>(other->getDialect())) {
          setDims(res(), dimsOrFresh(other->getOperand(0)), op);
          return;
        }
        for (Value r : other->getResults())
          setDims(r, {}, op);
      });
}
