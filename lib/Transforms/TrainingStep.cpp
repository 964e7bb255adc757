//===- TrainingStep.cpp - disc-build-training-step ------------------------===//
//
// A forward model with a scalar loss becomes one training step: reverse-mode
// differentiation over the ops' gradient rules, then an optimizer update of
// the parameters held as session state (docs/training.md).
//
//===----------------------------------------------------------------------===//
#include "disc/Transforms/TrainingStep.h"
#include "disc/Transforms/Passes.h"

#include "disc/Dialect/Disc/IR/DiscDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/StringSet.h"

namespace mlir::disc {
#define GEN_PASS_DEF_DISCBUILDTRAININGSTEP
#include "disc/Transforms/Passes.h.inc"
} // namespace mlir::disc

using namespace mlir;
using namespace mlir::disc;

namespace {

/// "node 'NAME' (OpType)" for an op imported from an ONNX node (its
/// location is NameLoc(node, NameLoc(op type, file))), else the op name.
std::string describeNode(Operation *op) {
  if (auto node = dyn_cast<NameLoc>(op->getLoc())) {
    std::string text = "node '" + node.getName().str() + "'";
    if (auto type = dyn_cast<NameLoc>(node.getChildLoc()))
      text += " (" + type.getName().str() + ")";
    return text;
  }
  return "'" + op->getName().getStringRef().str() + "'";
}

RankedTensorType tensorType(Value v) {
  return cast<RankedTensorType>(v.getType());
}

/// One trainable parameter: its state input and its gradient.
struct Parameter {
  std::string name;
  BlockArgument arg;
  Value grad;
};

/// Builds the optimizer's ops before the return.
class UpdateBuilder {
public:
  UpdateBuilder(OpBuilder &b, Location loc) : b(b), loc(loc) {}

  Value scalar(Value like, double v) {
    Type elt = tensorType(like).getElementType();
    auto type = RankedTensorType::get({}, elt);
    return ConstantOp::create(
        b, loc, DenseElementsAttr::get(type, FloatAttr::get(elt, v)));
  }
  template <typename OpT>
  Value binary(Value x, Value y) {
    // Every operand here has the parameter's static shape or is 0-d.
    Type type = tensorType(x).getRank() >= tensorType(y).getRank()
                    ? x.getType()
                    : y.getType();
    return OpT::create(b, loc, type, x, y);
  }
  template <typename OpT>
  Value unaryOp(Value x) {
    return OpT::create(b, loc, x.getType(), x);
  }
  Value scaled(Value x, double factor) {
    return binary<MulOp>(x, scalar(x, factor));
  }

  OpBuilder &b;
  Location loc;
};

struct BuildTrainingStepPass
    : public disc::impl::DiscBuildTrainingStepBase<BuildTrainingStepPass> {
  using DiscBuildTrainingStepBase::DiscBuildTrainingStepBase;

  void runOnOperation() override;

private:
  LogicalResult build(func::FuncOp func);
  /// The state inputs of the trainable parameters, in constant order.
  FailureOr<SmallVector<Parameter>> makeParameters(func::FuncOp func,
                                                   Value lossValue);
  LogicalResult differentiate(func::FuncOp func, Value lossValue,
                              MutableArrayRef<Parameter> params);
  /// Appends the optimizer's outputs.
  LogicalResult update(func::FuncOp func, ArrayRef<Parameter> params,
                       SmallVectorImpl<Value> &results,
                       SmallVectorImpl<DictionaryAttr> &attrs);
  /// Replaces initializer constant `c` by a state input starting at its
  /// value (a public `memref.global`).
  BlockArgument constantToState(func::FuncOp func, ConstantOp c);
  /// Appends the outputs that replace the initializers updated by each run
  /// (kStateUpdateOfAttrName), which become state.
  LogicalResult updateInitializers(func::FuncOp func,
                                   SmallVectorImpl<Value> &results,
                                   SmallVectorImpl<DictionaryAttr> &attrs);
  /// A new state input `name` of `type` starting at 0.
  BlockArgument addState(func::FuncOp func, StringRef name, Type type,
                         FlatSymbolRefAttr init);

  /// The `memref.global`s of the initial values made so far.
  unsigned numGlobals = 0;
};

/// The static dims of `type` as a `disc.dims` attribute.
ArrayAttr staticDims(Builder &b, RankedTensorType type) {
  SmallVector<Attribute> dims;
  for (int64_t d : type.getShape())
    dims.push_back(b.getI64IntegerAttr(d));
  return b.getArrayAttr(dims);
}

BlockArgument BuildTrainingStepPass::addState(func::FuncOp func, StringRef name,
                                              Type type,
                                              FlatSymbolRefAttr init) {
  Builder b(func.getContext());
  SmallVector<NamedAttribute> attrs = {
      b.getNamedAttr("disc.name", b.getStringAttr(name)),
      b.getNamedAttr("disc.dims", staticDims(b, cast<RankedTensorType>(type))),
      b.getNamedAttr(kStateAttrName, b.getUnitAttr())};
  if (init)
    attrs.push_back(b.getNamedAttr(kStateInitAttrName, init));
  unsigned index = func.getNumArguments();
  if (failed(func.insertArgument(index, type, b.getDictionaryAttr(attrs),
                                 func.getLoc())))
    return nullptr;
  return func.getArgument(index);
}

BlockArgument BuildTrainingStepPass::constantToState(func::FuncOp func,
                                                     ConstantOp c) {
  OpBuilder mb(func);
  auto type = cast<RankedTensorType>(c.getType());
  auto global = memref::GlobalOp::create(
      mb, c.getLoc(), ("disc_state_init_" + llvm::Twine(numGlobals++)).str(),
      mb.getStringAttr("public"),
      MemRefType::get(type.getShape(), type.getElementType()),
      cast<ElementsAttr>(c.getValue()), /*constant=*/true,
      /*alignment=*/mb.getI64IntegerAttr(64));
  StringRef name = c->getAttrOfType<StringAttr>(kParamAttrName).getValue();
  BlockArgument arg = addState(func, name, type,
                               FlatSymbolRefAttr::get(global.getSymNameAttr()));
  if (!arg)
    return nullptr;
  c.getResult().replaceAllUsesWith(arg);
  c.erase();
  return arg;
}

LogicalResult BuildTrainingStepPass::updateInitializers(
    func::FuncOp func, SmallVectorImpl<Value> &results,
    SmallVectorImpl<DictionaryAttr> &attrs) {
  llvm::StringMap<ConstantOp> constants;
  func.walk([&](ConstantOp c) {
    if (auto name = c->getAttrOfType<StringAttr>(kParamAttrName))
      constants.insert({name.getValue(), c});
  });
  SmallVector<Operation *> updates;
  func.walk([&](Operation *op) {
    if (op->hasAttr(kStateUpdateOfAttrName))
      updates.push_back(op);
  });
  Builder ab(func.getContext());
  for (Operation *op : updates) {
    StringRef name =
        op->getAttrOfType<StringAttr>(kStateUpdateOfAttrName).getValue();
    auto it = constants.find(name);
    // Trained, or already replaced by the update of another op.
    if (it == constants.end())
      continue;
    ConstantOp c = it->second;
    constants.erase(it);
    if (c.getType() != op->getResult(0).getType())
      return op->emitError("the update of '")
             << name << "' has type " << op->getResult(0).getType()
             << ", not the initializer's " << c.getType();
    if (!constantToState(func, c))
      return failure();
    results.push_back(op->getResult(0));
    attrs.push_back(ab.getDictionaryAttr(
        {ab.getNamedAttr("disc.name", ab.getStringAttr(name)),
         ab.getNamedAttr("disc.dims",
                         staticDims(ab, tensorType(results.back()))),
         ab.getNamedAttr(kStateUpdateAttrName, ab.getStringAttr(name))}));
  }
  return success();
}

FailureOr<SmallVector<Parameter>>
BuildTrainingStepPass::makeParameters(func::FuncOp func, Value lossValue) {
  // The initializer constants, and those the loss depends on.
  llvm::MapVector<StringRef, ConstantOp> constants;
  func.walk([&](ConstantOp c) {
    if (auto name = c->getAttrOfType<StringAttr>(kParamAttrName))
      constants.insert({name.getValue(), c});
  });
  llvm::DenseSet<Operation *> upstream;
  SmallVector<Operation *> work;
  if (Operation *def = lossValue.getDefiningOp())
    work.push_back(def);
  while (!work.empty()) {
    Operation *op = work.pop_back_val();
    if (!upstream.insert(op).second)
      continue;
    for (Value v : op->getOperands())
      if (Operation *def = v.getDefiningOp())
        work.push_back(def);
  }
  llvm::StringSet<> named, excluded;
  for (const std::string &n : trainable)
    named.insert(n);
  for (const std::string &n : frozen)
    excluded.insert(n);
  for (const llvm::StringSet<> *set : {&named, &excluded})
    for (const auto &entry : *set)
      if (!constants.count(entry.getKey()))
        return func.emitError("'")
               << entry.getKey()
               << "' is not a float initializer of the model "
                  "(--trainable/--frozen)";
  SmallVector<ConstantOp> chosen;
  for (auto [name, c] : constants) {
    if (excluded.contains(name) || (!named.empty() && !named.contains(name)))
      continue;
    if (!upstream.contains(c)) {
      if (named.contains(name))
        return func.emitError("initializer '")
               << name << "' (--trainable) does not affect the loss";
      continue;
    }
    chosen.push_back(c);
  }
  if (chosen.empty())
    return func.emitError("no trainable initializer affects the loss '")
           << loss << "'";

  SmallVector<Parameter> params;
  for (ConstantOp c : chosen) {
    StringRef name = c->getAttrOfType<StringAttr>(kParamAttrName).getValue();
    BlockArgument arg = constantToState(func, c);
    if (!arg)
      return failure();
    params.push_back({name.str(), arg, Value()});
  }
  return params;
}

LogicalResult
BuildTrainingStepPass::differentiate(func::FuncOp func, Value lossValue,
                                     MutableArrayRef<Parameter> params) {
  Block &body = func.getBody().front();
  Operation *ret = body.getTerminator();
  // Values that depend on a parameter.
  llvm::DenseSet<Value> active;
  for (Parameter &p : params)
    active.insert(p.arg);
  SmallVector<Operation *> forward;
  for (Operation &op : body.without_terminator()) {
    forward.push_back(&op);
    if (llvm::any_of(op.getOperands(),
                     [&](Value v) { return active.contains(v); }))
      for (Value r : op.getResults())
        if (isa<FloatType>(getElementTypeOrSelf(r.getType())))
          active.insert(r);
  }
  OpBuilder b(ret);
  DenseMap<Value, Value> grads;
  {
    RankedTensorType t = tensorType(lossValue);
    grads[lossValue] = ConstantOp::create(
        b, lossValue.getLoc(),
        DenseElementsAttr::get(t, FloatAttr::get(t.getElementType(), 1.0)));
  }
  for (Operation *op : llvm::reverse(forward)) {
    SmallVector<Value> rg;
    bool any = false;
    for (Value r : op->getResults()) {
      rg.push_back(grads.lookup(r));
      any |= (bool)rg.back();
    }
    if (!any || llvm::none_of(op->getOperands(),
                              [&](Value v) { return active.contains(v); }))
      continue;
    // A softmax is differentiated as one op (reading its result only).
    if (std::optional<SoftmaxPattern> sm = matchSoftmax(op);
        sm && rg[0] && active.contains(sm->input)) {
      Value dx =
          buildSoftmaxGradient(b, op->getLoc(), *sm, op->getResult(0), rg[0]);
      Value &acc = grads[sm->input];
      acc = acc ? AddOp::create(b, op->getLoc(), sm->input.getType(), acc, dx)
                      .getResult()
                : dx;
      continue;
    }
    auto rule = dyn_cast<DiscOpInterface>(op);
    SmallVector<Value> og;
    if (!rule || failed(rule.buildGradient(b, rg, og)))
      return op->emitError("no gradient rule for ")
             << describeNode(op) << " ('" << op->getName()
             << "'): the loss depends on a trained parameter through it";
    assert(og.size() == op->getNumOperands() &&
           "a gradient rule must give one gradient per operand");
    for (auto [operand, g] : llvm::zip(op->getOperands(), og)) {
      if (!g || !active.contains(operand))
        continue;
      Value &acc = grads[operand];
      acc = acc ? AddOp::create(b, op->getLoc(), operand.getType(), acc, g)
                      .getResult()
                : g;
    }
  }
  for (Parameter &p : params) {
    Value g = grads.lookup(p.arg);
    auto type = cast<RankedTensorType>(p.arg.getType());
    if (!g) // Every path from it has a zero gradient (floor, sign, ...).
      g = ConstantOp::create(
          b, p.arg.getLoc(),
          DenseElementsAttr::get(type,
                                 FloatAttr::get(type.getElementType(), 0.0)));
    if (g.getType() != type) {
      auto shapeType = RankedTensorType::get({type.getRank()}, b.getI64Type());
      Value shape = ConstantOp::create(
          b, p.arg.getLoc(),
          DenseIntElementsAttr::get(shapeType, type.getShape()));
      g = DynamicReshapeOp::create(b, p.arg.getLoc(), type, g, shape, false);
    }
    p.grad = g;
  }
  return success();
}

LogicalResult
BuildTrainingStepPass::update(func::FuncOp func, ArrayRef<Parameter> params,
                              SmallVectorImpl<Value> &results,
                              SmallVectorImpl<DictionaryAttr> &attrs) {
  Builder ab(func.getContext());
  auto output = [&](Value v, StringRef name, bool isState) {
    SmallVector<NamedAttribute> a = {
        ab.getNamedAttr("disc.name", ab.getStringAttr(name)),
        ab.getNamedAttr("disc.dims", staticDims(ab, tensorType(v)))};
    if (isState)
      a.push_back(
          ab.getNamedAttr(kStateUpdateAttrName, ab.getStringAttr(name)));
    results.push_back(v);
    attrs.push_back(ab.getDictionaryAttr(a));
  };
  Operation *ret = func.getBody().front().getTerminator();
  OpBuilder b(ret);
  UpdateBuilder ub(b, func.getLoc());
  std::string opt = optimizer;
  if (opt == "none") {
    for (const Parameter &p : params)
      output(p.grad, "grad_" + p.name, false);
    return success();
  }
  if (opt != "sgd" && opt != "momentum" && opt != "adamw")
    return func.emitError("unknown optimizer '")
           << opt << "' (expected none, sgd, momentum or adamw)";
  // adamw: one step count for every parameter, as torch.optim.AdamW's
  // per-parameter `step` (they advance together).
  Value step, stepNext;
  if (opt == "adamw") {
    auto type = RankedTensorType::get({}, b.getF32Type());
    step = addState(func, "adamw.step", type, nullptr);
    stepNext = ub.binary<AddOp>(step, ub.scalar(step, 1.0));
    output(stepNext, "adamw.step", true);
  }
  for (const Parameter &p : params) {
    Value w = p.arg, g = p.grad;
    Type type = w.getType();
    if (opt == "sgd" || opt == "momentum") {
      // torch.optim.SGD: g += wd * w; buf = momentum * buf + g (the first
      // step's buf is g, which buf = 0 gives); w -= lr * buf.
      if (weightDecay != 0)
        g = ub.binary<AddOp>(g, ub.scaled(w, weightDecay));
      if (opt == "momentum") {
        std::string name = p.name + ".momentum";
        BlockArgument buf = addState(func, name, type, nullptr);
        g = ub.binary<AddOp>(ub.scaled(buf, momentum), g);
        output(g, name, true);
      }
      output(ub.binary<SubOp>(w, ub.scaled(g, lr)), p.name, true);
      continue;
    }
    // torch.optim.AdamW: w *= 1 - lr * wd; m = b1 m + (1 - b1) g;
    // v = b2 v + (1 - b2) g^2; w -= lr / (1 - b1^t) * m /
    // (sqrt(v) / sqrt(1 - b2^t) + eps).
    std::string mName = p.name + ".exp_avg", vName = p.name + ".exp_avg_sq";
    BlockArgument m = addState(func, mName, type, nullptr);
    BlockArgument v = addState(func, vName, type, nullptr);
    Value decayed = weightDecay != 0 ? ub.scaled(w, 1.0 - lr * weightDecay) : w;
    Value m2 = ub.binary<AddOp>(ub.scaled(m, beta1), ub.scaled(g, 1.0 - beta1));
    Value v2 = ub.binary<AddOp>(ub.scaled(v, beta2),
                                ub.scaled(ub.binary<MulOp>(g, g), 1.0 - beta2));
    auto correction = [&](double beta) {
      return ub.binary<SubOp>(
          ub.scalar(stepNext, 1.0),
          ub.binary<PowOp>(ub.scalar(stepNext, beta), stepNext));
    };
    // The bias corrections come from the f32 step count, in the
    // parameter's element type.
    Type elt = tensorType(w).getElementType();
    auto inParamType = [&](Value scalar) -> Value {
      if (tensorType(scalar).getElementType() == elt)
        return scalar;
      return ConvertOp::create(b, func.getLoc(), RankedTensorType::get({}, elt),
                               scalar);
    };
    Value stepSize = inParamType(
        ub.binary<DivOp>(ub.scalar(stepNext, lr), correction(beta1)));
    Value denom = ub.binary<AddOp>(
        ub.binary<DivOp>(ub.unaryOp<SqrtOp>(v2),
                         inParamType(ub.unaryOp<SqrtOp>(correction(beta2)))),
        ub.scalar(w, eps));
    Value w2 = ub.binary<SubOp>(
        decayed, ub.binary<MulOp>(ub.binary<DivOp>(m2, denom), stepSize));
    output(m2, mName, true);
    output(v2, vName, true);
    output(w2, p.name, true);
  }
  return success();
}

LogicalResult BuildTrainingStepPass::build(func::FuncOp func) {
  if (loss.empty())
    return func.emitError("a training step needs the name of its loss output");
  auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
  int lossIndex = -1;
  std::string names;
  for (unsigned i = 0; i < func.getNumResults(); ++i) {
    auto name = func.getResultAttrOfType<StringAttr>(i, "disc.name");
    if (!name)
      continue;
    names += (names.empty() ? "'" : ", '") + name.str() + "'";
    if (name.getValue() == loss)
      lossIndex = i;
  }
  if (lossIndex < 0)
    return func.emitError("the model has no output '")
           << loss << "' (outputs: " << names << ")";
  Value lossValue = ret.getOperand(lossIndex);
  auto lossType = tensorType(lossValue);
  if (!isa<FloatType>(lossType.getElementType()) ||
      !lossType.hasStaticShape() || lossType.getNumElements() != 1)
    return func.emitError("the loss '")
           << loss << "' must be a float tensor of one element, not "
           << lossType;

  FailureOr<SmallVector<Parameter>> params = makeParameters(func, lossValue);
  if (failed(params) || failed(differentiate(func, lossValue, *params)))
    return failure();
  SmallVector<Value> results(ret.getOperands());
  SmallVector<DictionaryAttr> attrs;
  for (unsigned i = 0; i < func.getNumResults(); ++i)
    attrs.push_back(func.getResultAttrDict(i));
  if (failed(update(func, *params, results, attrs)) ||
      failed(updateInitializers(func, results, attrs)))
    return failure();
  ret->setOperands(results);
  func.setFunctionType(FunctionType::get(func.getContext(),
                                         func.getArgumentTypes(),
                                         ValueRange(results).getTypes()));
  for (DictionaryAttr &a : attrs)
    if (!a)
      a = DictionaryAttr::get(func.getContext());
  func.setAllResultAttrs(attrs);
  func->setAttr(kLossAttrName, StringAttr::get(func.getContext(), loss));
  // Gradients built for operands that need none.
  Block &body = func.getBody().front();
  // (A reverse_iterator points one past its op: step before erasing.)
  for (Operation *op = body.getTerminator()->getPrevNode(); op;) {
    Operation *prev = op->getPrevNode();
    if (op->use_empty() && isMemoryEffectFree(op))
      op->erase();
    op = prev;
  }
  for (Operation &op : body) {
    op.removeAttr(kParamAttrName);
    op.removeAttr(kStateUpdateOfAttrName);
  }
  return success();
}

void BuildTrainingStepPass::runOnOperation() {
  numGlobals = 0;
  ModuleOp module = getOperation();
  SmallVector<func::FuncOp> funcs;
  for (auto func : module.getOps<func::FuncOp>())
    if (!func.isExternal())
      funcs.push_back(func);
  if (funcs.size() != 1 || !funcs[0].getBody().hasOneBlock()) {
    module.emitError("a training step is built from one function with one "
                     "block");
    return signalPassFailure();
  }
  if (failed(build(funcs[0])))
    signalPassFailure();
}

} // namespace
