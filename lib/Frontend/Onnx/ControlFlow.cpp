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

namespace mlir::disc::onnx_import {

namespace {
/// Builders of the ONNX nodes a Scan is rewritten into.
struct ScanNodes {
  std::vector<onnx::NodeProto> &nodes;
  std::string name; // The Scan node's name, prefixing the new nodes'.

  onnx::NodeProto &add(onnx::NodeProto &&n) {
    n.set_name(name + "/" + n.op_type() + std::to_string(nodes.size()));
    nodes.push_back(std::move(n));
    return nodes.back();
  }
  static onnx::NodeProto node(StringRef op, ArrayRef<std::string> ins,
                              ArrayRef<std::string> outs) {
    onnx::NodeProto n;
    n.set_op_type(op.str());
    for (const std::string &s : ins)
      n.add_input(s);
    for (const std::string &s : outs)
      n.add_output(s);
    return n;
  }
  static void intAttr(onnx::NodeProto &n, StringRef name, int64_t v) {
    onnx::AttributeProto *a = n.add_attribute();
    a->set_name(name.str());
    a->set_type(onnx::AttributeProto_AttributeType_INT);
    a->set_i(v);
  }
  /// An int64 scalar constant named `out`.
  void constant(const std::string &out, int64_t v) {
    onnx::NodeProto n = node("Constant", {}, {out});
    onnx::AttributeProto *a = n.add_attribute();
    a->set_name("value");
    a->set_type(onnx::AttributeProto_AttributeType_TENSOR);
    a->mutable_t()->set_data_type(onnx::TensorProto_DataType_INT64);
    a->mutable_t()->add_int64_data(v);
    add(std::move(n));
  }
  void gather(const std::string &data, const std::string &idx, int64_t axis,
              const std::string &out) {
    onnx::NodeProto n = node("Gather", {data, idx}, {out});
    intAttr(n, "axis", axis);
    add(std::move(n));
  }

  /// Appends a Loop that runs `body` once per position of the scan inputs
  /// `xs` along `axes` (the positions reversed where `dirs` is 1), carrying
  /// the states `ss`. Its outputs `outs` are the final states, then each
  /// scan output stacked along axis 0 in iteration order.
  void loop(const onnx::GraphProto &body, ArrayRef<std::string> ss,
            ArrayRef<std::string> xs, ArrayRef<int64_t> axes,
            ArrayRef<int64_t> dirs, ArrayRef<std::string> outs,
            const std::string &p) {
    add(node("Shape", {xs[0]}, {p + "shape"}));
    constant(p + "axis", axes[0]);
    gather(p + "shape", p + "axis", 0, p + "M");
    constant(p + "one", 1);
    add(node("Sub", {p + "M", p + "one"}, {p + "last"}));
    onnx::GraphProto g;
    g.set_name(body.name());
    g.add_input()->set_name(p + "i");
    g.add_input()->set_name(p + "c");
    for (size_t k = 0; k < ss.size(); ++k)
      g.add_input()->set_name(p + "s" + std::to_string(k));
    std::vector<onnx::NodeProto> inner;
    ScanNodes in{inner, name};
    if (llvm::is_contained(dirs, 1))
      in.add(node("Sub", {p + "last", p + "i"}, {p + "ri"}));
    for (size_t j = 0; j < xs.size(); ++j)
      in.gather(xs[j], dirs[j] ? p + "ri" : p + "i", axes[j],
                body.input(ss.size() + j).name());
    for (size_t k = 0; k < ss.size(); ++k)
      in.add(node("Identity", {p + "s" + std::to_string(k)},
                  {body.input(k).name()}));
    in.add(node("Identity", {p + "c"}, {p + "co"}));
    for (onnx::NodeProto &n : inner)
      *g.add_node() = std::move(n);
    for (const onnx::NodeProto &n : body.node())
      *g.add_node() = n;
    for (const onnx::TensorProto &t : body.initializer())
      *g.add_initializer() = t;
    g.add_output()->set_name(p + "co");
    for (const onnx::ValueInfoProto &o : body.output())
      *g.add_output() = o;
    SmallVector<std::string> loopIns = {p + "M", ""};
    loopIns.append(ss.begin(), ss.end());
    onnx::NodeProto l = node("Loop", loopIns, outs);
    onnx::AttributeProto *a = l.add_attribute();
    a->set_name("body");
    a->set_type(onnx::AttributeProto_AttributeType_GRAPH);
    *a->mutable_g() = std::move(g);
    add(std::move(l));
  }
};
} // namespace

/// ONNX Scan (Scan-8 and Scan-9..16 of the spec) as the Loop it is
/// equivalent to: the trip count is the length of the first scan input
/// along its axis; each iteration gathers the scan inputs' slices at the
/// iteration (or, reversed, at length - 1 - iteration), runs the body on
/// the states and the slices, and stacks the scan outputs along axis 0,
/// which then moves to `scan_output_axes` (reversed for
/// `scan_output_directions` = 1). The scan inputs must share that length
/// (the gathers check it at run time). Scan-8 has a leading batch dim on
/// every input and output: an outer Loop runs the scan per batch element;
/// its `sequence_lens` input must be empty (every sequence is full length).
/// The rewritten nodes are imported as any Loop (importLoop), so states
/// whose dims change per iteration get fresh symbols the same way.
LogicalResult Importer::importScan(StringRef) {
  const onnx::GraphProto *body = graphAttr("body");
  if (!body)
    return failure();
  bool batched = opset < 9;
  int first = batched ? 1 : 0;
  if (batched && has(0))
    return err() << "sequence_lens is not supported (every sequence must "
                    "have the full length)";
  int64_t numScanIn = aInt("num_scan_inputs", 0);
  int numIn = node->input_size() - first;
  int64_t numState = numIn - numScanIn;
  if (numScanIn < 1 || numState < 0)
    return err() << "num_scan_inputs = " << numScanIn << " with " << numIn
                 << " state and scan inputs";
  int64_t numScanOut = body->output_size() - numState;
  if (body->input_size() != numIn || numScanOut < 0)
    return err() << "the body has " << body->input_size() << " inputs and "
                 << body->output_size() << " outputs; with " << numState
                 << " states and " << numScanIn << " scan inputs it needs "
                 << numIn << " inputs and at least " << numState << " outputs";
  if (node->output_size() > numState + numScanOut)
    return err() << "has " << node->output_size() << " outputs; the body "
                 << "gives " << numState + numScanOut;
  // Per-input or per-output attribute lists, 0 by default.
  auto list = [&](StringRef attrName, int64_t n,
                  bool directions) -> FailureOr<SmallVector<int64_t>> {
    std::optional<SmallVector<int64_t>> v = aInts(attrName);
    if (failed)
      return failure();
    if (!v)
      return SmallVector<int64_t>(n, 0);
    if ((int64_t)v->size() != n) {
      err() << "attribute '" << attrName << "' has " << v->size()
            << " entries, expected " << n;
      return failure();
    }
    if (directions)
      for (int64_t d : *v)
        if (d != 0 && d != 1) {
          err() << "attribute '" << attrName << "' holds " << d
                << " (directions are 0 or 1)";
          return failure();
        }
    return *v;
  };
  FailureOr<SmallVector<int64_t>> inDirs =
      list(batched ? "directions" : "scan_input_directions", numScanIn, true);
  FailureOr<SmallVector<int64_t>> inAxes =
      batched
          ? FailureOr<SmallVector<int64_t>>(SmallVector<int64_t>(numScanIn, 0))
          : list("scan_input_axes", numScanIn, false);
  FailureOr<SmallVector<int64_t>> outDirs =
      batched
          ? FailureOr<SmallVector<int64_t>>(SmallVector<int64_t>(numScanOut, 0))
          : list("scan_output_directions", numScanOut, true);
  FailureOr<SmallVector<int64_t>> outAxes =
      batched
          ? FailureOr<SmallVector<int64_t>>(SmallVector<int64_t>(numScanOut, 0))
          : list("scan_output_axes", numScanOut, false);
  if (::mlir::failed(inDirs) || ::mlir::failed(inAxes) ||
      ::mlir::failed(outDirs) || ::mlir::failed(outAxes))
    return failure();
  SmallVector<std::string> ss, xs;
  for (int64_t k = 0; k < numState; ++k)
    ss.push_back(node->input(first + k));
  for (int64_t j = 0; j < numScanIn; ++j) {
    if (!has(first + numState + j))
      return err() << "scan input #" << j << " is missing";
    Value x = in(first + numState + j);
    if (!x)
      return failure();
    int64_t r = rank(x) - (batched ? 1 : 0);
    FailureOr<int64_t> a = normAxis((*inAxes)[j], r);
    if (::mlir::failed(a))
      return failure();
    (*inAxes)[j] = *a;
    xs.push_back(node->input(first + numState + j));
  }
  for (int64_t k = 0; k < numState; ++k)
    if (ss[k].empty() || !in(first + k))
      return err() << "state input #" << k << " is missing";

  const onnx::NodeProto *scanNode = node;
  std::string scanName = nodeName;
  Location scanLoc = loc;
  std::string p = "__scan." + scanName + ".";
  SmallVector<std::string> outs;
  for (int64_t i = 0; i < numState + numScanOut; ++i)
    outs.push_back(p + "out" + std::to_string(i));
  std::vector<onnx::NodeProto> nodes;
  nodes.reserve(16);
  ScanNodes sn{nodes, scanName};
  if (!batched) {
    sn.loop(*body, ss, xs, *inAxes, *inDirs, outs, p);
  } else {
    // An outer Loop over the batch: per element b, the scan of the
    // states' and scan inputs' slices at b. All its outputs are stacked
    // along the batch axis.
    onnx::GraphProto g;
    g.set_name(body->name() + ".batch");
    g.add_input()->set_name(p + "b");
    g.add_input()->set_name(p + "bc");
    std::vector<onnx::NodeProto> inner;
    ScanNodes in{inner, scanName};
    SmallVector<std::string> sb, xb, ob;
    for (int64_t k = 0; k < numState; ++k) {
      sb.push_back(p + "sb" + std::to_string(k));
      in.gather(ss[k], p + "b", 0, sb.back());
    }
    for (int64_t j = 0; j < numScanIn; ++j) {
      xb.push_back(p + "xb" + std::to_string(j));
      in.gather(xs[j], p + "b", 0, xb.back());
    }
    for (int64_t i = 0; i < numState + numScanOut; ++i)
      ob.push_back(p + "ob" + std::to_string(i));
    in.loop(*body, sb, xb, *inAxes, *inDirs, ob, p + "in.");
    in.add(ScanNodes::node("Identity", {p + "bc"}, {p + "bco"}));
    for (onnx::NodeProto &n : inner)
      *g.add_node() = std::move(n);
    g.add_output()->set_name(p + "bco");
    for (const std::string &o : ob)
      g.add_output()->set_name(o);
    sn.add(ScanNodes::node("Shape", {xs[0]}, {p + "bshape"}));
    sn.constant(p + "zero", 0);
    sn.gather(p + "bshape", p + "zero", 0, p + "B");
    onnx::NodeProto l = ScanNodes::node("Loop", {p + "B", ""}, outs);
    onnx::AttributeProto *a = l.add_attribute();
    a->set_name("body");
    a->set_type(onnx::AttributeProto_AttributeType_GRAPH);
    *a->mutable_g() = std::move(g);
    sn.add(std::move(l));
  }
  for (auto [i, n] : llvm::enumerate(nodes))
    if (::mlir::failed(importNode(n, i)) || failed)
      return failure();
  node = scanNode;
  nodeName = scanName;
  loc = scanLoc;
  for (int64_t i = 0; i < numState + numScanOut; ++i) {
    Value v = lookup(outs[i]);
    if (!v)
      return failure();
    if (i >= numState) {
      int64_t k = i - numState;
      if ((*outDirs)[k]) {
        // Reversed: element t of the stack goes to position T - 1 - t.
        Value idx =
            binary<SubOp>(binary<SubOp>(dimScalar(v, 0), constI64Scalar(1)),
                          iotaAlong(v, 0, 1, 0));
        Dims d = dims(v);
        bool uns = isUns(v);
        v = mk<GatherOp>(d, elt(v), v, idx, (uint64_t)0);
        markUnsigned(v, uns);
      }
      FailureOr<int64_t> axis = normAxis((*outAxes)[k], rank(v));
      if (::mlir::failed(axis))
        return failure();
      if (*axis != 0) {
        // q[d]: the stack's dim at output dim d.
        SmallVector<int64_t> q;
        for (int64_t d = 0; d < rank(v); ++d)
          q.push_back(d < *axis ? d + 1 : (d == *axis ? 0 : d));
        v = transpose(v, q);
      }
    }
    out(i, v);
  }
  return success();
}

} // namespace mlir::disc::onnx_import
