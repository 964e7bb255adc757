//===- ControlFlow.cpp - ONNX If and Loop as scf.if / scf.while ----------===//
//
// An ONNX subgraph (If's branches, Loop's body) becomes a region of an `scf`
// op whose body holds `disc` ops, as the recurrent layers' `scf.for` does
// (Recurrent.cpp). Subgraphs read outer-scope values by name; the regions
// use the outer SSA values directly (scf regions are not isolated).
//
// Loop becomes an scf.while carrying (iteration number, condition, the
// loop-carried values). A carried value whose dims the body may change gets
// dynamic dims (a fresh symbol each in the shape analysis); one whose body
// output has the dims of its input keeps them (`disc.shape_invariant`).
//
// Result shapes: a dim equal in both branches (the same static size or the
// same named dim) keeps it; any other dim is dynamic and the shape analysis
// gives it a fresh symbol (ShapeRules.cpp). A condition known at import time
// (a constant, or a comparison of known shape values) imports the taken
// branch only.
//
//===----------------------------------------------------------------------===//
#include "Importer.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace mlir::disc::onnx_import {

const onnx::GraphProto *Importer::graphAttr(StringRef name) {
  const onnx::AttributeProto *a = attr(name);
  if (!a || !a->has_g()) {
    err() << "expects a graph attribute '" << name << "'";
    return nullptr;
  }
  return &a->g();
}

FailureOr<SmallVector<Value>>
Importer::importSubgraph(const onnx::GraphProto &g, ArrayRef<Value> inputs) {
  if (g.input_size() != (int)inputs.size()) {
    err() << "subgraph '" << g.name() << "' has " << g.input_size()
          << " inputs, expected " << inputs.size();
    return failure();
  }
  // Names defined inside the subgraph are scoped to it; shapes computed
  // inside it must not be reused after it.
  const onnx::NodeProto *savedNode = node;
  std::string savedName = nodeName;
  Location savedLoc = loc;
  llvm::StringMap<Value> savedValues = values;
  DenseMap<Value, Value> savedShapes = shapeCache;
  SmallVector<std::string> scopedInits;
  for (const onnx::TensorProto &t : g.initializer())
    if (initializers.try_emplace(t.name(), &t).second)
      scopedInits.push_back(t.name());
  auto restore = [&] {
    // Initializer constants live at the top of the function: keep them.
    for (auto &e : values)
      if (!savedValues.count(e.getKey()) && e.getValue() &&
          e.getValue().getParentBlock() == funcEntry &&
          !llvm::is_contained(scopedInits, e.getKey().str()))
        savedValues[e.getKey()] = e.getValue();
    values = std::move(savedValues);
    shapeCache = std::move(savedShapes);
    for (const std::string &n : scopedInits)
      initializers.erase(n);
    node = savedNode;
    nodeName = savedName;
    loc = savedLoc;
  };
  for (auto [vi, v] : llvm::zip(g.input(), inputs))
    values[vi.name()] = v;
  SmallVector<Value> outs;
  bool ok = true;
  for (int i = 0; ok && i < g.node_size(); ++i)
    ok = ::mlir::succeeded(importNode(g.node(i), i)) && !failed;
  if (ok) {
    node = nullptr;
    for (const onnx::ValueInfoProto &vi : g.output()) {
      Value v = lookup(vi.name());
      if (!v) {
        ok = false;
        break;
      }
      outs.push_back(v);
    }
  }
  restore();
  if (!ok)
    return failure();
  return outs;
}

/// The value of a one-element bool tensor known at import time.
static std::optional<bool> knownBool(Value v) {
  auto c = v.getDefiningOp<ConstantOp>();
  if (!c)
    return std::nullopt;
  auto d = dyn_cast<DenseIntElementsAttr>(c.getValue());
  if (!d || d.getNumElements() != 1)
    return std::nullopt;
  return !(*d.getValues<APInt>().begin()).isZero();
}

LogicalResult Importer::importIf(StringRef) {
  Value c = in(0);
  if (!elt(c).isInteger(1))
    return err() << "the condition must be a bool tensor, got " << elt(c);
  if (!maybeScalar(c))
    return err() << "the condition must have one element, got " << tt(c);
  const onnx::GraphProto *thenG = graphAttr("then_branch");
  const onnx::GraphProto *elseG = graphAttr("else_branch");
  if (!thenG || !elseG)
    return failure();
  int n = node->output_size();
  if (thenG->output_size() != n || elseG->output_size() != n)
    return err() << "then_branch has " << thenG->output_size()
                 << " outputs and else_branch " << elseG->output_size()
                 << "; the node has " << n;
  const onnx::NodeProto *ifNode = node;
  Location ifLoc = loc;

  // A condition known now: import the branch taken only.
  std::optional<bool> k = knownBool(c);
  if (!k)
    if (std::optional<SmallVector<int64_t>> ints = knownInts(c);
        ints && ints->size() == 1)
      k = (*ints)[0] != 0;
  if (k) {
    FailureOr<SmallVector<Value>> outs =
        importSubgraph(*k ? *thenG : *elseG, {});
    if (::mlir::failed(outs))
      return failure();
    for (int i = 0; i < n; ++i)
      out(i, (*outs)[i]);
    return success();
  }

  // The one element as an i1 (a reshape to 0-d checks the count at run
  // time when the type does not fix it).
  if (rank(c) != 0)
    c = reshapeToScalar(c);
  Value cond = tensor::ExtractOp::create(b, loc, c, ValueRange{});
  auto ifOp = scf::IfOp::create(b, loc, TypeRange{}, cond,
                                /*withElseRegion=*/true);
  SmallVector<Value> branchOuts[2];
  const onnx::GraphProto *graphs[2] = {thenG, elseG};
  Block *blocks[2] = {ifOp.thenBlock(), ifOp.elseBlock()};
  for (int br = 0; br < 2; ++br) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(blocks[br]->getTerminator());
    FailureOr<SmallVector<Value>> outs = importSubgraph(*graphs[br], {});
    if (::mlir::failed(outs))
      return failure();
    branchOuts[br] = std::move(*outs);
  }
  // The result of each output: the branches' types joined dim by dim.
  SmallVector<Type> types;
  SmallVector<Dims> resultDims;
  SmallVector<bool> uns;
  for (int i = 0; i < n; ++i) {
    Value t = branchOuts[0][i], e = branchOuts[1][i];
    auto ta = dyn_cast<RankedTensorType>(t.getType());
    auto te = dyn_cast<RankedTensorType>(e.getType());
    if (!ta || !te || ta.getElementType() != te.getElementType() ||
        ta.getRank() != te.getRank() || isUns(t) != isUns(e))
      return err() << "output #" << i << ": then_branch gives " << t.getType()
                   << " and else_branch " << e.getType()
                   << " (the element type and rank must agree)";
    Dims dt = dims(t), de = dims(e), d;
    for (auto [x, y] : llvm::zip(dt, de))
      d.push_back(x == y ? x : Dim());
    types.push_back(typeFor(d, ta.getElementType()));
    resultDims.push_back(d);
    uns.push_back(isUns(t));
  }
  auto res = scf::IfOp::create(b, ifLoc, types, cond, /*addThenBlock=*/false,
                               /*addElseBlock=*/false);
  res.getThenRegion().takeBody(ifOp.getThenRegion());
  res.getElseRegion().takeBody(ifOp.getElseRegion());
  ifOp.erase();
  Block *newBlocks[2] = {res.thenBlock(), res.elseBlock()};
  for (int br = 0; br < 2; ++br) {
    OpBuilder::InsertionGuard guard(b);
    newBlocks[br]->getTerminator()->erase();
    b.setInsertionPointToEnd(newBlocks[br]);
    SmallVector<Value> yields;
    for (int i = 0; i < n; ++i) {
      Value v = branchOuts[br][i];
      if (v.getType() != types[i])
        v = tensor::CastOp::create(b, ifLoc, types[i], v);
      yields.push_back(v);
    }
    scf::YieldOp::create(b, ifLoc, yields);
  }
  node = ifNode;
  loc = ifLoc;
  for (int i = 0; i < n; ++i) {
    Value r = res.getResult(i);
    record(r, resultDims[i]);
    markUnsigned(r, uns[i]);
    out(i, r);
  }
  return success();
}

/// Forgets what the importer recorded about the values defined inside `op`
/// (the maps are keyed by pointer), then erases it.
void Importer::eraseWithRegions(Operation *op) {
  op->walk([&](Operation *inner) {
    for (Value r : inner->getResults()) {
      dimNames.erase(r);
      knownVals.erase(r);
      shapeCache.erase(r);
      unsignedVals.erase(r);
    }
  });
  for (auto it = shapeCache.begin(); it != shapeCache.end();) {
    auto cur = it++;
    Operation *def = cur->second.getDefiningOp();
    if (def && op->isAncestor(def))
      shapeCache.erase(cur);
  }
  op->erase();
}

LogicalResult Importer::importLoop(StringRef) {
  const onnx::GraphProto *body = graphAttr("body");
  if (!body)
    return failure();
  int numCarried = node->input_size() - 2;
  if (numCarried < 0)
    return err() << "expects the inputs M, cond and the loop-carried values "
                    "(M and cond may be empty names)";
  int numScan = body->output_size() - 1 - numCarried;
  if (body->input_size() != numCarried + 2 || numScan < 0)
    return err() << "the body has " << body->input_size() << " inputs and "
                 << body->output_size() << " outputs; with " << numCarried
                 << " loop-carried values it needs " << numCarried + 2
                 << " inputs and at least " << numCarried + 1 << " outputs";
  const onnx::NodeProto *loopNode = node;
  Location loopLoc = loc;
  Value trip = in(0), cond0 = in(1);
  if (failed)
    return failure();
  if (trip && (!elt(trip).isInteger(64) || !maybeScalar(trip)))
    return err() << "M must be an int64 scalar, got " << trip.getType();
  if (cond0 && (!elt(cond0).isInteger(1) || !maybeScalar(cond0)))
    return err() << "cond must be a bool scalar, got " << cond0.getType();
  SmallVector<Value> inits;
  for (int i = 0; i < numCarried; ++i) {
    Value v = in(2 + i);
    if (!v)
      return err() << "loop-carried input #" << i << " is missing";
    inits.push_back(v);
  }
  auto scalarOf = [&](Value t) -> Value {
    if (rank(t) != 0)
      t = reshapeToScalar(t);
    return tensor::ExtractOp::create(b, loc, t, ValueRange{});
  };
  Value tripCount = trip ? scalarOf(trip) : Value();
  Value condInit =
      cond0
          ? scalarOf(cond0)
          : arith::ConstantIntOp::create(b, loc, b.getI1Type(), 1).getResult();
  Value zero = arith::ConstantIntOp::create(b, loc, b.getI64Type(), 0);
  Value one = arith::ConstantIntOp::create(b, loc, b.getI64Type(), 1);

  // Loop-carried dims, and the dims and element types of one scan output
  // element (unknown until the body has been imported once). A scan output
  // is carried as a [count, element...] tensor that each iteration extends
  // by one element along axis 0 (the first iteration starts it).
  SmallVector<Dims> carried;
  for (Value v : inits)
    carried.push_back(dims(v));
  std::optional<SmallVector<Dims>> scanDims;
  SmallVector<Type> scanElts;
  SmallVector<bool> scanUns;
  if (numScan == 0)
    scanDims.emplace();
  auto accDims = [](const Dims &e) {
    Dims d = {Dim()};
    d.append(e.begin(), e.end());
    return d;
  };
  // Whether `to` loses a static size or a dim name of `from`.
  auto loses = [](ArrayRef<Dims> to, ArrayRef<Dims> from) {
    for (auto [x, y] : llvm::zip(to, from))
      for (auto [jd, cd] : llvm::zip(x, y))
        if ((cd.isStatic() || cd.name) && !(jd == cd))
          return true;
    return false;
  };
  // A few imports of the body at most: with the inputs' dims, then with
  // the dims joined over the inputs and the body's outputs (and the scan
  // elements' types known).
  for (int attempt = 0; attempt < 4; ++attempt) {
    SmallVector<Type> types = {b.getI64Type(), b.getI1Type()};
    SmallVector<Value> operands = {zero, condInit};
    SmallVector<Operation *> made;
    for (auto [v, d] : llvm::zip(inits, carried)) {
      Type t = typeFor(d, elt(v));
      types.push_back(t);
      if (t == v.getType()) {
        operands.push_back(v);
        continue;
      }
      operands.push_back(tensor::CastOp::create(b, loc, t, v));
      made.push_back(operands.back().getDefiningOp());
    }
    if (scanDims) {
      for (auto [e, ed] : llvm::zip(scanElts, *scanDims)) {
        // An empty start: [0, element dims (0 where dynamic)].
        SmallVector<int64_t> shape = {0};
        for (const Dim &d : ed)
          shape.push_back(d.isStatic() ? d.size : 0);
        auto st = RankedTensorType::get(shape, e);
        Value c = constDense(DenseElementsAttr::get(st, ArrayRef<Attribute>{}));
        made.push_back(c.getDefiningOp());
        Type t = typeFor(accDims(ed), e);
        types.push_back(t);
        operands.push_back(tensor::CastOp::create(b, loc, t, c));
        made.push_back(operands.back().getDefiningOp());
      }
    }
    SmallVector<Location> locs(types.size(), loc);
    auto w = scf::WhileOp::create(b, loopLoc, types, operands);
    auto drop = [&] {
      eraseWithRegions(w);
      for (Operation *c : llvm::reverse(made))
        if (c->use_empty())
          eraseOp(c);
    };
    b.createBlock(&w.getBefore(), {}, types, locs);
    b.createBlock(&w.getAfter(), {}, types, locs);
    Block *before = &w.getBefore().front(), *after = &w.getAfter().front();
    // `w` is the last op of its block: the end stays valid if it is erased.
    b.setInsertionPointAfter(w);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToEnd(before);
      Value keep = before->getArgument(1);
      if (tripCount)
        keep = arith::AndIOp::create(
            b, loc, keep,
            arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt,
                                  before->getArgument(0), tripCount));
      scf::ConditionOp::create(b, loc, keep, before->getArguments());
    }
    SmallVector<Value> outs;
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToEnd(after);
      SmallVector<Value> bodyIns;
      auto scalarTensor = [&](Value s) -> Value {
        return tensor::FromElementsOp::create(
            b, loc, RankedTensorType::get({}, s.getType()), s);
      };
      bodyIns.push_back(scalarTensor(after->getArgument(0)));
      bodyIns.push_back(scalarTensor(after->getArgument(1)));
      for (int i = 0; i < numCarried; ++i) {
        Value a = after->getArgument(2 + i);
        record(a, carried[i]);
        markUnsigned(a, isUns(inits[i]));
        bodyIns.push_back(a);
      }
      FailureOr<SmallVector<Value>> r = importSubgraph(*body, bodyIns);
      if (::mlir::failed(r)) {
        drop();
        return failure();
      }
      outs = std::move(*r);
    }
    node = loopNode;
    loc = loopLoc;
    Value condOut = outs[0];
    if (!elt(condOut).isInteger(1) || !maybeScalar(condOut)) {
      drop();
      return err() << "the body's condition output must be a bool scalar, "
                      "got "
                   << condOut.getType();
    }
    SmallVector<Dims> joined;
    for (int i = 0; i < numCarried; ++i) {
      Value o = outs[1 + i];
      if (elt(o) != elt(inits[i]) || rank(o) != rank(inits[i])) {
        drop();
        return err() << "loop-carried value #" << i << " enters as "
                     << inits[i].getType() << " and the body gives "
                     << o.getType()
                     << " (the element type and rank must agree)";
      }
      Dims d;
      for (auto [x, y] : llvm::zip(carried[i], dims(o)))
        d.push_back(x == y ? x : Dim());
      joined.push_back(d);
    }
    SmallVector<Dims> newScan;
    for (int k = 0; k < numScan; ++k) {
      Value e = outs[1 + numCarried + k];
      Dims d = dims(e);
      if (scanDims) {
        if (elt(e) != scanElts[k] ||
            rank(e) != (int64_t)(*scanDims)[k].size()) {
          drop();
          return err() << "internal error: scan output #" << k
                       << " changed its type";
        }
        Dims j;
        for (auto [x, y] : llvm::zip((*scanDims)[k], d))
          j.push_back(x == y ? x : Dim());
        d = j;
      }
      newScan.push_back(d);
    }
    bool again =
        loses(joined, carried) || !scanDims || loses(newScan, *scanDims);
    if (again) {
      if (!scanDims)
        for (int k = 0; k < numScan; ++k) {
          Value e = outs[1 + numCarried + k];
          scanElts.push_back(elt(e));
          scanUns.push_back(isUns(e));
        }
      drop();
      carried = std::move(joined);
      scanDims = std::move(newScan);
      continue;
    }
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToEnd(after);
      Value iter = after->getArgument(0);
      SmallVector<Value> yields = {arith::AddIOp::create(b, loc, iter, one),
                                   scalarOf(condOut)};
      for (int i = 0; i < numCarried; ++i) {
        Value o = outs[1 + i];
        Type t = types[2 + i];
        yields.push_back(
            o.getType() == t
                ? o
                : tensor::CastOp::create(b, loc, t, o).getResult());
      }
      for (int k = 0; k < numScan; ++k) {
        Value e = outs[1 + numCarried + k];
        Value acc = after->getArgument(2 + numCarried + k);
        Type t = types[2 + numCarried + k];
        const Dims &ed = (*scanDims)[k];
        Value item = unsqueezeAt(e, 0);
        auto grow = [&]() -> Value {
          Dims o = accDims(ed);
          SmallVector<Value> parts = {acc, item};
          Value c = mk<ConcatenateOp>(o, elt(e), parts, (uint64_t)0);
          return c.getType() == t ? c : tensor::CastOp::create(b, loc, t, c);
        };
        bool allStatic =
            llvm::all_of(ed, [](const Dim &d) { return d.isStatic(); });
        if (allStatic) {
          yields.push_back(grow());
          continue;
        }
        // The empty start has 0 for the element's dynamic dims: the first
        // iteration starts the output with its element instead.
        Value first =
            arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, iter, zero);
        auto ifOp = scf::IfOp::create(b, loc, TypeRange{t}, first,
                                      /*withElseRegion=*/true);
        {
          OpBuilder::InsertionGuard g2(b);
          b.setInsertionPointToStart(ifOp.thenBlock());
          scf::YieldOp::create(
              b, loc,
              item.getType() == t
                  ? item
                  : tensor::CastOp::create(b, loc, t, item).getResult());
          b.setInsertionPointToStart(ifOp.elseBlock());
          scf::YieldOp::create(b, loc, grow());
        }
        yields.push_back(ifOp.getResult(0));
      }
      scf::YieldOp::create(b, loc, yields);
    }
    // Which carried values keep their entry dims in every iteration.
    SmallVector<bool> invariant = {true, true};
    for (int i = 0; i < numCarried; ++i)
      invariant.push_back(llvm::equal(carried[i], dims(inits[i])) &&
                          llvm::all_of(carried[i], [](const Dim &d) {
                            return d.isStatic() || d.name;
                          }));
    invariant.append(numScan, false);
    w->setAttr("disc.shape_invariant", b.getDenseBoolArrayAttr(invariant));
    for (int i = 0; i < numCarried; ++i) {
      Value r = w.getResult(2 + i);
      record(r, carried[i]);
      markUnsigned(r, isUns(inits[i]));
      out(i, r);
    }
    for (int k = 0; k < numScan; ++k) {
      Value r = w.getResult(2 + numCarried + k);
      record(r, accDims((*scanDims)[k]));
      markUnsigned(r, scanUns[k]);
      out(numCarried + k, r);
    }
    return success();
  }
  return err() << "internal error: the loop-carried shapes did not settle";
}

} // namespace mlir::disc::onnx_import
