//===- OnnxImporter.cpp - ONNX ModelProto to the disc dialect -------------===//
//
// Walks the (checked) ONNX graph in order and builds one `func.func` whose
// body uses `disc` ops. Result types are computed here per op (ranks, static
// dims, names of dynamic dims). Small integer tensors (shape computations)
// carry "known values" so that Reshape(x, Concat(Shape(x)[0], 4, 32)) gets a
// result type with static dims where they are known; the runtime computation
// is still emitted for unknown entries.
//
//===----------------------------------------------------------------------===//
#include "disc/Frontend/Onnx/OnnxImporter.h"

#include "OnnxChecker.h"

#include "disc/Dialect/Disc/IR/DiscDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/MathExtras.h"

#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <optional>

using namespace mlir;
using namespace mlir::disc;

namespace {

constexpr int64_t kDyn = ShapedType::kDynamic;
/// The lowest and highest opset of the default domain the importer accepts.
constexpr int64_t kMinOpset = 1;
constexpr int64_t kMaxOpset = 18;
/// Known values are tracked for integer tensors of at most this many elements.
constexpr int64_t kMaxKnown = 64;
/// Constants larger than this many bytes become DenseResourceElementsAttr.
constexpr size_t kResourceThreshold = 1024;

/// One dim of a tensor, or one entry of a known-value vector: a static size
/// (or known integer), else dynamic, optionally with a symbolic name.
struct Dim {
  int64_t size = kDyn;
  StringAttr name;
  Dim() = default;
  Dim(int64_t s) : size(s) {}
  Dim(int64_t s, StringAttr n) : size(s), name(n) {}
  bool isStatic() const { return size != kDyn; }
  bool operator==(const Dim &o) const {
    return isStatic() ? size == o.size : (!o.isStatic() && name && name == o.name);
  }
};
using Dims = SmallVector<Dim, 4>;

/// A target dim for an internal reshape: its static/named description and,
/// when not static, the 1-element i64 tensor holding its value at run time.
struct TDim {
  Dim d;
  Value v;
};

/// Per-op-type description of supported ops (see isSupported).
const llvm::StringSet<> &supportedOps() {
  static const llvm::StringSet<> ops = {
      "Add", "Sub", "Mul", "Div", "Pow", "Mod", "Max", "Min", "Sum", "Mean",
      "Abs", "Neg", "Exp", "Log", "Sqrt", "Reciprocal", "Tanh", "Sigmoid",
      "Erf", "Floor", "Ceil", "Round", "Sin", "Cos", "Tan", "Asin", "Acos",
      "Atan", "Sinh", "Cosh", "Asinh", "Acosh", "Atanh", "Sign", "Not", "And",
      "Or", "Xor", "IsNaN", "IsInf", "Relu", "LeakyRelu", "Elu", "Selu",
      "Celu", "Softplus", "Softsign", "HardSigmoid", "HardSwish", "Mish",
      "ThresholdedRelu", "PRelu", "Clip", "Equal", "Less", "LessOrEqual",
      "Greater", "GreaterOrEqual", "Where", "Cast", "CastLike", "Identity",
      "Dropout", "MatMul", "Gemm", "Conv", "MaxPool", "AveragePool",
      "GlobalAveragePool", "GlobalMaxPool", "BatchNormalization",
      "InstanceNormalization", "LayerNormalization", "Softmax", "LogSoftmax",
      "ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd",
      "ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp",
      "ReduceSumSquare", "ArgMax", "ArgMin", "Shape", "Size", "Reshape",
      "Flatten", "Squeeze", "Unsqueeze", "Transpose", "Concat", "Split",
      "Slice", "Gather", "Expand", "Tile", "Pad", "ConstantOfShape", "Range",
      "Constant", "Trilu", "Shrink", "EyeLike", "Hardmax", "OneHot",
      "DepthToSpace", "SpaceToDepth", "NegativeLogLikelihoodLoss",
      "SoftmaxCrossEntropyLoss", "RNN", "GRU", "LSTM"};
  return ops;
}

bool isDefaultDomain(const std::string &d) {
  return d.empty() || d == "ai.onnx";
}

/// ONNX element type -> MLIR element type (null when unsupported).
Type convertElementType(MLIRContext *ctx, int32_t t, bool &isUnsigned) {
  isUnsigned = false;
  Builder b(ctx);
  switch (t) {
  case onnx::TensorProto_DataType_FLOAT:
    return b.getF32Type();
  case onnx::TensorProto_DataType_DOUBLE:
    return b.getF64Type();
  case onnx::TensorProto_DataType_FLOAT16:
    return b.getF16Type();
  case onnx::TensorProto_DataType_BFLOAT16:
    return b.getBF16Type();
  case onnx::TensorProto_DataType_INT8:
    return b.getIntegerType(8);
  case onnx::TensorProto_DataType_INT16:
    return b.getIntegerType(16);
  case onnx::TensorProto_DataType_INT32:
    return b.getIntegerType(32);
  case onnx::TensorProto_DataType_INT64:
    return b.getIntegerType(64);
  case onnx::TensorProto_DataType_UINT8:
    isUnsigned = true;
    return b.getIntegerType(8);
  case onnx::TensorProto_DataType_UINT16:
    isUnsigned = true;
    return b.getIntegerType(16);
  case onnx::TensorProto_DataType_UINT32:
    isUnsigned = true;
    return b.getIntegerType(32);
  case onnx::TensorProto_DataType_UINT64:
    isUnsigned = true;
    return b.getIntegerType(64);
  case onnx::TensorProto_DataType_BOOL:
    return b.getI1Type();
  default:
    return nullptr;
  }
}

std::string elementTypeName(int32_t t) {
  if (onnx::TensorProto_DataType_IsValid(t))
    return onnx::TensorProto_DataType_Name(
        static_cast<onnx::TensorProto_DataType>(t));
  return "type #" + std::to_string(t);
}

int64_t ceilDiv(int64_t a, int64_t b) {
  return (a >= 0) == (b >= 0) ? (a + b + (b > 0 ? -1 : 1)) / b : a / b;
}
int64_t floorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (q * b != a && ((a < 0) != (b < 0))) ? q - 1 : q;
}

/// Window geometry shared by Conv and pooling.
struct Window {
  SmallVector<int64_t> kernel, strides, dilations, pads;
  /// auto_pad SAME_UPPER (1) / SAME_LOWER (2) with dynamic spatial dims: the
  /// input is padded explicitly at run time and `pads` stays zero.
  int runtimeSame = 0;
};

class Importer {
public:
  Importer(MLIRContext &ctx, const onnx::ModelProto &model, StringRef path,
           const OnnxImportOptions &options)
      : ctx(ctx), model(model), graph(model.graph()), path(path.str()),
        options(options), b(&ctx), loc(UnknownLoc::get(&ctx)) {}

  /// Emits one error listing every unsupported op; fails if there is any.
  LogicalResult scanUnsupported();
  OwningOpRef<ModuleOp> run();

private:
  //===--------------------------------------------------------------------===//
  // Diagnostics
  //===--------------------------------------------------------------------===//
  /// Errors point at the model file; node errors add the node name.
  Location fileLoc() { return FileLineColLoc::get(&ctx, path, 0, 0); }
  Location nameLoc(StringRef name) {
    return NameLoc::get(StringAttr::get(&ctx, name), fileLoc());
  }
  InFlightDiagnostic err() {
    failed = true;
    InFlightDiagnostic d = emitError(loc);
    if (node)
      d << "node '" << nodeName << "' (" << node->op_type() << "): ";
    return d;
  }

  //===--------------------------------------------------------------------===//
  // Types and dims
  //===--------------------------------------------------------------------===//
  static RankedTensorType tt(Value v) {
    return cast<RankedTensorType>(v.getType());
  }
  static Type elt(Value v) { return tt(v).getElementType(); }
  static int64_t rank(Value v) { return tt(v).getRank(); }
  static bool isFloat(Value v) { return isa<FloatType>(elt(v)); }
  /// A tensor with at most one element by its type: rank 0, or every dim 1
  /// or dynamic (--force-dynamic makes `[1]` scalars `[?]`; the reshape to
  /// 0-d checks the element count at run time).
  static bool maybeScalar(Value v) {
    return llvm::all_of(tt(v).getShape(),
                        [](int64_t d) { return d == 1 || d == kDyn; });
  }
  bool isUns(Value v) const { return unsignedVals.contains(v); }
  RankedTensorType typeFor(ArrayRef<Dim> dims, Type e) {
    SmallVector<int64_t> shape;
    for (const Dim &d : dims)
      shape.push_back(d.size);
    return RankedTensorType::get(shape, e);
  }
  Dims dims(Value v) {
    RankedTensorType t = tt(v);
    Dims out;
    auto it = dimNames.find(v);
    for (int64_t i = 0; i < t.getRank(); ++i) {
      Dim d(t.getDimSize(i));
      if (!d.isStatic() && it != dimNames.end() &&
          i < (int64_t)it->second.size())
        d.name = it->second[i].name;
      out.push_back(d);
    }
    return out;
  }
  /// Remembers the names of the dynamic dims of `v`.
  Value record(Value v, ArrayRef<Dim> ds) {
    if (llvm::any_of(ds, [](const Dim &d) { return !d.isStatic() && d.name; }))
      dimNames[v] = Dims(ds.begin(), ds.end());
    return v;
  }
  /// Creates `OpTy` with result type `dims` x `e` and records the dim names.
  template <typename OpTy, typename... Args>
  Value mk(ArrayRef<Dim> ds, Type e, Args &&...args) {
    Value v = OpTy::create(b, loc, typeFor(ds, e), std::forward<Args>(args)...)
                  .getResult();
    return record(v, ds);
  }
  FailureOr<Dims> broadcastDims(ArrayRef<Dims> all);

  //===--------------------------------------------------------------------===//
  // Known values (small integer tensors)
  //===--------------------------------------------------------------------===//
  std::optional<Dims> known(Value v);
  static bool allInts(const Dims &k) {
    return llvm::all_of(k, [](const Dim &d) { return d.isStatic(); });
  }
  std::optional<SmallVector<int64_t>> knownInts(Value v) {
    std::optional<Dims> k = known(v);
    if (!k || !allInts(*k))
      return std::nullopt;
    SmallVector<int64_t> out;
    for (const Dim &d : *k)
      out.push_back(d.size);
    return out;
  }
  /// Records known values of `v`; when all are integers, replaces `v` by a
  /// constant (the op that produced `v` is erased if now unused).
  Value setKnown(Value v, const Dims &k);
  /// Erases an unused op and forgets everything recorded about its results
  /// (the maps are keyed by pointer; a later op may reuse the address).
  void eraseOp(Operation *op) {
    for (Value r : op->getResults()) {
      dimNames.erase(r);
      knownVals.erase(r);
      shapeCache.erase(r);
      unsignedVals.erase(r);
    }
    op->erase();
  }
  FailureOr<SmallVector<int64_t>> constInts(Value v, StringRef what) {
    if (!v)
      return SmallVector<int64_t>{};
    std::optional<SmallVector<int64_t>> k = knownInts(v);
    if (!k) {
      err() << what << " must be a constant (known at compile time)";
      return failure();
    }
    return *k;
  }

  //===--------------------------------------------------------------------===//
  // Builders
  //===--------------------------------------------------------------------===//
  Value constDense(DenseElementsAttr attr) {
    return ConstantOp::create(b, loc, attr).getResult();
  }
  Value constScalar(Type e, double v);
  Value constI64(ArrayRef<int64_t> vals);
  Value constI64Scalar(int64_t v) {
    auto type = RankedTensorType::get({}, b.getI64Type());
    Value c = constDense(DenseElementsAttr::get(type, b.getI64IntegerAttr(v)));
    knownVals[c] = Dims{Dim(v)};
    return c;
  }
  Value shapeOf(Value x);
  Value dimOf(Value x, int64_t i);
  TDim tdimOf(Value x, int64_t i) {
    Dim d = dims(x)[i];
    return {d, d.isStatic() ? Value() : dimOf(x, i)};
  }
  static TDim tdimConst(int64_t c) { return {Dim(c), Value()}; }
  TDim tdimMul(const TDim &a, const TDim &c);
  Value concatI64(ArrayRef<Value> parts);
  Value shapeFrom(ArrayRef<TDim> t);
  Value reshapeT(Value x, ArrayRef<TDim> t);
  Value reshapeToScalar(Value x) { return reshapeT(x, {}); }
  Value toI64(Value v) {
    if (elt(v).isInteger(64))
      return v;
    return convert(v, b.getI64Type(), isUns(v), false);
  }
  Value convert(Value v, Type to, bool unsSrc, bool unsDst);

  template <typename OpTy>
  Value unary(Value x) {
    Value r = mk<OpTy>(dims(x), elt(x), x);
    return r;
  }
  template <typename OpTy>
  Value binary(Value l, Value r);
  Value binaryFolded(StringRef op, Value l, Value r);
  Value compare(CompareDirection dir, Value l, Value r);
  Value select(Value p, Value t, Value f);
  Value reduce(ReduceKind kind, Value x, ArrayRef<int64_t> axes, bool keep);
  Value scalarLike(Value x, double v) { return constScalar(elt(x), v); }
  Value transpose(Value x, ArrayRef<int64_t> perm);
  Value slice1D(Value x, int64_t start, int64_t end);
  Value expandTo(Value x, Value shape, const Dims &shapeDims);

  //===--------------------------------------------------------------------===//
  // Graph walking
  //===--------------------------------------------------------------------===//
  LogicalResult importInputs(SmallVectorImpl<Type> &argTypes);
  FailureOr<Value> importTensor(const onnx::TensorProto &t, StringRef what);
  Value lookup(const std::string &name);
  LogicalResult importNode(const onnx::NodeProto &n, int index);
  LogicalResult dispatch(StringRef op);

  // Node inputs, outputs and attributes.
  unsigned numIn() const { return node->input_size(); }
  bool has(unsigned i) const {
    return (int)i < node->input_size() && !node->input(i).empty();
  }
  Value in(unsigned i) {
    if (!has(i))
      return nullptr;
    return lookup(node->input(i));
  }
  bool wantOut(unsigned i) const {
    return (int)i < node->output_size() && !node->output(i).empty();
  }
  void out(unsigned i, Value v) {
    if (wantOut(i))
      values[node->output(i)] = v;
  }
  const onnx::AttributeProto *attr(StringRef name) const {
    for (const onnx::AttributeProto &a : node->attribute())
      if (a.name() == name)
        return &a;
    return nullptr;
  }
  bool attrOfType(const onnx::AttributeProto *a,
                  onnx::AttributeProto_AttributeType t, bool present,
                  StringRef kind) {
    if (a->type() == t ||
        (a->type() == onnx::AttributeProto_AttributeType_UNDEFINED && present))
      return true;
    err() << "attribute '" << a->name() << "' must be " << kind;
    return false;
  }
  int64_t aInt(StringRef name, int64_t def) {
    const onnx::AttributeProto *a = attr(name);
    if (!a || !attrOfType(a, onnx::AttributeProto_AttributeType_INT, a->has_i(),
                          "an int"))
      return def;
    return a->i();
  }
  float aFloat(StringRef name, float def) {
    const onnx::AttributeProto *a = attr(name);
    if (!a || !attrOfType(a, onnx::AttributeProto_AttributeType_FLOAT,
                          a->has_f(), "a float"))
      return def;
    return a->f();
  }
  std::string aStr(StringRef name, StringRef def) {
    const onnx::AttributeProto *a = attr(name);
    if (!a || !attrOfType(a, onnx::AttributeProto_AttributeType_STRING,
                          a->has_s(), "a string"))
      return def.str();
    return a->s();
  }
  std::optional<SmallVector<int64_t>> aInts(StringRef name) {
    const onnx::AttributeProto *a = attr(name);
    if (!a || !attrOfType(a, onnx::AttributeProto_AttributeType_INTS,
                          a->ints_size() > 0, "a list of ints"))
      return std::nullopt;
    return SmallVector<int64_t>(a->ints().begin(), a->ints().end());
  }
  std::optional<SmallVector<float>> aFloats(StringRef name) {
    const onnx::AttributeProto *a = attr(name);
    if (!a || !attrOfType(a, onnx::AttributeProto_AttributeType_FLOATS,
                          a->floats_size() > 0, "a list of floats"))
      return std::nullopt;
    return SmallVector<float>(a->floats().begin(), a->floats().end());
  }
  FailureOr<int64_t> normAxis(int64_t axis, int64_t r) {
    if (axis < -r || axis >= r) {
      err() << "axis " << axis << " out of range for rank " << r;
      return failure();
    }
    return axis < 0 ? axis + r : axis;
  }
  FailureOr<SmallVector<int64_t>> normAxes(ArrayRef<int64_t> axes, int64_t r,
                                           bool sort);
  LogicalResult requireFloat(Value v) {
    if (isFloat(v))
      return success();
    return err() << "expects a floating-point input, got " << elt(v);
  }
  /// Unsigned 8/16/32-bit operands of ops whose semantics depend on
  /// signedness are widened to i64 (exact); 64-bit unsigned is rejected.
  FailureOr<Value> widen(Value v) {
    if (!isUns(v))
      return v;
    if (elt(v).getIntOrFloatBitWidth() >= 64) {
      err() << "uint64 inputs are not supported by this op";
      return failure();
    }
    return convert(v, b.getI64Type(), true, false);
  }
  LogicalResult rejectUnsigned(Value v) {
    if (!v || !isUns(v))
      return success();
    return err() << "unsigned integer inputs are not supported by this op";
  }
  /// Opset < 7 binary ops: `broadcast`/`axis` attributes align the second
  /// operand at `axis` instead of at the right.
  Value legacyBroadcast(Value l, Value r) {
    if (opset >= 7 || aInt("broadcast", 0) == 0 || !attr("axis"))
      return r;
    int64_t axis = aInt("axis", 0);
    if (axis < 0)
      axis += rank(l);
    int64_t trailing = rank(l) - axis - rank(r);
    if (trailing <= 0)
      return r;
    SmallVector<TDim> t;
    for (int64_t i = 0; i < rank(r); ++i)
      t.push_back(tdimOf(r, i));
    t.append(trailing, tdimConst(1));
    return reshapeT(r, t);
  }
  LogicalResult sameElt(Value a, Value c) {
    if (elt(a) == elt(c))
      return success();
    return err() << "operand element types differ: " << elt(a) << " vs "
                 << elt(c);
  }

  // Op families.
  LogicalResult importElementwiseBinary(StringRef op);
  LogicalResult importVariadic(StringRef op);
  LogicalResult importUnary(StringRef op);
  LogicalResult importActivation(StringRef op);
  LogicalResult importCompare(StringRef op);
  LogicalResult importCast(StringRef op);
  LogicalResult importMatMul();
  LogicalResult importGemm();
  LogicalResult importConv();
  LogicalResult importPool(StringRef op);
  LogicalResult importBatchNorm();
  LogicalResult importInstanceNorm();
  LogicalResult importLayerNorm();
  LogicalResult importSoftmax(StringRef op);
  LogicalResult importReduce(StringRef op);
  LogicalResult importArgReduce(StringRef op);
  LogicalResult importShape();
  LogicalResult importSize();
  LogicalResult importReshape();
  LogicalResult importFlatten();
  LogicalResult importSqueeze(bool unsqueeze);
  LogicalResult importTranspose();
  LogicalResult importConcat();
  LogicalResult importSplit();
  LogicalResult importSlice();
  LogicalResult importGather();
  LogicalResult importExpand();
  LogicalResult importTile();
  LogicalResult importPad();
  LogicalResult importConstantOfShape();
  LogicalResult importRange();
  LogicalResult importConstant();
  LogicalResult importDropout();
  LogicalResult importClip();
  LogicalResult importWhere();
  LogicalResult importMod();
  LogicalResult importTrilu();
  LogicalResult importSqueezeRuntimeAxes(bool unsqueeze);
  LogicalResult importShrink();
  LogicalResult importEyeLike();
  LogicalResult importHardmax();
  LogicalResult importOneHot();
  LogicalResult importDepthSpace(bool toSpace);
  LogicalResult importNllLoss();
  LogicalResult importSoftmaxCrossEntropy();
  FailureOr<Value> nllLoss(Value x, Value target, Value weight);
  Value dimScalar(Value x, int64_t i);
  Value padSameRuntime(Value x, const Window &w, Value value);
  struct Activation {
    std::string name;
    float alpha = 0, beta = 0;
  };
  FailureOr<Activation> parseActivation(StringRef name, ArrayRef<float> alphas,
                                        ArrayRef<float> betas, size_t &ai,
                                        size_t &bi);
  Value applyActivation(const Activation &a, Value v);
  Value sliceStatic(Value x, ArrayRef<int64_t> axes, ArrayRef<int64_t> starts,
                    ArrayRef<int64_t> ends);
  LogicalResult importRnn(StringRef op);
  Value iotaAlong(Value x, int64_t axis, int64_t r, int64_t pos);
  Value unsqueezeAt(Value x, int64_t pos);

  //===--------------------------------------------------------------------===//
  // State
  //===--------------------------------------------------------------------===//
  MLIRContext &ctx;
  const onnx::ModelProto &model;
  const onnx::GraphProto &graph;
  std::string path;
  OnnxImportOptions options;
  OpBuilder b;
  Location loc;
  int64_t opset = 0;
  bool failed = false;
  const onnx::NodeProto *node = nullptr;
  std::string nodeName;

  llvm::StringMap<Value> values;
  llvm::StringMap<const onnx::TensorProto *> initializers;
  DenseMap<Value, Dims> dimNames;
  DenseMap<Value, Dims> knownVals;
  DenseMap<Value, Value> shapeCache;
  DenseSet<Value> unsignedVals;
  SmallVector<DictionaryAttr> argAttrs;
  SmallVector<std::string> argNames;
};

} // namespace

//===----------------------------------------------------------------------===//
// Dims, known values and builders
//===----------------------------------------------------------------------===//

FailureOr<Dims> Importer::broadcastDims(ArrayRef<Dims> all) {
  size_t r = 0;
  for (const Dims &d : all)
    r = std::max(r, d.size());
  Dims out(r, Dim(1));
  SmallVector<bool> first(r, true);
  for (const Dims &ds : all) {
    size_t shift = r - ds.size();
    for (size_t i = 0; i < ds.size(); ++i) {
      Dim &o = out[i + shift];
      const Dim &d = ds[i];
      if (first[i + shift]) {
        o = d;
        first[i + shift] = false;
        continue;
      }
      if (d.isStatic() && d.size == 1)
        continue;
      if (o.isStatic() && o.size == 1) {
        o = d;
        continue;
      }
      if (o.isStatic() && d.isStatic()) {
        if (o.size != d.size) {
          err() << "incompatible dims " << o.size << " and " << d.size
                << " for broadcasting";
          return failure();
        }
        continue;
      }
      if (d.isStatic()) { // o dynamic, d static non-1
        o = d;
        continue;
      }
      if (o.isStatic()) // o static non-1, d dynamic
        continue;
      if (!(o.name && o.name == d.name))
        o = Dim(); // two different dynamic dims: unknown
    }
  }
  return out;
}

std::optional<Dims> Importer::known(Value v) {
  auto it = knownVals.find(v);
  if (it != knownVals.end())
    return it->second;
  auto type = dyn_cast<RankedTensorType>(v.getType());
  if (!type || type.getRank() > 1 || !type.hasStaticShape() ||
      type.getNumElements() > kMaxKnown)
    return std::nullopt;
  DenseElementsAttr attr;
  if (auto c = v.getDefiningOp<ConstantOp>())
    attr = dyn_cast<DenseElementsAttr>(c.getValue());
  if (!attr || !isa<IntegerType>(attr.getElementType()))
    return std::nullopt;
  Dims out;
  for (const APInt &a : attr.getValues<APInt>())
    out.push_back(Dim(a.getBitWidth() == 1 ? (int64_t)a.getZExtValue()
                                           : a.getSExtValue()));
  knownVals[v] = out;
  return out;
}

Value Importer::setKnown(Value v, const Dims &k) {
  RankedTensorType type = tt(v);
  if (!isa<IntegerType>(type.getElementType()) || type.getRank() > 1 ||
      (int64_t)k.size() > kMaxKnown || !type.hasStaticShape() ||
      type.getNumElements() != (int64_t)k.size())
    return v;
  if (allInts(k) && !v.getDefiningOp<ConstantOp>()) {
    SmallVector<APInt> vals;
    unsigned w = type.getElementType().getIntOrFloatBitWidth();
    for (const Dim &d : k)
      vals.push_back(APInt(w, d.size, /*isSigned=*/true, /*implicitTrunc=*/true));
    Value c = constDense(DenseElementsAttr::get(type, vals));
    if (unsignedVals.contains(v))
      unsignedVals.insert(c);
    if (Operation *op = v.getDefiningOp())
      if (op->use_empty() && op->getNumResults() == 1)
        eraseOp(op);
    knownVals[c] = k;
    return c;
  }
  knownVals[v] = k;
  return v;
}

Value Importer::constScalar(Type e, double v) {
  auto type = RankedTensorType::get({}, e);
  Attribute a;
  if (isa<FloatType>(e))
    a = FloatAttr::get(e, v);
  else {
    unsigned w = e.getIntOrFloatBitWidth();
    a = IntegerAttr::get(e, APInt(w, (int64_t)v, /*isSigned=*/w > 1,
                                  /*implicitTrunc=*/true));
  }
  Value c = constDense(DenseElementsAttr::get(type, a));
  if (isa<IntegerType>(e))
    knownVals[c] = Dims{Dim((int64_t)v)};
  return c;
}

Value Importer::constI64(ArrayRef<int64_t> vals) {
  auto type = RankedTensorType::get({(int64_t)vals.size()}, b.getI64Type());
  Value c = constDense(DenseIntElementsAttr::get(type, vals));
  if ((int64_t)vals.size() <= kMaxKnown) {
    Dims k;
    for (int64_t x : vals)
      k.push_back(Dim(x));
    knownVals[c] = k;
  }
  return c;
}

Value Importer::shapeOf(Value x) {
  Dims ds = dims(x);
  if (tt(x).hasStaticShape())
    return constI64(tt(x).getShape());
  auto it = shapeCache.find(x);
  if (it != shapeCache.end())
    return it->second;
  Value s = ShapeOfOp::create(
                b, loc, RankedTensorType::get({rank(x)}, b.getI64Type()), x)
                .getResult();
  knownVals[s] = ds;
  shapeCache[x] = s;
  return s;
}

Value Importer::dimOf(Value x, int64_t i) {
  Dim d = dims(x)[i];
  if (d.isStatic())
    return constI64({d.size});
  Value s = shapeOf(x);
  Value g = GatherOp::create(b, loc,
                             RankedTensorType::get({1}, b.getI64Type()), s,
                             constI64({i}), (uint64_t)0)
                .getResult();
  knownVals[g] = Dims{d};
  return g;
}

TDim Importer::tdimMul(const TDim &a, const TDim &c) {
  if (a.d.isStatic() && c.d.isStatic())
    return tdimConst(a.d.size * c.d.size);
  if (a.d.isStatic() && a.d.size == 1)
    return c;
  if (c.d.isStatic() && c.d.size == 1)
    return a;
  Value av = a.v ? a.v : constI64({a.d.size});
  Value cv = c.v ? c.v : constI64({c.d.size});
  Value m = MulOp::create(b, loc, RankedTensorType::get({1}, b.getI64Type()),
                          av, cv)
                .getResult();
  knownVals[m] = Dims{Dim()};
  return {Dim(), m};
}

Value Importer::concatI64(ArrayRef<Value> parts) {
  if (parts.size() == 1)
    return parts.front();
  Dims k;
  bool allKnown = true;
  int64_t len = 0;
  for (Value p : parts) {
    int64_t n = tt(p).getDimSize(0);
    if (ShapedType::isDynamic(n)) {
      allKnown = false;
      len = kDyn;
      continue;
    }
    if (len != kDyn)
      len += n;
    std::optional<Dims> pk = known(p);
    if (pk)
      k.append(pk->begin(), pk->end());
    else
      k.append(n, Dim());
  }
  if (allKnown && allInts(k)) {
    SmallVector<int64_t> vals;
    for (const Dim &d : k)
      vals.push_back(d.size);
    return constI64(vals);
  }
  Value c = ConcatenateOp::create(
                b, loc, RankedTensorType::get({len}, b.getI64Type()), parts,
                (uint64_t)0)
                .getResult();
  if (allKnown)
    knownVals[c] = k;
  return c;
}

Value Importer::shapeFrom(ArrayRef<TDim> t) {
  SmallVector<Value> parts;
  SmallVector<int64_t> pending;
  auto flush = [&] {
    if (!pending.empty())
      parts.push_back(constI64(pending));
    pending.clear();
  };
  for (const TDim &d : t) {
    if (d.d.isStatic() || !d.v) {
      pending.push_back(d.d.isStatic() ? d.d.size : -1);
      continue;
    }
    flush();
    parts.push_back(d.v);
  }
  flush();
  if (parts.empty())
    return constI64({});
  return concatI64(parts);
}

Value Importer::reshapeT(Value x, ArrayRef<TDim> t) {
  Dims outDims;
  for (const TDim &d : t)
    outDims.push_back(d.d);
  Dims inDims = dims(x);
  if (inDims.size() == outDims.size() &&
      llvm::all_of(llvm::zip(inDims, outDims), [](auto p) {
        return std::get<0>(p) == std::get<1>(p);
      }))
    return x;
  Value shape = shapeFrom(t);
  Value r = mk<DynamicReshapeOp>(outDims, elt(x), x, shape, /*allow_zero=*/true);
  if (isUns(x))
    unsignedVals.insert(r);
  if (std::optional<Dims> k = known(x))
    r = setKnown(r, *k);
  return r;
}

Value Importer::convert(Value v, Type to, bool unsSrc, bool unsDst) {
  if (elt(v) == to && unsSrc == unsDst)
    return v;
  Value r = mk<ConvertOp>(dims(v), to, v, unsSrc, unsDst);
  if (unsDst)
    unsignedVals.insert(r);
  if (isa<IntegerType>(to) && to.getIntOrFloatBitWidth() >= 32)
    if (std::optional<Dims> k = known(v))
      if (isa<IntegerType>(elt(v)))
        r = setKnown(r, *k);
  return r;
}

template <typename OpTy>
Value Importer::binary(Value l, Value r) {
  FailureOr<Dims> d = broadcastDims({dims(l), dims(r)});
  if (::mlir::failed(d))
    return nullptr;
  Value res = mk<OpTy>(*d, elt(l), l, r);
  if (isUns(l) || isUns(r))
    unsignedVals.insert(res);
  return res;
}

/// Elementwise integer arithmetic with known-value folding (shape math).
Value Importer::binaryFolded(StringRef op, Value l, Value r) {
  Value res;
  if (op == "Add")
    res = binary<AddOp>(l, r);
  else if (op == "Sub")
    res = binary<SubOp>(l, r);
  else if (op == "Mul")
    res = binary<MulOp>(l, r);
  else
    res = binary<DivOp>(l, r);
  if (!res || !isa<IntegerType>(elt(res)) || elt(res).isInteger(1))
    return res;
  std::optional<Dims> kl = known(l), kr = known(r);
  if (!kl || !kr)
    return res;
  size_t n = std::max(kl->size(), kr->size());
  if ((kl->size() != n && kl->size() != 1) ||
      (kr->size() != n && kr->size() != 1))
    return res;
  Dims k;
  for (size_t i = 0; i < n; ++i) {
    const Dim &a = (*kl)[kl->size() == 1 ? 0 : i];
    const Dim &c = (*kr)[kr->size() == 1 ? 0 : i];
    Dim o;
    if (a.isStatic() && c.isStatic()) {
      if (op == "Add")
        o = Dim(a.size + c.size);
      else if (op == "Sub")
        o = Dim(a.size - c.size);
      else if (op == "Mul")
        o = Dim(a.size * c.size);
      else if (c.size != 0)
        o = Dim(a.size / c.size);
    } else if (c.isStatic() &&
               (((op == "Add" || op == "Sub") && c.size == 0) ||
                ((op == "Mul" || op == "Div") && c.size == 1))) {
      o = a;
    } else if (a.isStatic() && ((op == "Add" && a.size == 0) ||
                                (op == "Mul" && a.size == 1))) {
      o = c;
    }
    k.push_back(o);
  }
  return setKnown(res, k);
}

Value Importer::compare(CompareDirection dir, Value l, Value r) {
  FailureOr<Dims> d = broadcastDims({dims(l), dims(r)});
  if (::mlir::failed(d))
    return nullptr;
  return mk<CompareOp>(*d, b.getI1Type(), dir, l, r);
}

Value Importer::select(Value p, Value t, Value f) {
  FailureOr<Dims> d = broadcastDims({dims(p), dims(t), dims(f)});
  if (::mlir::failed(d))
    return nullptr;
  Value r = mk<SelectOp>(*d, elt(t), p, t, f);
  if (isUns(t) || isUns(f))
    unsignedVals.insert(r);
  return r;
}

Value Importer::reduce(ReduceKind kind, Value x, ArrayRef<int64_t> axes,
                       bool keep) {
  Dims in = dims(x), outDims;
  for (int64_t i = 0; i < (int64_t)in.size(); ++i) {
    if (llvm::is_contained(axes, i)) {
      if (keep)
        outDims.push_back(Dim(1));
    } else {
      outDims.push_back(in[i]);
    }
  }
  Value r = mk<ReduceOp>(outDims, elt(x), kind, x, axes, keep);
  if (isUns(x))
    unsignedVals.insert(r);
  return r;
}

Value Importer::transpose(Value x, ArrayRef<int64_t> perm) {
  Dims in = dims(x), outDims;
  for (int64_t p : perm)
    outDims.push_back(in[p]);
  Value r = mk<TransposeOp>(outDims, elt(x), x, perm);
  if (isUns(x))
    unsignedVals.insert(r);
  return r;
}

/// x[start:end] on a 1-D tensor with static length (start, end in range).
Value Importer::slice1D(Value x, int64_t start, int64_t end) {
  Value r = mk<SliceOp>(Dims{Dim(end - start)}, elt(x), x, constI64({start}),
                        constI64({end}), constI64({1}), ArrayRef<int64_t>{0});
  if (std::optional<Dims> k = known(x))
    r = setKnown(r, Dims(k->begin() + start, k->begin() + end));
  return r;
}

Value Importer::expandTo(Value x, Value shape, const Dims &shapeDims) {
  FailureOr<Dims> d = broadcastDims({dims(x), shapeDims});
  if (::mlir::failed(d))
    return nullptr;
  Value r = mk<ExpandOp>(*d, elt(x), x, shape);
  if (isUns(x))
    unsignedVals.insert(r);
  return r;
}

FailureOr<SmallVector<int64_t>> Importer::normAxes(ArrayRef<int64_t> axes,
                                                   int64_t r, bool sort) {
  SmallVector<int64_t> out;
  for (int64_t a : axes) {
    FailureOr<int64_t> n = normAxis(a, r);
    if (::mlir::failed(n))
      return failure();
    if (llvm::is_contained(out, *n)) {
      err() << "axis " << a << " repeated";
      return failure();
    }
    out.push_back(*n);
  }
  if (sort)
    llvm::sort(out);
  return out;
}

//===----------------------------------------------------------------------===//
// Graph level
//===----------------------------------------------------------------------===//

LogicalResult Importer::scanUnsupported() {
  SmallVector<std::string> bad;
  for (int i = 0; i < graph.node_size(); ++i) {
    const onnx::NodeProto &n = graph.node(i);
    std::string name = n.name().empty() ? "#" + std::to_string(i) : n.name();
    std::string domain = isDefaultDomain(n.domain()) ? "" : n.domain();
    int64_t version = 0;
    for (const onnx::OperatorSetIdProto &o : model.opset_import())
      if ((isDefaultDomain(o.domain()) && domain.empty()) ||
          o.domain() == n.domain())
        version = o.version();
    bool ok = domain.empty() && supportedOps().contains(n.op_type()) &&
              version >= kMinOpset && version <= kMaxOpset &&
              !(n.op_type() == "Tile" && version < 6);
    if (!ok) {
      std::string opName = domain.empty() ? n.op_type() : domain + "." + n.op_type();
      bad.push_back(opName + " (node '" + name + "', opset " +
                    std::to_string(version) + ")");
    }
  }
  if (bad.empty())
    return success();
  InFlightDiagnostic d = emitError(fileLoc());
  d << "unsupported ONNX op" << (bad.size() > 1 ? "s" : "") << ": ";
  llvm::interleaveComma(bad, d);
  d << " (supported: default domain, opsets " << kMinOpset << "-" << kMaxOpset
    << "; see docs/onnx-frontend.md)";
  return failure();
}

FailureOr<Value> Importer::importTensor(const onnx::TensorProto &t,
                                        StringRef what) {
  auto fail = [&]() -> InFlightDiagnostic {
    InFlightDiagnostic d = err();
    d << what << ": ";
    return d;
  };
  if (t.data_location() == onnx::TensorProto_DataLocation_EXTERNAL ||
      t.external_data_size() > 0) {
    fail() << "uses external data, which is not supported (save the model "
              "with the weights embedded)";
    return failure();
  }
  if (t.has_segment()) {
    fail() << "segmented tensors are not supported";
    return failure();
  }
  bool uns = false;
  Type e = convertElementType(&ctx, t.data_type(), uns);
  if (!e) {
    fail() << "unsupported element type " << elementTypeName(t.data_type());
    return failure();
  }
  SmallVector<int64_t> shape;
  int64_t numel = 1;
  for (int64_t d : t.dims()) {
    if (d < 0 || (d > 0 && numel > std::numeric_limits<int64_t>::max() / d /
                                       16)) {
      fail() << "invalid dims";
      return failure();
    }
    shape.push_back(d);
    numel *= d;
  }
  auto type = RankedTensorType::get(shape, e);
  bool isBool = e.isInteger(1);
  size_t eltBytes = isBool ? 1 : e.getIntOrFloatBitWidth() / 8;
  std::vector<char> buf;
  if (t.has_raw_data()) {
    if (t.raw_data().size() != numel * eltBytes) {
      fail() << "raw_data has " << t.raw_data().size() << " bytes, expected "
             << numel * eltBytes;
      return failure();
    }
    buf.assign(t.raw_data().begin(), t.raw_data().end());
  } else {
    buf.resize(numel * eltBytes);
    auto countMismatch = [&](int64_t n) {
      if (n == numel)
        return false;
      fail() << "has " << n << " data entries, expected " << numel;
      return true;
    };
    switch (t.data_type()) {
    case onnx::TensorProto_DataType_FLOAT:
      if (countMismatch(t.float_data_size()))
        return failure();
      std::memcpy(buf.data(), t.float_data().data(), buf.size());
      break;
    case onnx::TensorProto_DataType_DOUBLE:
      if (countMismatch(t.double_data_size()))
        return failure();
      std::memcpy(buf.data(), t.double_data().data(), buf.size());
      break;
    case onnx::TensorProto_DataType_INT64:
      if (countMismatch(t.int64_data_size()))
        return failure();
      std::memcpy(buf.data(), t.int64_data().data(), buf.size());
      break;
    case onnx::TensorProto_DataType_UINT32:
    case onnx::TensorProto_DataType_UINT64:
      if (countMismatch(t.uint64_data_size()))
        return failure();
      for (int64_t i = 0; i < numel; ++i) {
        uint64_t v = t.uint64_data(i);
        std::memcpy(buf.data() + i * eltBytes, &v, eltBytes);
      }
      break;
    default: // int32, int16, int8, uint8, uint16, bool, float16, bfloat16
      if (countMismatch(t.int32_data_size()))
        return failure();
      for (int64_t i = 0; i < numel; ++i) {
        int32_t v = t.int32_data(i);
        std::memcpy(buf.data() + i * eltBytes, &v, eltBytes); // little endian
      }
      break;
    }
  }
  DenseElementsAttr dense;
  Attribute value;
  if (isBool) {
    SmallVector<bool> bits;
    for (char c : buf)
      bits.push_back(c != 0);
    dense = DenseElementsAttr::get(type, bits);
    value = dense;
  } else if (buf.size() > kResourceThreshold) {
    std::string key = "onnx_";
    for (char c : t.name().empty() ? std::string("constant") : t.name())
      key.push_back(llvm::isAlnum(c) ? c : '_');
    value = DenseResourceElementsAttr::get(
        type, key,
        HeapAsmResourceBlob::allocateAndCopyWithAlign(
            ArrayRef<char>(buf.data(), buf.size()), alignof(uint64_t)));
  } else {
    dense = DenseElementsAttr::getFromRawBuffer(
        type, ArrayRef<char>(buf.data(), buf.size()));
    value = dense;
  }
  Value c = ConstantOp::create(b, loc, cast<TypedAttr>(value)).getResult();
  if (uns)
    unsignedVals.insert(c);
  if (dense && isa<IntegerType>(e) && shape.size() <= 1 && numel <= kMaxKnown)
    (void)known(c);
  return c;
}

Value Importer::lookup(const std::string &name) {
  auto it = values.find(name);
  if (it != values.end())
    return it->second;
  auto init = initializers.find(name);
  if (init != initializers.end()) {
    // Constants are created lazily at the top of the entry block.
    OpBuilder::InsertionGuard g(b);
    Block *entry = b.getInsertionBlock();
    b.setInsertionPointToStart(entry);
    Location saved = loc;
    const onnx::NodeProto *savedNode = node;
    node = nullptr;
    loc = nameLoc(name);
    FailureOr<Value> c = importTensor(*init->second, "initializer '" + name + "'");
    loc = saved;
    node = savedNode;
    if (::mlir::failed(c))
      return nullptr;
    values[name] = *c;
    return *c;
  }
  err() << "input '" << name << "' is not defined";
  return nullptr;
}

/// Whether operand `i` of `opType` is a 1-D vector whose length fixes the
/// rank of a result (or the number of axes it applies to): a shape, axes,
/// pads, repeats, split sizes or slice bounds.
static bool isRankOperand(StringRef opType, int i) {
  if (llvm::is_contained(
          {"Reshape", "Expand", "Tile", "Squeeze", "Unsqueeze", "Split"},
          opType))
    return i == 1;
  if (opType == "ConstantOfShape")
    return i == 0;
  if (opType == "Pad")
    return i == 1 || i == 3;
  if (opType == "Slice")
    return i >= 1 && i <= 4;
  return false;
}

/// --force-dynamic: graph inputs used only as rank-determining operands
/// (isRankOperand) keep their static length; their values stay run-time.
static llvm::StringSet<> rankOperandInputs(const onnx::GraphProto &graph) {
  llvm::StringSet<> candidates, other;
  for (const onnx::NodeProto &n : graph.node()) {
    for (int i = 0; i < n.input_size(); ++i) {
      if (n.input(i).empty())
        continue;
      if (isDefaultDomain(n.domain()) && isRankOperand(n.op_type(), i))
        candidates.insert(n.input(i));
      else
        other.insert(n.input(i));
    }
    for (const onnx::AttributeProto &a : n.attribute())
      if (a.type() == onnx::AttributeProto_AttributeType_GRAPH ||
          a.type() == onnx::AttributeProto_AttributeType_GRAPHS)
        return {}; // subgraphs may use any outer value
  }
  for (const onnx::ValueInfoProto &vi : graph.output())
    other.insert(vi.name());
  llvm::StringSet<> out;
  for (const auto &c : candidates)
    if (!other.contains(c.getKey()))
      out.insert(c.getKey());
  return out;
}

LogicalResult Importer::importInputs(SmallVectorImpl<Type> &argTypes) {
  for (const onnx::TensorProto &t : graph.initializer())
    initializers[t.name()] = &t;
  llvm::StringSet<> keepLength;
  if (options.forceDynamicInputs)
    keepLength = rankOperandInputs(graph);
  for (const onnx::SparseTensorProto &t : graph.sparse_initializer()) {
    emitError(loc) << "sparse initializer '" << t.values().name()
                   << "' is not supported";
    return failure();
  }
  for (const onnx::ValueInfoProto &vi : graph.input()) {
    if (initializers.count(vi.name()))
      continue;
    Location l = nameLoc(vi.name());
    if (!vi.type().has_tensor_type())
      return emitError(l) << "graph input '" << vi.name()
                          << "' is not a tensor (sequences, maps and "
                             "optionals are not supported)";
    const onnx::TypeProto_Tensor &tt = vi.type().tensor_type();
    bool uns = false;
    Type e = convertElementType(&ctx, tt.elem_type(), uns);
    if (!e)
      return emitError(l) << "graph input '" << vi.name()
                          << "' has unsupported element type "
                          << elementTypeName(tt.elem_type());
    if (!tt.has_shape())
      return emitError(l) << "graph input '" << vi.name()
                          << "' has no shape (its rank must be known)";
    SmallVector<int64_t> shape;
    SmallVector<Attribute> dimAttrs;
    bool keepStatic =
        !options.forceDynamicInputs ||
        (tt.shape().dim_size() == 1 && keepLength.contains(vi.name()));
    for (int i = 0; i < tt.shape().dim_size(); ++i) {
      const onnx::TensorShapeProto_Dimension &d = tt.shape().dim(i);
      if (keepStatic && d.has_dim_value() && d.dim_value() >= 0) {
        shape.push_back(d.dim_value());
        dimAttrs.push_back(b.getI64IntegerAttr(d.dim_value()));
      } else {
        shape.push_back(kDyn);
        // --force-dynamic names every dim `<input>_d<i>` (declared dim
        // names would tie dims of different inputs together).
        std::string name = !options.forceDynamicInputs && d.has_dim_param() &&
                                   !d.dim_param().empty()
                               ? d.dim_param()
                               : vi.name() + "_d" + std::to_string(i);
        dimAttrs.push_back(b.getStringAttr(name));
      }
    }
    argTypes.push_back(RankedTensorType::get(shape, e));
    SmallVector<NamedAttribute> attrs = {
        b.getNamedAttr("disc.name", b.getStringAttr(vi.name())),
        b.getNamedAttr("disc.dims", b.getArrayAttr(dimAttrs))};
    if (uns)
      attrs.push_back(b.getNamedAttr("disc.unsigned", b.getUnitAttr()));
    argAttrs.push_back(b.getDictionaryAttr(attrs));
    argNames.push_back(vi.name());
  }
  return success();
}

OwningOpRef<ModuleOp> Importer::run() {
  ctx.getOrLoadDialect<DiscDialect>();
  ctx.getOrLoadDialect<func::FuncDialect>();
  ctx.getOrLoadDialect<arith::ArithDialect>();
  ctx.getOrLoadDialect<scf::SCFDialect>();
  ctx.getOrLoadDialect<tensor::TensorDialect>();
  loc = fileLoc();
  for (const onnx::OperatorSetIdProto &o : model.opset_import())
    if (isDefaultDomain(o.domain()))
      opset = o.version();
  if (opset == 0) {
    emitError(loc) << "model does not import the default ONNX domain";
    return nullptr;
  }

  OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
  SmallVector<Type> argTypes;
  if (::mlir::failed(importInputs(argTypes)))
    return nullptr;
  b.setInsertionPointToEnd(module->getBody());
  auto func = func::FuncOp::create(b, loc, options.entryName,
                                   b.getFunctionType(argTypes, {}));
  Block *entry = func.addEntryBlock();
  for (auto [i, attrs] : llvm::enumerate(argAttrs)) {
    func.setArgAttrs(i, attrs);
    BlockArgument arg = entry->getArgument(i);
    values[argNames[i]] = arg;
    Dims ds;
    auto dimAttrs = cast<ArrayAttr>(attrs.get("disc.dims"));
    for (Attribute a : dimAttrs) {
      if (auto s = dyn_cast<StringAttr>(a))
        ds.push_back(Dim(kDyn, s));
      else
        ds.push_back(Dim(cast<IntegerAttr>(a).getInt()));
    }
    record(arg, ds);
    if (attrs.get("disc.unsigned"))
      unsignedVals.insert(arg);
  }
  b.setInsertionPointToEnd(entry);

  for (int i = 0; i < graph.node_size(); ++i)
    if (::mlir::failed(importNode(graph.node(i), i)) || failed)
      return nullptr;

  node = nullptr;
  loc = fileLoc();
  SmallVector<Value> results;
  SmallVector<DictionaryAttr> resAttrs;
  for (const onnx::ValueInfoProto &vi : graph.output()) {
    Value v = lookup(vi.name());
    if (!v)
      return nullptr;
    // Names declared on the graph output fill in unnamed dynamic dims.
    Dims ds = dims(v);
    if (vi.type().has_tensor_type() && vi.type().tensor_type().has_shape()) {
      const onnx::TensorShapeProto &s = vi.type().tensor_type().shape();
      if (s.dim_size() == (int)ds.size())
        for (int i = 0; i < s.dim_size(); ++i)
          if (!ds[i].isStatic() && !ds[i].name && s.dim(i).has_dim_param() &&
              !s.dim(i).dim_param().empty())
            ds[i].name = b.getStringAttr(s.dim(i).dim_param());
    }
    SmallVector<Attribute> dimAttrs;
    for (const Dim &d : ds) {
      if (d.isStatic())
        dimAttrs.push_back(b.getI64IntegerAttr(d.size));
      else
        dimAttrs.push_back(d.name ? d.name : b.getStringAttr("?"));
    }
    SmallVector<NamedAttribute> attrs = {
        b.getNamedAttr("disc.name", b.getStringAttr(vi.name())),
        b.getNamedAttr("disc.dims", b.getArrayAttr(dimAttrs))};
    if (isUns(v))
      attrs.push_back(b.getNamedAttr("disc.unsigned", b.getUnitAttr()));
    resAttrs.push_back(b.getDictionaryAttr(attrs));
    results.push_back(v);
  }
  func::ReturnOp::create(b, loc, results);
  func.setFunctionType(
      b.getFunctionType(argTypes, ValueRange(results).getTypes()));
  for (auto [i, attrs] : llvm::enumerate(resAttrs))
    func.setResultAttrs(i, attrs);

  if (::mlir::failed(mlir::verify(*module))) {
    emitError(loc) << "internal error: the imported module does not verify";
    return nullptr;
  }
  return module;
}

LogicalResult Importer::importNode(const onnx::NodeProto &n, int index) {
  node = &n;
  nodeName = n.name().empty() ? "#" + std::to_string(index) : n.name();
  loc = nameLoc(nodeName);
  for (int i = 0; i < n.input_size(); ++i)
    if (!n.input(i).empty() && !in(i))
      return failure();
  for (const onnx::AttributeProto &a : n.attribute())
    if (a.type() == onnx::AttributeProto_AttributeType_GRAPH ||
        a.type() == onnx::AttributeProto_AttributeType_GRAPHS)
      return err() << "subgraph attributes are not supported";
  StringRef op = n.op_type();
  if (::mlir::failed(dispatch(op)) || failed)
    return failure();
  bool keepsSign = !llvm::is_contained(
      {"Cast", "CastLike", "Shape", "Size", "ArgMax", "ArgMin"}, op);
  for (int i = 0; i < n.output_size(); ++i) {
    if (n.output(i).empty())
      continue;
    auto it = values.find(n.output(i));
    if (it == values.end())
      return err() << "output #" << i << " ('" << n.output(i)
                   << "') is not supported";
    Value v = it->second;
    if (!keepsSign || !isa<IntegerType>(elt(v)) || elt(v).isInteger(1))
      continue;
    for (int j = 0; j < n.input_size(); ++j)
      if (Value iv = in(j))
        if (isUns(iv) && elt(iv) == elt(v))
          unsignedVals.insert(v);
  }
  return success();
}

LogicalResult Importer::dispatch(StringRef op) {
  if (llvm::is_contained({"Add", "Sub", "Mul", "Div", "Pow", "And", "Or", "Xor"},
                         op))
    return importElementwiseBinary(op);
  if (llvm::is_contained({"Max", "Min", "Sum", "Mean"}, op))
    return importVariadic(op);
  if (op == "Mod")
    return importMod();
  if (llvm::is_contained(
          {"Abs",  "Neg",   "Exp",   "Log",   "Sqrt",  "Reciprocal", "Tanh",
           "Sigmoid", "Erf", "Floor", "Ceil",  "Round", "Sin",   "Cos",
           "Tan",  "Asin",  "Acos",  "Atan",  "Sinh",  "Cosh",  "Asinh",
           "Acosh", "Atanh", "Sign", "Not",   "IsNaN", "IsInf"},
          op))
    return importUnary(op);
  if (llvm::is_contained({"Relu", "LeakyRelu", "Elu", "Selu", "Celu",
                          "Softplus", "Softsign", "HardSigmoid", "HardSwish",
                          "Mish", "ThresholdedRelu", "PRelu"},
                         op))
    return importActivation(op);
  if (op == "Clip")
    return importClip();
  if (llvm::is_contained(
          {"Equal", "Less", "LessOrEqual", "Greater", "GreaterOrEqual"}, op))
    return importCompare(op);
  if (op == "Where")
    return importWhere();
  if (op == "Cast" || op == "CastLike")
    return importCast(op);
  if (op == "Identity") {
    out(0, in(0));
    return success();
  }
  if (op == "Dropout")
    return importDropout();
  if (op == "MatMul")
    return importMatMul();
  if (op == "Gemm")
    return importGemm();
  if (op == "Conv")
    return importConv();
  if (llvm::is_contained(
          {"MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool"}, op))
    return importPool(op);
  if (op == "BatchNormalization")
    return importBatchNorm();
  if (op == "InstanceNormalization")
    return importInstanceNorm();
  if (op == "LayerNormalization")
    return importLayerNorm();
  if (op == "Softmax" || op == "LogSoftmax")
    return importSoftmax(op);
  if (op.starts_with("Reduce"))
    return importReduce(op);
  if (op == "ArgMax" || op == "ArgMin")
    return importArgReduce(op);
  if (op == "Shape")
    return importShape();
  if (op == "Size")
    return importSize();
  if (op == "Reshape")
    return importReshape();
  if (op == "Flatten")
    return importFlatten();
  if (op == "Squeeze" || op == "Unsqueeze")
    return importSqueeze(op == "Unsqueeze");
  if (op == "Transpose")
    return importTranspose();
  if (op == "Concat")
    return importConcat();
  if (op == "Split")
    return importSplit();
  if (op == "Slice")
    return importSlice();
  if (op == "Gather")
    return importGather();
  if (op == "Expand")
    return importExpand();
  if (op == "Tile")
    return importTile();
  if (op == "Pad")
    return importPad();
  if (op == "ConstantOfShape")
    return importConstantOfShape();
  if (op == "Range")
    return importRange();
  if (op == "Constant")
    return importConstant();
  if (op == "Trilu")
    return importTrilu();
  if (op == "Shrink")
    return importShrink();
  if (op == "EyeLike")
    return importEyeLike();
  if (op == "Hardmax")
    return importHardmax();
  if (op == "OneHot")
    return importOneHot();
  if (op == "DepthToSpace" || op == "SpaceToDepth")
    return importDepthSpace(op == "DepthToSpace");
  if (op == "NegativeLogLikelihoodLoss")
    return importNllLoss();
  if (op == "SoftmaxCrossEntropyLoss")
    return importSoftmaxCrossEntropy();
  if (op == "RNN" || op == "GRU" || op == "LSTM")
    return importRnn(op);
  return err() << "unsupported op";
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

LogicalResult Importer::importElementwiseBinary(StringRef op) {
  Value l = in(0), r = in(1);
  if (!l || !r)
    return err() << "expects two inputs";
  if (op == "Pow" && elt(l) != elt(r))
    r = convert(r, elt(l), isUns(r), isUns(l));
  r = legacyBroadcast(l, r);
  if (::mlir::failed(sameElt(l, r)))
    return failure();
  if (op == "And" || op == "Or" || op == "Xor") {
    if (!elt(l).isInteger(1))
      return err() << "expects bool inputs";
  } else if (elt(l).isInteger(1)) {
    return err() << "does not accept bool inputs";
  }
  if (op == "Pow" && ::mlir::failed(rejectUnsigned(l)))
    return failure();
  if (op == "Div" && isUns(l)) {
    FailureOr<Value> wl = widen(l), wr = widen(r);
    if (::mlir::failed(wl) || ::mlir::failed(wr))
      return failure();
    Value q = binary<DivOp>(*wl, *wr);
    if (!q)
      return failure();
    out(0, convert(q, elt(l), false, true));
    return success();
  }
  Value res;
  if (op == "Add" || op == "Sub" || op == "Mul" || op == "Div")
    res = binaryFolded(op, l, r);
  else if (op == "Pow")
    res = binary<PowOp>(l, r);
  else if (op == "And")
    res = binary<AndOp>(l, r);
  else if (op == "Or")
    res = binary<OrOp>(l, r);
  else
    res = binary<XorOp>(l, r);
  if (!res)
    return failure();
  out(0, res);
  return success();
}

LogicalResult Importer::importVariadic(StringRef op) {
  if (numIn() == 0 || !in(0))
    return err() << "expects at least one input";
  Value acc = in(0);
  Type origType = elt(acc);
  bool wide = (op == "Max" || op == "Min") && isUns(acc);
  if (wide) {
    FailureOr<Value> w = widen(acc);
    if (::mlir::failed(w))
      return failure();
    acc = *w;
  }
  if (op == "Mean" && ::mlir::failed(requireFloat(acc)))
    return failure();
  for (unsigned i = 1; i < numIn(); ++i) {
    Value v = in(i);
    if (!v)
      return err() << "input #" << i << " is missing";
    if (elt(v) != origType)
      return err() << "operand element types differ: " << origType << " vs "
                   << elt(v);
    if (wide)
      v = convert(v, elt(acc), true, false);
    if (op == "Max")
      acc = binary<MaxOp>(acc, v);
    else if (op == "Min")
      acc = binary<MinOp>(acc, v);
    else
      acc = binary<AddOp>(acc, v);
    if (!acc)
      return failure();
  }
  if (op == "Mean" && numIn() > 1)
    acc = binary<DivOp>(acc, scalarLike(acc, numIn()));
  if (!acc)
    return failure();
  if (wide)
    acc = convert(acc, origType, false, true);
  out(0, acc);
  return success();
}

LogicalResult Importer::importMod() {
  Value a = in(0), c = in(1);
  if (!a || !c)
    return err() << "expects two inputs";
  if (::mlir::failed(sameElt(a, c)))
    return failure();
  Type origType = elt(a);
  bool wide = isUns(a);
  if (wide) {
    FailureOr<Value> wa = widen(a), wc = widen(c);
    if (::mlir::failed(wa) || ::mlir::failed(wc))
      return failure();
    a = *wa;
    c = *wc;
  }
  int64_t fmod = aInt("fmod", 0);
  if (isFloat(a) && fmod != 1)
    return err() << "fmod must be 1 for floating-point inputs";
  Value r = binary<RemOp>(a, c);
  if (!r)
    return failure();
  if (fmod != 1) {
    // Floor modulo: r + c where r != 0 and sign(r) != sign(c).
    Value zero = scalarLike(a, 0);
    Value rNonZero = compare(CompareDirection::NE, r, zero);
    Value rNeg = compare(CompareDirection::LT, r, zero);
    Value cNeg = compare(CompareDirection::LT, c, zero);
    Value signDiff = compare(CompareDirection::NE, rNeg, cNeg);
    Value fix = binary<AndOp>(rNonZero, signDiff);
    Value sum = binary<AddOp>(r, c);
    if (!fix || !sum)
      return failure();
    r = select(fix, sum, r);
  }
  if (wide && r)
    r = convert(r, origType, false, true);
  out(0, r);
  return success();
}

LogicalResult Importer::importUnary(StringRef op) {
  Value x = in(0);
  if (!x)
    return err() << "expects one input";
  if (op == "Not") {
    if (!elt(x).isInteger(1))
      return err() << "expects a bool input";
    out(0, unary<NotOp>(x));
    return success();
  }
  if (op == "IsNaN" || op == "IsInf") {
    if (::mlir::failed(requireFloat(x)))
      return failure();
    Value r = op == "IsNaN"
                  ? mk<IsNanOp>(dims(x), b.getI1Type(), x)
                  : mk<IsInfOp>(dims(x), b.getI1Type(), x,
                                aInt("detect_positive", 1) != 0,
                                aInt("detect_negative", 1) != 0);
    out(0, r);
    return success();
  }
  if (op == "Abs" || op == "Neg" || op == "Sign") {
    if (elt(x).isInteger(1))
      return err() << "does not accept bool inputs";
    if (isUns(x)) {
      if (op == "Abs") {
        out(0, x);
        return success();
      }
      return rejectUnsigned(x);
    }
    Value r = op == "Abs"   ? unary<AbsOp>(x)
              : op == "Neg" ? unary<NegOp>(x)
                            : unary<SignOp>(x);
    if (op == "Neg")
      if (std::optional<Dims> k = known(x)) {
        Dims nk;
        for (const Dim &d : *k)
          nk.push_back(d.isStatic() ? Dim(-d.size) : Dim());
        r = setKnown(r, nk);
      }
    out(0, r);
    return success();
  }
  if (::mlir::failed(requireFloat(x)))
    return failure();
  Value r;
  if (op == "Exp") r = unary<ExpOp>(x);
  else if (op == "Log") r = unary<LogOp>(x);
  else if (op == "Sqrt") r = unary<SqrtOp>(x);
  else if (op == "Reciprocal") r = unary<ReciprocalOp>(x);
  else if (op == "Tanh") r = unary<TanhOp>(x);
  else if (op == "Sigmoid") r = unary<LogisticOp>(x);
  else if (op == "Erf") r = unary<ErfOp>(x);
  else if (op == "Floor") r = unary<FloorOp>(x);
  else if (op == "Ceil") r = unary<CeilOp>(x);
  else if (op == "Round") r = unary<RoundOp>(x);
  else if (op == "Sin") r = unary<SinOp>(x);
  else if (op == "Cos") r = unary<CosOp>(x);
  else if (op == "Tan") r = unary<TanOp>(x);
  else if (op == "Asin") r = unary<AsinOp>(x);
  else if (op == "Acos") r = unary<AcosOp>(x);
  else if (op == "Atan") r = unary<AtanOp>(x);
  else if (op == "Sinh") r = unary<SinhOp>(x);
  else if (op == "Cosh") r = unary<CoshOp>(x);
  else if (op == "Asinh") r = unary<AsinhOp>(x);
  else if (op == "Acosh") r = unary<AcoshOp>(x);
  else if (op == "Atanh") r = unary<AtanhOp>(x);
  else
    return err() << "unsupported op";
  out(0, r);
  return success();
}

LogicalResult Importer::importActivation(StringRef op) {
  Value x = in(0);
  if (!x)
    return err() << "expects one input";
  if (op == "Relu") {
    if (elt(x).isInteger(1) || ::mlir::failed(rejectUnsigned(x)))
      return err() << "expects a signed numeric input";
    out(0, binary<MaxOp>(x, scalarLike(x, 0)));
    return success();
  }
  if (op == "PRelu") {
    Value slope = in(1);
    if (!slope || ::mlir::failed(sameElt(x, slope)) ||
        ::mlir::failed(rejectUnsigned(x)))
      return failure();
    // PRelu < 7: a 1-D slope is per channel (dim 1).
    if (opset < 7 && rank(slope) == 1 && rank(x) > 2 &&
        !(tt(slope).getDimSize(0) == 1)) {
      SmallVector<TDim> t = {tdimOf(slope, 0)};
      t.append(rank(x) - 2, tdimConst(1));
      slope = reshapeT(slope, t);
    }
    Value neg = compare(CompareDirection::LT, x, scalarLike(x, 0));
    Value scaled = binary<MulOp>(x, slope);
    if (!neg || !scaled)
      return failure();
    Value r = select(neg, scaled, x);
    if (!r)
      return failure();
    out(0, r);
    return success();
  }
  if (::mlir::failed(requireFloat(x)))
    return failure();
  auto s = [&](double v) { return scalarLike(x, v); };
  Value zero = s(0);
  Value r;
  if (op == "LeakyRelu") {
    float alpha = aFloat("alpha", 0.01f);
    r = select(compare(CompareDirection::LT, x, zero),
               binary<MulOp>(x, s(alpha)), x);
  } else if (op == "Elu" || op == "Selu") {
    float alpha = aFloat("alpha", op == "Elu" ? 1.0f : 1.67326319217681884765625f);
    Value em1 = binary<SubOp>(unary<ExpOp>(x), s(1));
    Value neg = binary<MulOp>(em1, s(alpha));
    CompareDirection dir =
        op == "Elu" ? CompareDirection::LT : CompareDirection::LE;
    r = select(compare(dir, x, zero), neg, x);
    if (op == "Selu")
      r = binary<MulOp>(r, s(aFloat("gamma", 1.05070102214813232421875f)));
  } else if (op == "Celu") {
    float alpha = aFloat("alpha", 1.0f);
    Value e = unary<ExpOp>(binary<DivOp>(x, s(alpha)));
    Value neg = binary<MulOp>(binary<SubOp>(e, s(1)), s(alpha));
    r = binary<AddOp>(binary<MaxOp>(x, zero), binary<MinOp>(neg, zero));
  } else if (op == "Softplus" || op == "Mish") {
    // log(1 + exp(x)) = max(x, 0) + log(1 + exp(-|x|)).
    Value t = unary<ExpOp>(unary<NegOp>(unary<AbsOp>(x)));
    Value sp = binary<AddOp>(binary<MaxOp>(x, zero),
                             unary<LogOp>(binary<AddOp>(t, s(1))));
    r = op == "Softplus" ? sp : binary<MulOp>(x, unary<TanhOp>(sp));
  } else if (op == "Softsign") {
    r = binary<DivOp>(x, binary<AddOp>(unary<AbsOp>(x), s(1)));
  } else if (op == "HardSigmoid" || op == "HardSwish") {
    float alpha = op == "HardSigmoid" ? aFloat("alpha", 0.2f) : 1.0f / 6.0f;
    float beta = op == "HardSigmoid" ? aFloat("beta", 0.5f) : 0.5f;
    Value lin = binary<AddOp>(binary<MulOp>(x, s(alpha)), s(beta));
    Value hs = binary<MaxOp>(binary<MinOp>(lin, s(1)), zero);
    r = op == "HardSigmoid" ? hs : binary<MulOp>(x, hs);
  } else if (op == "ThresholdedRelu") {
    float alpha = aFloat("alpha", 1.0f);
    r = select(compare(CompareDirection::GT, x, s(alpha)), x, zero);
  }
  if (!r)
    return failure();
  out(0, r);
  return success();
}

LogicalResult Importer::importClip() {
  Value x = in(0);
  if (!x)
    return err() << "expects an input";
  if (::mlir::failed(rejectUnsigned(x)) || elt(x).isInteger(1))
    return err() << "expects a signed numeric input";
  Value lo, hi;
  if (opset < 11) {
    if (attr("min"))
      lo = scalarLike(x, aFloat("min", 0));
    if (attr("max"))
      hi = scalarLike(x, aFloat("max", 0));
  } else {
    lo = in(1);
    hi = in(2);
    for (Value v : {lo, hi})
      if (v && ::mlir::failed(sameElt(x, v)))
        return failure();
  }
  Value r = x;
  if (lo)
    r = binary<MaxOp>(r, lo);
  if (r && hi)
    r = binary<MinOp>(r, hi);
  if (!r)
    return failure();
  out(0, r);
  return success();
}

LogicalResult Importer::importCompare(StringRef op) {
  Value l = in(0), r = in(1);
  if (!l || !r)
    return err() << "expects two inputs";
  if (::mlir::failed(sameElt(l, r)))
    return failure();
  r = legacyBroadcast(l, r);
  CompareDirection dir = CompareDirection::EQ;
  if (op == "Less") dir = CompareDirection::LT;
  else if (op == "LessOrEqual") dir = CompareDirection::LE;
  else if (op == "Greater") dir = CompareDirection::GT;
  else if (op == "GreaterOrEqual") dir = CompareDirection::GE;
  if (op != "Equal" && (isUns(l) || isUns(r))) {
    FailureOr<Value> wl = widen(l), wr = widen(r);
    if (::mlir::failed(wl) || ::mlir::failed(wr))
      return failure();
    l = *wl;
    r = *wr;
  }
  Value res = compare(dir, l, r);
  if (!res)
    return failure();
  out(0, res);
  return success();
}

LogicalResult Importer::importWhere() {
  Value p = in(0), t = in(1), f = in(2);
  if (!p || !t || !f)
    return err() << "expects three inputs";
  if (!elt(p).isInteger(1))
    return err() << "condition must be bool";
  if (::mlir::failed(sameElt(t, f)))
    return failure();
  Value r = select(p, t, f);
  if (!r)
    return failure();
  // Where on known shape vectors with a known condition.
  std::optional<Dims> kp = known(p), kt = known(t), kf = known(f);
  if (kp && kt && kf && allInts(*kp) && rank(r) <= 1 &&
      tt(r).hasStaticShape()) {
    int64_t n = tt(r).getNumElements();
    auto at = [&](const Dims &k, int64_t i) { return k[k.size() == 1 ? 0 : i]; };
    if ((int64_t)kp->size() <= n && (int64_t)kt->size() <= n &&
        (int64_t)kf->size() <= n) {
      Dims k;
      for (int64_t i = 0; i < n; ++i)
        k.push_back(at(*kp, i).size ? at(*kt, i) : at(*kf, i));
      r = setKnown(r, k);
    }
  }
  out(0, r);
  return success();
}

LogicalResult Importer::importCast(StringRef op) {
  Value x = in(0);
  if (!x)
    return err() << "expects an input";
  Type to;
  bool uns = false;
  if (op == "CastLike") {
    Value like = in(1);
    if (!like)
      return err() << "expects two inputs";
    to = elt(like);
    uns = isUns(like);
  } else {
    const onnx::AttributeProto *a = attr("to");
    if (!a)
      return err() << "missing attribute 'to'";
    int64_t t = 0;
    if (a->type() == onnx::AttributeProto_AttributeType_STRING) {
      onnx::TensorProto_DataType parsed;
      if (!onnx::TensorProto_DataType_Parse(a->s(), &parsed))
        return err() << "unknown target type '" << a->s() << "'";
      t = parsed;
    } else {
      t = aInt("to", 0);
    }
    to = convertElementType(&ctx, (int32_t)t, uns);
    if (!to)
      return err() << "unsupported target type " << elementTypeName((int32_t)t);
  }
  out(0, convert(x, to, isUns(x), uns));
  return success();
}

LogicalResult Importer::importDropout() {
  Value x = in(0);
  if (!x)
    return err() << "expects an input";
  if (opset >= 12 && has(2)) {
    std::optional<SmallVector<int64_t>> training = knownInts(in(2));
    if (!training || training->size() != 1)
      return err() << "training_mode must be a constant";
    if ((*training)[0] != 0)
      return err() << "training mode is not supported (inference only)";
  }
  out(0, x);
  if (wantOut(1)) {
    Type maskType = opset >= 10 ? b.getI1Type() : elt(x);
    Value one = constScalar(maskType, 1);
    out(1, expandTo(one, shapeOf(x), dims(x)));
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Linear algebra, convolution, pooling, normalization
//===----------------------------------------------------------------------===//

LogicalResult Importer::importMatMul() {
  Value a = in(0), c = in(1);
  if (!a || !c)
    return err() << "expects two inputs";
  if (::mlir::failed(sameElt(a, c)))
    return failure();
  if (elt(a).isInteger(1))
    return err() << "does not accept bool inputs";
  int64_t ra = rank(a), rc = rank(c);
  if (ra == 0 || rc == 0)
    return err() << "inputs must have rank >= 1";
  Type e = elt(a);
  auto sameDim = [](const Dim &x, const Dim &y) {
    return !x.isStatic() || !y.isStatic() || x.size == y.size;
  };
  if (!sameDim(dims(a)[ra - 1], dims(c)[rc == 1 ? 0 : rc - 2]))
    return err() << "contracting dims differ: " << tt(a) << " x " << tt(c);
  if (ra == 1 && rc == 1) {
    out(0, mk<DotGeneralOp>(Dims{}, e, a, c, ArrayRef<int64_t>{},
                            ArrayRef<int64_t>{}, ArrayRef<int64_t>{0},
                            ArrayRef<int64_t>{0}));
    return success();
  }
  // Promote 1-D operands: [K] -> [1, K] (lhs), [K] -> [K, 1] (rhs).
  Value aa = ra == 1 ? reshapeT(a, {tdimConst(1), tdimOf(a, 0)}) : a;
  Value cc = rc == 1 ? reshapeT(c, {tdimOf(c, 0), tdimConst(1)}) : c;
  int64_t ra2 = rank(aa), rc2 = rank(cc);
  Dims da = dims(aa), dc = dims(cc);
  Value res;
  if (rc2 == 2) {
    Dims outDims(da.begin(), da.end() - 1);
    outDims.push_back(dc[1]);
    res = mk<DotGeneralOp>(outDims, e, aa, cc, ArrayRef<int64_t>{},
                           ArrayRef<int64_t>{}, ArrayRef<int64_t>{ra2 - 1},
                           ArrayRef<int64_t>{0});
  } else {
    Dims ba(da.begin(), da.end() - 2), bc(dc.begin(), dc.end() - 2);
    FailureOr<Dims> bd = broadcastDims({ba, bc});
    if (::mlir::failed(bd))
      return failure();
    int64_t nb = bd->size();
    // Broadcast the batch dims of one operand against the other's.
    auto broadcastBatch = [&](Value v, const Dims &own, Value other,
                              const Dims &otherBatch) -> Value {
      bool same = (int64_t)own.size() - 2 == nb;
      for (int64_t i = 0; same && i < nb; ++i)
        same = own[i] == (*bd)[i];
      if (same)
        return v;
      SmallVector<TDim> t;
      for (int64_t i = 0; i < (int64_t)otherBatch.size(); ++i)
        t.push_back(tdimOf(other, i));
      t.push_back(tdimConst(1));
      t.push_back(tdimConst(1));
      Dims sd;
      for (const TDim &x : t)
        sd.push_back(x.d);
      return expandTo(v, shapeFrom(t), sd);
    };
    Value ea = broadcastBatch(aa, da, cc, bc);
    Value ec = broadcastBatch(cc, dc, aa, ba);
    if (!ea || !ec)
      return failure();
    Dims outDims = *bd;
    outDims.push_back(da[ra2 - 2]);
    outDims.push_back(dc[rc2 - 1]);
    SmallVector<int64_t> batch = llvm::to_vector(llvm::seq<int64_t>(0, nb));
    res = mk<DotGeneralOp>(outDims, e, ea, ec, batch, batch,
                           ArrayRef<int64_t>{nb + 1}, ArrayRef<int64_t>{nb});
  }
  // Remove the promoted dims.
  if (ra == 1 || rc == 1) {
    int64_t r = rank(res);
    SmallVector<TDim> t;
    for (int64_t i = 0; i < r; ++i) {
      if ((ra == 1 && i == r - 2) || (rc == 1 && i == r - 1))
        continue;
      t.push_back(tdimOf(res, i));
    }
    res = reshapeT(res, t);
  }
  out(0, res);
  return success();
}

LogicalResult Importer::importGemm() {
  Value a = in(0), c = in(1), bias = in(2);
  if (!a || !c)
    return err() << "expects at least two inputs";
  if (rank(a) != 2 || rank(c) != 2)
    return err() << "A and B must be 2-D";
  if (::mlir::failed(sameElt(a, c)) || ::mlir::failed(requireFloat(a)))
    return failure();
  bool ta = aInt("transA", 0) != 0, tb = aInt("transB", 0) != 0;
  float alpha = aFloat("alpha", 1.0f), beta = aFloat("beta", 1.0f);
  Dims da = dims(a), dc = dims(c);
  Dims outDims = {da[ta ? 1 : 0], dc[tb ? 0 : 1]};
  Value r = mk<DotGeneralOp>(outDims, elt(a), a, c, ArrayRef<int64_t>{},
                             ArrayRef<int64_t>{}, ArrayRef<int64_t>{ta ? 0 : 1},
                             ArrayRef<int64_t>{tb ? 1 : 0});
  if (alpha != 1.0f)
    r = binary<MulOp>(r, scalarLike(r, alpha));
  if (bias && beta != 0.0f) {
    if (::mlir::failed(sameElt(a, bias)))
      return failure();
    if (beta != 1.0f)
      bias = binary<MulOp>(bias, scalarLike(bias, beta));
    r = binary<AddOp>(r, bias);
  }
  if (!r)
    return failure();
  out(0, r);
  return success();
}

/// Resolves auto_pad. SAME_* pads are static when the spatial dim is static
/// or the stride is 1 (total = (k - 1) * d); otherwise they are run-time
/// values (Importer::padSameRuntime) and `pads` stays zero.
static LogicalResult resolveAutoPad(StringRef autoPad, ArrayRef<Dim> spatial,
                                    Window &w, std::string &error) {
  int64_t k = spatial.size();
  if (autoPad == "NOTSET" || autoPad.empty())
    return success();
  if (autoPad == "VALID") {
    w.pads.assign(2 * k, 0);
    return success();
  }
  if (autoPad != "SAME_UPPER" && autoPad != "SAME_LOWER") {
    error = "unknown auto_pad '" + autoPad.str() + "'";
    return failure();
  }
  w.pads.assign(2 * k, 0);
  for (int64_t i = 0; i < k; ++i)
    if (!spatial[i].isStatic() && w.strides[i] != 1) {
      w.runtimeSame = autoPad == "SAME_UPPER" ? 1 : 2;
      return success();
    }
  for (int64_t i = 0; i < k; ++i) {
    int64_t s = w.strides[i], span = (w.kernel[i] - 1) * w.dilations[i] + 1;
    int64_t total = span - 1;
    if (spatial[i].isStatic()) {
      int64_t d = spatial[i].size;
      total = std::max<int64_t>(0, (ceilDiv(d, s) - 1) * s + span - d);
    }
    int64_t small = total / 2, big = total - small;
    w.pads[i] = autoPad == "SAME_UPPER" ? small : big;
    w.pads[i + k] = autoPad == "SAME_UPPER" ? big : small;
  }
  return success();
}

static Dim windowOut(const Dim &d, int64_t kernel, int64_t stride,
                     int64_t dil, int64_t lo, int64_t hi, bool ceilMode) {
  if (!d.isStatic() || kernel == kDyn)
    return Dim();
  int64_t num = d.size + lo + hi - dil * (kernel - 1) - 1;
  int64_t o = (ceilMode ? ceilDiv(num, stride) : floorDiv(num, stride)) + 1;
  return Dim(std::max<int64_t>(o, 0));
}

Value Importer::padSameRuntime(Value x, const Window &w, Value value) {
  int64_t r = rank(x), k = r - 2;
  auto vecType = RankedTensorType::get({1}, b.getI64Type());
  auto op = [&](auto tag, Value l, Value c) -> Value {
    using OpTy = decltype(tag);
    Value v = OpTy::create(b, loc, vecType, l, c).getResult();
    knownVals[v] = Dims{Dim()};
    return v;
  };
  SmallVector<Value> lo(2, constI64({0})), hi(2, constI64({0}));
  Dims o = dims(x);
  bool upper = w.runtimeSame == 1;
  for (int64_t i = 0; i < k; ++i) {
    int64_t s = w.strides[i], span = (w.kernel[i] - 1) * w.dilations[i] + 1;
    Dim d = o[i + 2];
    if (d.isStatic() || s == 1) {
      int64_t total =
          d.isStatic()
              ? std::max<int64_t>(0, (ceilDiv(d.size, s) - 1) * s + span -
                                         d.size)
              : span - 1;
      int64_t small = total / 2, big = total - small;
      lo.push_back(constI64({upper ? small : big}));
      hi.push_back(constI64({upper ? big : small}));
      if (d.isStatic())
        o[i + 2] = Dim(d.size + total);
      continue;
    }
    // total = max(ceil(in / s) * s + (span - s) - in, 0)
    Value in = dimOf(x, i + 2);
    Value outSize =
        op(DivOp(), op(AddOp(), in, constI64({s - 1})), constI64({s}));
    Value total = op(AddOp(), op(MulOp(), outSize, constI64({s})),
                     constI64({span - s}));
    total = op(MaxOp(), op(SubOp(), total, in), constI64({0}));
    Value small = op(DivOp(), total, constI64({2}));
    Value big = op(SubOp(), total, small);
    lo.push_back(upper ? small : big);
    hi.push_back(upper ? big : small);
    o[i + 2] = Dim();
  }
  lo.append(hi);
  return mk<PadOp>(o, elt(x), PadMode::Constant, x, concatI64(lo), value);
}

LogicalResult Importer::importConv() {
  Value x = in(0), w = in(1), bias = in(2);
  if (!x || !w)
    return err() << "expects at least two inputs";
  if (::mlir::failed(sameElt(x, w)) || ::mlir::failed(requireFloat(x)))
    return failure();
  int64_t r = rank(x);
  if (r < 3 || rank(w) != r)
    return err() << "input and weight must have equal rank >= 3";
  int64_t k = r - 2;
  Dims dx = dims(x), dw = dims(w);
  Window win;
  win.kernel = aInts("kernel_shape").value_or(SmallVector<int64_t>{});
  if (win.kernel.empty())
    for (int64_t i = 0; i < k; ++i)
      win.kernel.push_back(dw[i + 2].size);
  win.strides = aInts("strides").value_or(SmallVector<int64_t>(k, 1));
  win.dilations = aInts("dilations").value_or(SmallVector<int64_t>(k, 1));
  win.pads = aInts("pads").value_or(SmallVector<int64_t>(2 * k, 0));
  int64_t group = aInt("group", 1);
  if ((int64_t)win.kernel.size() != k || (int64_t)win.strides.size() != k ||
      (int64_t)win.dilations.size() != k || (int64_t)win.pads.size() != 2 * k)
    return err() << "kernel_shape/strides/dilations/pads have the wrong length";
  if (llvm::any_of(win.kernel, [](int64_t v) { return v == kDyn; }))
    return err() << "weight spatial dims must be static";
  std::string error;
  if (::mlir::failed(resolveAutoPad(aStr("auto_pad", "NOTSET"),
                                    ArrayRef<Dim>(dx).drop_front(2), win,
                                    error)))
    return err() << error;
  if (failed)
    return failure();
  if (win.runtimeSame) {
    x = padSameRuntime(x, win, scalarLike(x, 0));
    dx = dims(x);
  }
  Dims outDims = {dx[0], dw[0]};
  for (int64_t i = 0; i < k; ++i)
    outDims.push_back(windowOut(dx[i + 2], win.kernel[i], win.strides[i],
                                win.dilations[i], win.pads[i], win.pads[i + k],
                                false));
  Value res = mk<ConvOp>(outDims, elt(x), x, w, win.strides, win.dilations,
                         win.pads, (uint64_t)group);
  if (bias) {
    if (rank(bias) != 1 || ::mlir::failed(sameElt(x, bias)))
      return err() << "bias must be 1-D of the input element type";
    SmallVector<TDim> t = {tdimOf(bias, 0)};
    t.append(k, tdimConst(1));
    res = binary<AddOp>(res, reshapeT(bias, t));
    if (!res)
      return failure();
  }
  out(0, res);
  return success();
}

LogicalResult Importer::importPool(StringRef op) {
  Value x = in(0);
  if (!x)
    return err() << "expects an input";
  if (::mlir::failed(requireFloat(x)))
    return failure();
  int64_t r = rank(x);
  if (r < 3)
    return err() << "input must have rank >= 3";
  int64_t k = r - 2;
  if (op.starts_with("Global")) {
    SmallVector<int64_t> axes = llvm::to_vector(llvm::seq<int64_t>(2, r));
    out(0, reduce(op == "GlobalMaxPool" ? ReduceKind::Max : ReduceKind::Mean,
                  x, axes, true));
    return success();
  }
  if (wantOut(1))
    return err() << "the Indices output is not supported";
  Dims dx = dims(x);
  Window win;
  std::optional<SmallVector<int64_t>> ks = aInts("kernel_shape");
  if (!ks)
    return err() << "missing attribute 'kernel_shape'";
  win.kernel = *ks;
  win.strides = aInts("strides").value_or(SmallVector<int64_t>(k, 1));
  win.dilations = aInts("dilations").value_or(SmallVector<int64_t>(k, 1));
  win.pads = aInts("pads").value_or(SmallVector<int64_t>(2 * k, 0));
  if ((int64_t)win.kernel.size() != k || (int64_t)win.strides.size() != k ||
      (int64_t)win.dilations.size() != k || (int64_t)win.pads.size() != 2 * k)
    return err() << "kernel_shape/strides/dilations/pads have the wrong length";
  bool ceilMode = aInt("ceil_mode", 0) != 0;
  bool countPad = aInt("count_include_pad", 0) != 0;
  std::string error;
  if (::mlir::failed(resolveAutoPad(aStr("auto_pad", "NOTSET"),
                                    ArrayRef<Dim>(dx).drop_front(2), win,
                                    error)))
    return err() << error;
  if (failed)
    return failure();
  bool isMax = op == "MaxPool";
  auto pool = [&](Value v) {
    Dims dv = dims(v);
    Dims outDims = {dv[0], dv[1]};
    for (int64_t i = 0; i < k; ++i)
      outDims.push_back(windowOut(dv[i + 2], win.kernel[i], win.strides[i],
                                  win.dilations[i], win.pads[i],
                                  win.pads[i + k], ceilMode));
    return mk<PoolOp>(outDims, elt(v), isMax ? PoolKind::Max : PoolKind::Avg, v,
                      win.kernel, win.strides, win.dilations, win.pads,
                      ceilMode, countPad);
  };
  if (!win.runtimeSame) {
    out(0, pool(x));
    return success();
  }
  // Run-time SAME pads: pad explicitly (MaxPool with -inf). AveragePool
  // without count_include_pad divides the window sums of the zero-padded
  // input by those of a zero-padded ones tensor (the valid-element counts).
  if (isMax) {
    out(0, pool(padSameRuntime(
               x, win,
               constScalar(elt(x), -std::numeric_limits<double>::infinity()))));
    return success();
  }
  Value sum = pool(padSameRuntime(x, win, scalarLike(x, 0)));
  if (countPad) {
    out(0, sum);
    return success();
  }
  Value ones = expandTo(scalarLike(x, 1), shapeOf(x), dx);
  if (!ones)
    return failure();
  Value cnt = pool(padSameRuntime(ones, win, scalarLike(x, 0)));
  out(0, binary<DivOp>(sum, cnt));
  return success();
}

LogicalResult Importer::importBatchNorm() {
  Value x = in(0), scale = in(1), bias = in(2), mean = in(3), var = in(4);
  if (!x || !scale || !bias || !mean || !var)
    return err() << "expects five inputs";
  if (::mlir::failed(requireFloat(x)))
    return failure();
  if (aInt("training_mode", 0) != 0 || wantOut(1) || wantOut(2) ||
      wantOut(3) || wantOut(4))
    return err() << "training mode is not supported (inference only)";
  if (opset < 9 && aInt("spatial", 1) != 1)
    return err() << "spatial=0 is not supported";
  float eps = aFloat("epsilon", 1e-5f);
  Type e = elt(x);
  for (Value *p : {&scale, &bias, &mean, &var}) {
    if (rank(*p) != 1)
      return err() << "scale, B, mean and var must be 1-D";
    *p = convert(*p, e, false, false);
  }
  // y = x * inv + (B - mean * inv), inv = scale / sqrt(var + eps).
  Value inv = binary<MulOp>(
      scale, unary<RsqrtOp>(binary<AddOp>(var, constScalar(e, eps))));
  Value shift = binary<SubOp>(bias, binary<MulOp>(mean, inv));
  if (!inv || !shift)
    return failure();
  int64_t r = rank(x);
  if (r > 2) {
    auto bcast = [&](Value v) {
      SmallVector<TDim> t = {tdimOf(v, 0)};
      t.append(r - 2, tdimConst(1));
      return reshapeT(v, t);
    };
    inv = bcast(inv);
    shift = bcast(shift);
  }
  Value y = binary<AddOp>(binary<MulOp>(x, inv), shift);
  if (!y)
    return failure();
  out(0, y);
  return success();
}

LogicalResult Importer::importInstanceNorm() {
  Value x = in(0), scale = in(1), bias = in(2);
  if (!x || !scale || !bias)
    return err() << "expects three inputs";
  if (::mlir::failed(requireFloat(x)))
    return failure();
  int64_t r = rank(x);
  if (r < 3)
    return err() << "input must have rank >= 3";
  float eps = aFloat("epsilon", 1e-5f);
  SmallVector<int64_t> axes = llvm::to_vector(llvm::seq<int64_t>(2, r));
  Value mean = reduce(ReduceKind::Mean, x, axes, true);
  Value d = binary<SubOp>(x, mean);
  Value var = reduce(ReduceKind::Mean, binary<MulOp>(d, d), axes, true);
  Value norm = binary<MulOp>(
      d, unary<RsqrtOp>(binary<AddOp>(var, scalarLike(x, eps))));
  auto bcast = [&](Value v) {
    SmallVector<TDim> t = {tdimOf(v, 0)};
    t.append(r - 2, tdimConst(1));
    return reshapeT(convert(v, elt(x), false, false), t);
  };
  if (rank(scale) != 1 || rank(bias) != 1)
    return err() << "scale and B must be 1-D";
  Value y = binary<AddOp>(binary<MulOp>(norm, bcast(scale)), bcast(bias));
  if (!y)
    return failure();
  out(0, y);
  return success();
}

LogicalResult Importer::importLayerNorm() {
  Value x = in(0), scale = in(1), bias = in(2);
  if (!x || !scale)
    return err() << "expects at least two inputs";
  if (::mlir::failed(requireFloat(x)))
    return failure();
  int64_t r = rank(x);
  FailureOr<int64_t> axis = normAxis(aInt("axis", -1), r);
  if (::mlir::failed(axis))
    return failure();
  float eps = aFloat("epsilon", 1e-5f);
  Type e = elt(x);
  Type stash = e;
  if (aInt("stash_type", 1) == 1 && !e.isF32() && !e.isF64())
    stash = b.getF32Type();
  Value xs = convert(x, stash, false, false);
  SmallVector<int64_t> axes = llvm::to_vector(llvm::seq<int64_t>(*axis, r));
  Value mean = reduce(ReduceKind::Mean, xs, axes, true);
  Value d = binary<SubOp>(xs, mean);
  Value var = reduce(ReduceKind::Mean, binary<MulOp>(d, d), axes, true);
  Value inv = unary<RsqrtOp>(binary<AddOp>(var, constScalar(stash, eps)));
  Value y = convert(binary<MulOp>(d, inv), e, false, false);
  y = binary<MulOp>(y, convert(scale, e, false, false));
  if (bias && y)
    y = binary<AddOp>(y, convert(bias, e, false, false));
  if (!y)
    return failure();
  out(0, y);
  out(1, mean);
  out(2, inv);
  return success();
}

LogicalResult Importer::importSoftmax(StringRef op) {
  Value x = in(0);
  if (!x)
    return err() << "expects an input";
  if (::mlir::failed(requireFloat(x)))
    return failure();
  int64_t r = rank(x);
  FailureOr<int64_t> axis =
      r == 0 ? FailureOr<int64_t>(0)
             : normAxis(aInt("axis", opset < 13 ? 1 : -1), r);
  if (::mlir::failed(axis))
    return failure();
  SmallVector<int64_t> axes;
  if (r > 0) {
    if (opset < 13) // coerced to 2-D: reduce over all dims from axis on
      axes = llvm::to_vector(llvm::seq<int64_t>(*axis, r));
    else
      axes = {*axis};
  }
  Value m = reduce(ReduceKind::Max, x, axes, true);
  Value shifted = binary<SubOp>(x, m);
  Value e = unary<ExpOp>(shifted);
  Value s = reduce(ReduceKind::Sum, e, axes, true);
  Value y = op == "Softmax" ? binary<DivOp>(e, s)
                            : binary<SubOp>(shifted, unary<LogOp>(s));
  if (!y)
    return failure();
  out(0, y);
  return success();
}

LogicalResult Importer::importReduce(StringRef op) {
  Value x = in(0);
  if (!x)
    return err() << "expects an input";
  static const llvm::StringSet<> floatOnly = {"ReduceL2", "ReduceLogSum",
                                              "ReduceLogSumExp", "ReduceMean"};
  if (floatOnly.contains(op) && ::mlir::failed(requireFloat(x)))
    return failure();
  if (elt(x).isInteger(1))
    return err() << "does not accept bool inputs";
  if ((op == "ReduceMax" || op == "ReduceMin" || op == "ReduceL1") &&
      ::mlir::failed(rejectUnsigned(x)))
    return failure();
  bool axesAsInput = opset >= 18 || (op == "ReduceSum" && opset >= 13);
  SmallVector<int64_t> axes;
  if (axesAsInput) {
    FailureOr<SmallVector<int64_t>> a = constInts(in(1), "axes");
    if (::mlir::failed(a))
      return failure();
    axes = *a;
  } else {
    axes = aInts("axes").value_or(SmallVector<int64_t>{});
  }
  bool keep = aInt("keepdims", 1) != 0;
  bool noop = aInt("noop_with_empty_axes", 0) != 0;
  int64_t r = rank(x);
  if (axes.empty()) {
    if (noop) {
      out(0, x);
      return success();
    }
    axes = llvm::to_vector(llvm::seq<int64_t>(0, r));
  }
  FailureOr<SmallVector<int64_t>> na = normAxes(axes, r, true);
  if (::mlir::failed(na))
    return failure();
  Value y;
  if (op == "ReduceSum")
    y = reduce(ReduceKind::Sum, x, *na, keep);
  else if (op == "ReduceMean")
    y = reduce(ReduceKind::Mean, x, *na, keep);
  else if (op == "ReduceMax")
    y = reduce(ReduceKind::Max, x, *na, keep);
  else if (op == "ReduceMin")
    y = reduce(ReduceKind::Min, x, *na, keep);
  else if (op == "ReduceProd")
    y = reduce(ReduceKind::Prod, x, *na, keep);
  else if (op == "ReduceL1")
    y = reduce(ReduceKind::Sum, unary<AbsOp>(x), *na, keep);
  else if (op == "ReduceL2")
    y = unary<SqrtOp>(reduce(ReduceKind::Sum, binary<MulOp>(x, x), *na, keep));
  else if (op == "ReduceSumSquare")
    y = reduce(ReduceKind::Sum, binary<MulOp>(x, x), *na, keep);
  else if (op == "ReduceLogSum")
    y = unary<LogOp>(reduce(ReduceKind::Sum, x, *na, keep));
  else if (op == "ReduceLogSumExp") {
    // max + log(sum(exp(x - max))).
    Value mk1 = reduce(ReduceKind::Max, x, *na, true);
    Value s = reduce(ReduceKind::Sum, unary<ExpOp>(binary<SubOp>(x, mk1)), *na,
                     keep);
    Value m = keep ? mk1 : reduce(ReduceKind::Max, x, *na, false);
    y = binary<AddOp>(unary<LogOp>(s), m);
  } else
    return err() << "unsupported op";
  if (!y)
    return failure();
  out(0, y);
  return success();
}

LogicalResult Importer::importArgReduce(StringRef op) {
  Value x = in(0);
  if (!x)
    return err() << "expects an input";
  if (::mlir::failed(rejectUnsigned(x)) || elt(x).isInteger(1))
    return err() << "expects a signed numeric input";
  int64_t r = rank(x);
  if (r == 0)
    return err() << "input must have rank >= 1";
  FailureOr<int64_t> axis = normAxis(aInt("axis", 0), r);
  if (::mlir::failed(axis))
    return failure();
  bool keep = aInt("keepdims", 1) != 0;
  bool last = aInt("select_last_index", 0) != 0;
  Dims in = dims(x), o;
  for (int64_t i = 0; i < r; ++i)
    if (i != *axis)
      o.push_back(in[i]);
    else if (keep)
      o.push_back(Dim(1));
  out(0, mk<ArgReduceOp>(o, b.getI64Type(), x, (uint64_t)*axis,
                         op == "ArgMax", keep, last));
  return success();
}

//===----------------------------------------------------------------------===//
// Shape and data movement
//===----------------------------------------------------------------------===//

LogicalResult Importer::importShape() {
  Value x = in(0);
  if (!x)
    return err() << "expects an input";
  int64_t r = rank(x);
  int64_t start = 0, end = r;
  if (opset >= 15) {
    start = aInt("start", 0);
    end = aInt("end", r);
  }
  auto clampIdx = [&](int64_t v) {
    if (v < 0)
      v += r;
    return std::min(std::max<int64_t>(v, 0), r);
  };
  start = clampIdx(start);
  end = clampIdx(end);
  if (start >= end) {
    out(0, constI64({}));
    return success();
  }
  Value s = shapeOf(x);
  if (start != 0 || end != r)
    s = slice1D(s, start, end);
  out(0, s);
  return success();
}

LogicalResult Importer::importSize() {
  Value x = in(0);
  if (!x)
    return err() << "expects an input";
  if (tt(x).hasStaticShape()) {
    out(0, constI64Scalar(tt(x).getNumElements()));
    return success();
  }
  Value p = reduce(ReduceKind::Prod, shapeOf(x), {0}, false);
  Dims ds = dims(x);
  int64_t staticProd = 1, numDyn = 0;
  Dim dyn;
  for (const Dim &d : ds) {
    if (d.isStatic())
      staticProd *= d.size;
    else {
      ++numDyn;
      dyn = d;
    }
  }
  knownVals[p] = Dims{numDyn == 1 && staticProd == 1 ? dyn : Dim()};
  out(0, p);
  return success();
}

/// Infers the -1 entry of a reshape by cancelling equal static products and
/// equal dim names between input and output.
static Dim inferReshapeDim(ArrayRef<Dim> in, ArrayRef<Dim> outDims,
                           int64_t skip) {
  int64_t inStatic = 1, outStatic = 1;
  SmallVector<StringAttr> names;
  for (const Dim &d : in) {
    if (d.isStatic())
      inStatic *= d.size;
    else if (d.name)
      names.push_back(d.name);
    else
      return Dim();
  }
  for (int64_t i = 0; i < (int64_t)outDims.size(); ++i) {
    if (i == skip)
      continue;
    const Dim &d = outDims[i];
    if (d.isStatic()) {
      outStatic *= d.size;
      continue;
    }
    if (!d.name)
      return Dim();
    auto it = llvm::find(names, d.name);
    if (it == names.end())
      return Dim();
    names.erase(it);
  }
  if (outStatic <= 0)
    return Dim();
  if (names.empty())
    return inStatic % outStatic == 0 ? Dim(inStatic / outStatic) : Dim();
  if (names.size() == 1 && inStatic == outStatic)
    return Dim(kDyn, names.front());
  return Dim();
}

LogicalResult Importer::importReshape() {
  Value x = in(0), s = in(1);
  if (opset < 5 && x && !s)
    if (std::optional<SmallVector<int64_t>> shape = aInts("shape"))
      s = constI64(*shape);
  if (!x || !s)
    return err() << "expects two inputs";
  if (rank(s) != 1 || !elt(s).isInteger(64) ||
      ShapedType::isDynamic(tt(s).getDimSize(0)))
    return err() << "the shape input must be a 1-D int64 tensor of static "
                    "length, got "
                 << s.getType();
  bool allowZero = opset >= 14 && aInt("allowzero", 0) != 0;
  int64_t n = tt(s).getDimSize(0);
  std::optional<Dims> k = known(s);
  if (!k)
    k = Dims(n, Dim());
  Dims in = dims(x), o(n, Dim());
  int64_t inferIdx = -1;
  for (int64_t i = 0; i < n; ++i) {
    const Dim &e = (*k)[i];
    if (!e.isStatic()) {
      o[i] = Dim(kDyn, e.name);
      continue;
    }
    if (e.size == 0 && !allowZero) {
      if (i >= (int64_t)in.size())
        return err() << "shape entry " << i << " is 0 but the input has rank "
                     << in.size();
      o[i] = in[i];
    } else if (e.size == -1) {
      if (inferIdx >= 0)
        return err() << "more than one -1 in the target shape";
      inferIdx = i;
    } else if (e.size < 0) {
      return err() << "invalid target shape entry " << e.size;
    } else {
      o[i] = Dim(e.size);
    }
  }
  if (inferIdx >= 0)
    o[inferIdx] = inferReshapeDim(in, o, inferIdx);
  if (tt(x).hasStaticShape() && typeFor(o, elt(x)).hasStaticShape() &&
      tt(x).getNumElements() != typeFor(o, elt(x)).getNumElements())
    return err() << "cannot reshape " << x.getType() << " to "
                 << typeFor(o, elt(x));
  Value r = mk<DynamicReshapeOp>(o, elt(x), x, s, allowZero);
  if (isUns(x))
    unsignedVals.insert(r);
  if (std::optional<Dims> kx = known(x))
    r = setKnown(r, *kx);
  out(0, r);
  return success();
}

LogicalResult Importer::importFlatten() {
  Value x = in(0);
  if (!x)
    return err() << "expects an input";
  int64_t r = rank(x);
  int64_t axis = aInt("axis", 1);
  if (axis < 0)
    axis += r;
  if (axis < 0 || axis > r)
    return err() << "axis out of range";
  TDim a = tdimConst(1), c = tdimConst(1);
  for (int64_t i = 0; i < r; ++i) {
    if (i < axis)
      a = tdimMul(a, tdimOf(x, i));
    else
      c = tdimMul(c, tdimOf(x, i));
  }
  out(0, reshapeT(x, {a, c}));
  return success();
}

LogicalResult Importer::importSqueeze(bool unsqueeze) {
  Value x = in(0);
  if (!x)
    return err() << "expects an input";
  std::optional<SmallVector<int64_t>> axes;
  if (opset < 13) {
    axes = aInts("axes");
  } else if (has(1)) {
    if (!knownInts(in(1)))
      return importSqueezeRuntimeAxes(unsqueeze);
    FailureOr<SmallVector<int64_t>> a = constInts(in(1), "axes");
    if (::mlir::failed(a))
      return failure();
    axes = *a;
  }
  int64_t r = rank(x);
  Dims ds = dims(x);
  SmallVector<TDim> t;
  if (unsqueeze) {
    if (!axes)
      return err() << "missing axes";
    int64_t outRank = r + axes->size();
    FailureOr<SmallVector<int64_t>> na = normAxes(*axes, outRank, true);
    if (::mlir::failed(na))
      return failure();
    int64_t next = 0;
    for (int64_t j = 0; j < outRank; ++j)
      t.push_back(llvm::is_contained(*na, j) ? tdimConst(1)
                                             : tdimOf(x, next++));
  } else {
    SmallVector<int64_t> drop;
    if (!axes || axes->empty()) {
      for (int64_t i = 0; i < r; ++i) {
        if (!ds[i].isStatic())
          return err() << "Squeeze without axes needs static dims (dim " << i
                       << " is dynamic)";
        if (ds[i].size == 1)
          drop.push_back(i);
      }
    } else {
      FailureOr<SmallVector<int64_t>> na = normAxes(*axes, r, true);
      if (::mlir::failed(na))
        return failure();
      drop = *na;
      for (int64_t i : drop)
        if (ds[i].isStatic() && ds[i].size != 1)
          return err() << "cannot squeeze dim " << i << " of size "
                       << ds[i].size;
    }
    for (int64_t i = 0; i < r; ++i)
      if (!llvm::is_contained(drop, i))
        t.push_back(tdimOf(x, i));
  }
  out(0, reshapeT(x, t));
  return success();
}

/// Squeeze/Unsqueeze whose axes are a run-time tensor of static length K:
/// the result rank is known (r + K, or r - K for Squeeze: axes are unique),
/// every result dim is dynamic, and the result shape is computed with disc
/// ops. With A the normalized axes as [K, 1] and J an iota as [1, n]:
///  - Unsqueeze (n = r + K): out[j] = 1 if j in A, else
///    shape[j - #{a in A: a < j}];
///  - Squeeze (n = r): out[p] = shape[i] for the kept i (i not in A) with
///    i - #{a in A: a < i} == p.
LogicalResult Importer::importSqueezeRuntimeAxes(bool unsqueeze) {
  Value x = in(0), axesV = in(1);
  if (rank(axesV) != 1 || tt(axesV).isDynamicDim(0))
    return err() << "axes given at run time must be a 1-D tensor of static "
                    "length (the result rank depends on it)";
  int64_t k = tt(axesV).getDimSize(0), r = rank(x);
  int64_t outRank = unsqueeze ? r + k : r - k;
  if (outRank < 0)
    return err() << "more axes (" << k << ") than dims (" << r << ")";
  Value a = toI64(axesV);
  Value base = constI64Scalar(unsqueeze ? outRank : r);
  a = select(compare(CompareDirection::LT, a, constI64Scalar(0)),
             binary<AddOp>(a, base), a);
  Type i64 = b.getI64Type();
  auto cnt = [&](CompareDirection dir, Value col, Value row) {
    // #{a : a dir j} for every j of `row` ([1, n]) -> [n]
    Value m = compare(dir, col, row);
    return reduce(ReduceKind::Sum, convert(m, i64, false, false), {0}, false);
  };
  Value aCol = reshapeT(a, {tdimConst(k), tdimConst(1)});
  auto iota = [&](int64_t n) {
    return constI64(llvm::to_vector(llvm::seq<int64_t>(0, n)));
  };
  Value shape = shapeOf(x);
  Value result;
  if (unsqueeze) {
    Value j = iota(outRank);
    Value jRow = reshapeT(j, {tdimConst(1), tdimConst(outRank)});
    Value isAxis =
        compare(CompareDirection::GT, cnt(CompareDirection::EQ, aCol, jRow),
                constI64Scalar(0));
    Value src = binary<SubOp>(j, cnt(CompareDirection::LT, aCol, jRow));
    if (r == 0) {
      result = constI64(SmallVector<int64_t>(outRank, 1));
    } else {
      src = binary<MaxOp>(binary<MinOp>(src, constI64Scalar(r - 1)),
                          constI64Scalar(0));
      Value g = mk<GatherOp>(Dims{Dim(outRank)}, i64, shape, src, (uint64_t)0);
      result = select(isAxis, constI64Scalar(1), g);
    }
  } else {
    Value i = iota(r);
    Value iRow = reshapeT(i, {tdimConst(1), tdimConst(r)});
    Value kept =
        compare(CompareDirection::EQ, cnt(CompareDirection::EQ, aCol, iRow),
                constI64Scalar(0));
    Value pos = binary<SubOp>(i, cnt(CompareDirection::LT, aCol, iRow)); // [r]
    Value p = reshapeT(iota(outRank), {tdimConst(outRank), tdimConst(1)});
    Value m = binary<AndOp>(
        compare(CompareDirection::EQ,
                reshapeT(pos, {tdimConst(1), tdimConst(r)}), p),
        reshapeT(kept, {tdimConst(1), tdimConst(r)})); // [outRank, r]
    Value sRow = reshapeT(shape, {tdimConst(1), tdimConst(r)});
    result =
        reduce(ReduceKind::Sum, select(m, sRow, constI64Scalar(0)), {1}, false);
  }
  if (!result)
    return failure();
  Dims od(outRank, Dim());
  Value y = mk<DynamicReshapeOp>(od, elt(x), x, result, /*allow_zero=*/true);
  if (isUns(x))
    unsignedVals.insert(y);
  out(0, y);
  return success();
}

LogicalResult Importer::importTranspose() {
  Value x = in(0);
  if (!x)
    return err() << "expects an input";
  int64_t r = rank(x);
  SmallVector<int64_t> perm;
  if (std::optional<SmallVector<int64_t>> p = aInts("perm"))
    perm = *p;
  else
    for (int64_t i = r - 1; i >= 0; --i)
      perm.push_back(i);
  SmallVector<int64_t> sorted(perm);
  llvm::sort(sorted);
  if ((int64_t)perm.size() != r ||
      sorted != llvm::to_vector(llvm::seq<int64_t>(0, r)))
    return err() << "perm is not a permutation of [0, " << r << ")";
  out(0, transpose(x, perm));
  return success();
}

LogicalResult Importer::importConcat() {
  SmallVector<Value> ins;
  for (unsigned i = 0; i < numIn(); ++i)
    if (Value v = in(i))
      ins.push_back(v);
  if (ins.empty())
    return err() << "expects at least one input";
  int64_t r = rank(ins[0]);
  if (r == 0)
    return err() << "inputs must have rank >= 1";
  const onnx::AttributeProto *axisAttr = attr("axis");
  if (!axisAttr && opset >= 4)
    return err() << "missing attribute 'axis'";
  FailureOr<int64_t> axis = normAxis(aInt("axis", 1), r);
  if (::mlir::failed(axis))
    return failure();
  Dims o = dims(ins[0]);
  Dims k;
  bool allKnown = r == 1;
  for (auto [idx, v] : llvm::enumerate(ins)) {
    if (rank(v) != r || ::mlir::failed(sameElt(ins[0], v)))
      return err() << "inputs must have equal rank and element type";
    Dims dv = dims(v);
    for (int64_t i = 0; i < r; ++i) {
      if (idx == 0)
        continue;
      if (i == *axis) {
        o[i] = o[i].isStatic() && dv[i].isStatic() ? Dim(o[i].size + dv[i].size)
                                                   : Dim();
      } else if (!o[i].isStatic()) {
        if (dv[i].isStatic() || !(o[i] == dv[i]))
          o[i] = dv[i].isStatic() ? dv[i] : Dim();
      } else if (dv[i].isStatic() && dv[i].size != o[i].size) {
        return err() << "dim " << i << " differs between inputs";
      }
    }
    if (allKnown) {
      std::optional<Dims> kv = known(v);
      if (kv)
        k.append(kv->begin(), kv->end());
      else if (dv[0].isStatic())
        k.append(dv[0].size, Dim());
      else
        allKnown = false;
    }
  }
  if (ins.size() == 1) {
    out(0, ins[0]);
    return success();
  }
  Value res = mk<ConcatenateOp>(o, elt(ins[0]), ins, (uint64_t)*axis);
  if (allKnown)
    res = setKnown(res, k);
  out(0, res);
  return success();
}

/// ONNX Slice: number of elements selected from a dim of size `dim`.
static int64_t sliceBounds(int64_t dim, int64_t &start, int64_t &end,
                           int64_t step) {
  if (start < 0)
    start += dim;
  if (end < 0)
    end += dim;
  if (step > 0) {
    start = std::clamp<int64_t>(start, 0, dim);
    end = std::clamp<int64_t>(end, 0, dim);
    return std::max<int64_t>(0, ceilDiv(end - start, step));
  }
  start = std::clamp<int64_t>(start, 0, dim - 1);
  end = std::clamp<int64_t>(end, -1, dim - 1);
  return std::max<int64_t>(0, ceilDiv(start - end, -step));
}

LogicalResult Importer::importSplit() {
  Value x = in(0);
  if (!x)
    return err() << "expects an input";
  int64_t r = rank(x);
  FailureOr<int64_t> axis = normAxis(aInt("axis", 0), r);
  if (::mlir::failed(axis))
    return failure();
  int64_t n = node->output_size();
  SmallVector<int64_t> sizes;
  if (opset < 13) {
    sizes = aInts("split").value_or(SmallVector<int64_t>{});
  } else if (has(1)) {
    Value splitV = toI64(in(1));
    if (rank(splitV) != 1 || tt(splitV).getDimSize(0) != n)
      return err() << "split must be 1-D with one entry per output";
    if (std::optional<SmallVector<int64_t>> s = knownInts(splitV)) {
      sizes = *s;
    } else {
      // Sizes known only at run time: cumulative starts at run time.
      std::optional<Dims> ks = known(splitV);
      auto i64x1 = RankedTensorType::get({1}, b.getI64Type());
      Value start = constI64({0}), one = constI64({1});
      for (int64_t i = 0; i < n; ++i) {
        Value size = slice1D(splitV, i, i + 1);
        Value end = AddOp::create(b, loc, i64x1, start, size).getResult();
        Dims o = dims(x);
        o[*axis] = ks ? (*ks)[i] : Dim();
        out(i, mk<SliceOp>(o, elt(x), x, start, end, one,
                           ArrayRef<int64_t>{*axis}));
        start = end;
      }
      return success();
    }
  }
  Dim d = dims(x)[*axis];
  if (sizes.empty() && d.isStatic()) {
    int64_t chunk = ceilDiv(d.size, n);
    for (int64_t i = 0; i < n; ++i)
      sizes.push_back(std::max<int64_t>(
          0, std::min(chunk, d.size - chunk * i)));
  }
  std::optional<Dims> kx = known(x);
  Value one = constI64({1});
  if (!sizes.empty()) {
    if ((int64_t)sizes.size() != n)
      return err() << "split has " << sizes.size() << " entries for " << n
                   << " outputs";
    int64_t total = 0;
    for (int64_t s : sizes) {
      if (s < 0)
        return err() << "negative split size";
      total += s;
    }
    if (d.isStatic() && total != d.size)
      return err() << "split sizes sum to " << total << ", not " << d.size;
    int64_t start = 0;
    for (int64_t i = 0; i < n; ++i) {
      Dims o = dims(x);
      o[*axis] = Dim(sizes[i]);
      Value res = mk<SliceOp>(o, elt(x), x, constI64({start}),
                              constI64({start + sizes[i]}), one,
                              ArrayRef<int64_t>{*axis});
      if (kx && r == 1)
        res = setKnown(res, Dims(kx->begin() + start,
                                 kx->begin() + start + sizes[i]));
      out(i, res);
      start += sizes[i];
    }
    return success();
  }
  // Equal split of a dynamic dim: chunk = ceil(dim / n) at run time.
  Value dimV = dimOf(x, *axis);
  auto i64x1 = RankedTensorType::get({1}, b.getI64Type());
  Value chunk = DivOp::create(
                    b, loc, i64x1,
                    AddOp::create(b, loc, i64x1, dimV, constI64({n - 1})),
                    constI64({n}))
                    .getResult();
  for (int64_t i = 0; i < n; ++i) {
    Value start = MulOp::create(b, loc, i64x1, chunk, constI64({i}));
    Value end = i == n - 1 ? dimV
                           : MulOp::create(b, loc, i64x1, chunk,
                                           constI64({i + 1}))
                                 .getResult();
    Dims o = dims(x);
    o[*axis] = Dim();
    out(i, mk<SliceOp>(o, elt(x), x, start, end, one,
                       ArrayRef<int64_t>{*axis}));
  }
  return success();
}

LogicalResult Importer::importSlice() {
  Value x = in(0);
  if (!x)
    return err() << "expects an input";
  int64_t r = rank(x);
  Value startsV, endsV, stepsV;
  SmallVector<int64_t> axes;
  if (opset < 10) {
    std::optional<SmallVector<int64_t>> s = aInts("starts"), e = aInts("ends");
    if (!s || !e || s->size() != e->size())
      return err() << "needs 'starts' and 'ends' of equal length";
    axes = aInts("axes").value_or(
        llvm::to_vector(llvm::seq<int64_t>(0, s->size())));
    startsV = constI64(*s);
    endsV = constI64(*e);
    stepsV = constI64(SmallVector<int64_t>(s->size(), 1));
  } else {
    if (!in(1) || !in(2))
      return err() << "needs starts and ends inputs";
    startsV = toI64(in(1));
    endsV = toI64(in(2));
    if (rank(startsV) != 1 || ShapedType::isDynamic(tt(startsV).getDimSize(0)))
      return err() << "starts must be 1-D with a static length";
    int64_t n = tt(startsV).getDimSize(0);
    if (has(3)) {
      FailureOr<SmallVector<int64_t>> a = constInts(in(3), "axes");
      if (::mlir::failed(a))
        return failure();
      axes = *a;
    } else {
      axes = llvm::to_vector(llvm::seq<int64_t>(0, n));
    }
    stepsV = has(4) ? toI64(in(4)) : constI64(SmallVector<int64_t>(n, 1));
  }
  FailureOr<SmallVector<int64_t>> na = normAxes(axes, r, false);
  if (::mlir::failed(na))
    return failure();
  int64_t n = na->size();
  for (Value v : {startsV, endsV, stepsV})
    if (rank(v) != 1 || tt(v).getDimSize(0) != n)
      return err() << "starts, ends and steps need one entry per axis";
  if (n == 0) {
    out(0, x);
    return success();
  }
  std::optional<Dims> ks = known(startsV), ke = known(endsV),
                      kp = known(stepsV);
  Dims o = dims(x);
  Dims in = o;
  constexpr int64_t kBig = std::numeric_limits<int32_t>::max();
  for (int64_t j = 0; j < n; ++j) {
    int64_t a = (*na)[j];
    std::optional<int64_t> st, en, sp;
    if (ks && (*ks)[j].isStatic()) st = (*ks)[j].size;
    if (ke && (*ke)[j].isStatic()) en = (*ke)[j].size;
    if (kp && (*kp)[j].isStatic()) sp = (*kp)[j].size;
    if (sp && *sp == 0)
      return err() << "slice step must be non-zero";
    if (st && en && sp && in[a].isStatic()) {
      int64_t s0 = *st, e0 = *en;
      o[a] = Dim(sliceBounds(in[a].size, s0, e0, *sp));
    } else if (st && en && sp &&
               ((*sp == 1 && *st == 0 && *en >= kBig) ||
                (*sp == -1 && *st == -1 && *en <= -kBig))) {
      o[a] = in[a];
    } else {
      o[a] = Dim();
    }
  }
  Value res = mk<SliceOp>(o, elt(x), x, startsV, endsV, stepsV, *na);
  if (isUns(x))
    unsignedVals.insert(res);
  std::optional<Dims> kx = known(x);
  if (kx && r == 1 && ks && ke && kp && allInts(*ks) && allInts(*ke) &&
      allInts(*kp)) {
    int64_t s0 = (*ks)[0].size, e0 = (*ke)[0].size, sp = (*kp)[0].size;
    int64_t len = sliceBounds(kx->size(), s0, e0, sp);
    Dims k;
    for (int64_t i = 0; i < len; ++i)
      k.push_back((*kx)[s0 + i * sp]);
    res = setKnown(res, k);
  }
  out(0, res);
  return success();
}

LogicalResult Importer::importGather() {
  Value data = in(0), idx = in(1);
  if (!data || !idx)
    return err() << "expects two inputs";
  if (!(elt(idx).isInteger(32) || elt(idx).isInteger(64)) || isUns(idx))
    return err() << "indices must be int32 or int64";
  int64_t r = rank(data);
  if (r == 0)
    return err() << "data must have rank >= 1";
  FailureOr<int64_t> axis = normAxis(aInt("axis", 0), r);
  if (::mlir::failed(axis))
    return failure();
  Dims dd = dims(data), o;
  o.append(dd.begin(), dd.begin() + *axis);
  Dims di = dims(idx);
  o.append(di.begin(), di.end());
  o.append(dd.begin() + *axis + 1, dd.end());
  Value res = mk<GatherOp>(o, elt(data), data, idx, (uint64_t)*axis);
  if (isUns(data))
    unsignedVals.insert(res);
  std::optional<Dims> kd = known(data);
  std::optional<SmallVector<int64_t>> ki = knownInts(idx);
  if (kd && ki && r == 1 && rank(idx) <= 1) {
    Dims k;
    int64_t len = kd->size();
    for (int64_t i : *ki) {
      if (i < 0)
        i += len;
      if (i < 0 || i >= len)
        return err() << "index " << i << " out of range for length " << len;
      k.push_back((*kd)[i]);
    }
    res = setKnown(res, k);
  }
  out(0, res);
  return success();
}

LogicalResult Importer::importExpand() {
  Value x = in(0), s = in(1);
  if (!x || !s)
    return err() << "expects two inputs";
  if (rank(s) != 1 || !elt(s).isInteger(64) ||
      ShapedType::isDynamic(tt(s).getDimSize(0)))
    return err() << "the shape input must be a 1-D int64 tensor of static "
                    "length";
  std::optional<Dims> k = known(s);
  if (!k)
    k = Dims(tt(s).getDimSize(0), Dim());
  Value r = expandTo(x, s, *k);
  if (!r)
    return failure();
  out(0, r);
  return success();
}

LogicalResult Importer::importTile() {
  Value x = in(0);
  if (!x || !in(1))
    return err() << "expects two inputs";
  int64_t r = rank(x);
  Value repsV = toI64(in(1));
  if (rank(repsV) != 1 || tt(repsV).getDimSize(0) != r)
    return err() << "repeats must be 1-D with " << r << " entries";
  std::optional<Dims> kr = known(repsV);
  if (!kr)
    kr = Dims(r, Dim());
  if (!allInts(*kr)) {
    // Repeats known only at run time: the same expand + reshape scheme with
    // run-time sizes.
    SmallVector<TDim> t1, t2, t3;
    for (int64_t i = 0; i < r; ++i) {
      Dim rd = (*kr)[i];
      TDim rep = rd.isStatic() ? tdimConst(rd.size)
                               : TDim{Dim(), slice1D(repsV, i, i + 1)};
      t1.append({tdimConst(1), tdimOf(x, i)});
      t2.append({rep, tdimConst(1)});
      t3.push_back(tdimMul(rep, tdimOf(x, i)));
    }
    Dims d2;
    for (const TDim &t : t2)
      d2.push_back(t.d);
    Value e = expandTo(reshapeT(x, t1), shapeFrom(t2), d2);
    if (!e)
      return failure();
    out(0, reshapeT(e, t3));
    return success();
  }
  std::optional<SmallVector<int64_t>> reps = knownInts(repsV);
  if (llvm::any_of(*reps, [](int64_t v) { return v < 0; }))
    return err() << "repeats must be non-negative";
  if (llvm::all_of(*reps, [](int64_t v) { return v == 1; })) {
    out(0, x);
    return success();
  }
  // [d0, d1..] -> [1, d0, 1, d1..] -> expand [r0, d0, r1, d1..] -> reshape.
  SmallVector<TDim> t1, t3;
  SmallVector<int64_t> shape2;
  Dims dims2;
  for (int64_t i = 0; i < r; ++i) {
    t1.push_back(tdimConst(1));
    t1.push_back(tdimOf(x, i));
    shape2.append({(*reps)[i], 1});
    dims2.append({Dim((*reps)[i]), Dim(1)});
    t3.push_back(tdimMul(tdimConst((*reps)[i]), tdimOf(x, i)));
  }
  Value a = reshapeT(x, t1);
  Value e = expandTo(a, constI64(shape2), dims2);
  if (!e)
    return failure();
  out(0, reshapeT(e, t3));
  return success();
}

LogicalResult Importer::importPad() {
  Value x = in(0);
  if (!x)
    return err() << "expects an input";
  std::string modeStr = aStr("mode", "constant");
  PadMode mode;
  if (modeStr == "constant")
    mode = PadMode::Constant;
  else if (modeStr == "reflect")
    mode = PadMode::Reflect;
  else if (modeStr == "edge")
    mode = PadMode::Edge;
  else
    return err() << "unsupported mode '" << modeStr << "'";
  int64_t r = rank(x);
  Value padsV, valueV;
  if (opset < 11) {
    std::optional<SmallVector<int64_t>> p = aInts("pads");
    if (!p)
      p = aInts("paddings");
    if (!p)
      return err() << "missing attribute 'pads'";
    padsV = constI64(*p);
    valueV = scalarLike(x, aFloat("value", 0.0f));
  } else {
    if (!in(1))
      return err() << "missing pads input";
    padsV = toI64(in(1));
    if (Value v = in(2)) {
      if (!maybeScalar(v))
        return err() << "constant_value must be a scalar";
      if (rank(v) != 0)
        v = reshapeToScalar(v);
      valueV = convert(v, elt(x), isUns(v), isUns(x));
    } else {
      valueV = scalarLike(x, 0);
    }
    if (has(3)) {
      FailureOr<SmallVector<int64_t>> axes = constInts(in(3), "axes");
      if (::mlir::failed(axes))
        return failure();
      FailureOr<SmallVector<int64_t>> na = normAxes(*axes, r, false);
      if (::mlir::failed(na))
        return failure();
      int64_t na_ = na->size();
      if (tt(padsV).getDimSize(0) != 2 * na_)
        return err() << "pads needs " << 2 * na_ << " entries";
      SmallVector<Value> parts;
      for (int64_t side = 0; side < 2; ++side)
        for (int64_t i = 0; i < r; ++i) {
          auto it = llvm::find(*na, i);
          if (it == na->end())
            parts.push_back(constI64({0}));
          else {
            int64_t j = (it - na->begin()) + side * na_;
            parts.push_back(slice1D(padsV, j, j + 1));
          }
        }
      padsV = concatI64(parts);
    }
  }
  if (rank(padsV) != 1 || tt(padsV).getDimSize(0) != 2 * r)
    return err() << "pads needs " << 2 * r << " entries";
  Dims o = dims(x);
  std::optional<Dims> kp = known(padsV);
  for (int64_t i = 0; i < r; ++i) {
    if (!kp || !(*kp)[i].isStatic() || !(*kp)[i + r].isStatic()) {
      o[i] = Dim();
      continue;
    }
    int64_t lo = (*kp)[i].size, hi = (*kp)[i + r].size;
    if (lo < 0 || hi < 0)
      return err() << "negative pads are not supported";
    if (lo == 0 && hi == 0)
      continue;
    o[i] = o[i].isStatic() ? Dim(o[i].size + lo + hi) : Dim();
  }
  Value res = mk<PadOp>(o, elt(x), mode, x, padsV, valueV);
  out(0, res);
  return success();
}

LogicalResult Importer::importConstantOfShape() {
  Value s = in(0);
  if (!s)
    return err() << "expects an input";
  if (rank(s) != 1 || ShapedType::isDynamic(tt(s).getDimSize(0)))
    return err() << "the shape input must be 1-D with a static length";
  s = toI64(s);
  Attribute splat = FloatAttr::get(b.getF32Type(), 0.0);
  Type e = b.getF32Type();
  bool uns = false;
  if (const onnx::AttributeProto *a = attr("value")) {
    if (a->type() != onnx::AttributeProto_AttributeType_TENSOR)
      return err() << "attribute 'value' must be a tensor";
    FailureOr<Value> c = importTensor(a->t(), "attribute 'value'");
    if (::mlir::failed(c))
      return failure();
    auto cst = c->getDefiningOp<ConstantOp>();
    auto dense = dyn_cast<DenseElementsAttr>(cst.getValue());
    if (!dense || dense.getNumElements() != 1)
      return err() << "attribute 'value' must have one element";
    uns = isUns(*c);
    e = dense.getElementType();
    splat = dense.getSplatValue<Attribute>();
    eraseOp(cst);
  }
  std::optional<Dims> k = known(s);
  Dims o = k ? *k : Dims(tt(s).getDimSize(0), Dim());
  for (Dim &d : o)
    if (d.isStatic() && d.size < 0)
      return err() << "negative dim " << d.size;
  RankedTensorType type = typeFor(o, e);
  Value res;
  if (type.hasStaticShape()) {
    res = constDense(DenseElementsAttr::get(type, splat));
  } else {
    Value scalar =
        constDense(DenseElementsAttr::get(RankedTensorType::get({}, e), splat));
    res = expandTo(scalar, s, o);
  }
  if (uns)
    unsignedVals.insert(res);
  out(0, res);
  return success();
}

/// The value of a 0-d or 1-element constant as double.
static std::optional<double> scalarConstant(Value v) {
  auto c = v.getDefiningOp<ConstantOp>();
  if (!c)
    return std::nullopt;
  auto d = dyn_cast<DenseElementsAttr>(c.getValue());
  if (!d || d.getNumElements() != 1)
    return std::nullopt;
  if (isa<FloatType>(d.getElementType()))
    return (*d.getValues<APFloat>().begin()).convertToDouble();
  return (double)(*d.getValues<APInt>().begin()).getSExtValue();
}

LogicalResult Importer::importRange() {
  Value s = in(0), l = in(1), d = in(2);
  if (!s || !l || !d)
    return err() << "expects three inputs";
  if (::mlir::failed(sameElt(s, l)) || ::mlir::failed(sameElt(s, d)))
    return failure();
  for (Value *v : {&s, &l, &d}) {
    if (!maybeScalar(*v))
      return err() << "start, limit and delta must be scalars";
    if (rank(*v) != 0)
      *v = reshapeToScalar(*v);
  }
  Dim len;
  std::optional<double> cs = scalarConstant(s), cl = scalarConstant(l),
                        cd = scalarConstant(d);
  if (cs && cl && cd) {
    if (*cd == 0)
      return err() << "delta must be non-zero";
    len = Dim(std::max<int64_t>(0, (int64_t)std::ceil((*cl - *cs) / *cd)));
  }
  Value res = mk<RangeOp>(Dims{len}, elt(s), s, l, d);
  if (len.isStatic() && isa<IntegerType>(elt(s)) && len.size <= kMaxKnown) {
    Dims k;
    for (int64_t i = 0; i < len.size; ++i)
      k.push_back(Dim((int64_t)*cs + i * (int64_t)*cd));
    res = setKnown(res, k);
  }
  out(0, res);
  return success();
}

//===----------------------------------------------------------------------===//
// Composite ops decomposed in the frontend (masks from disc.range)
//===----------------------------------------------------------------------===//

/// 0-d i64 tensor holding dim `i` of `x`.
Value Importer::dimScalar(Value x, int64_t i) {
  TDim t = tdimOf(x, i);
  if (t.d.isStatic())
    return constI64Scalar(t.d.size);
  return reshapeToScalar(t.v);
}

/// i64 iota over dim `axis` of `x`, reshaped to rank `r` with the iota at
/// position `pos` and 1 elsewhere.
Value Importer::iotaAlong(Value x, int64_t axis, int64_t r, int64_t pos) {
  Dim d = dims(x)[axis];
  Value io = mk<RangeOp>(Dims{d}, b.getI64Type(), constI64Scalar(0),
                         dimScalar(x, axis), constI64Scalar(1));
  SmallVector<TDim> t(r, tdimConst(1));
  t[pos] = tdimOf(io, 0);
  return reshapeT(io, t);
}

/// Inserts a size-1 dim at `pos`.
Value Importer::unsqueezeAt(Value x, int64_t pos) {
  SmallVector<TDim> t;
  for (int64_t i = 0; i < rank(x); ++i) {
    if (i == pos)
      t.push_back(tdimConst(1));
    t.push_back(tdimOf(x, i));
  }
  if (pos == rank(x))
    t.push_back(tdimConst(1));
  return reshapeT(x, t);
}

LogicalResult Importer::importTrilu() {
  Value x = in(0);
  if (!x)
    return err() << "expects an input";
  int64_t r = rank(x);
  if (r < 2)
    return err() << "input must have rank >= 2";
  Value k = has(1) ? in(1) : constI64Scalar(0);
  if (!maybeScalar(k))
    return err() << "k must be a scalar";
  if (rank(k) != 0)
    k = reshapeToScalar(k);
  k = toI64(k);
  Value row = iotaAlong(x, r - 2, 2, 0), col = iotaAlong(x, r - 1, 2, 1);
  Value diff = binary<SubOp>(col, row);
  bool upper = aInt("upper", 1) != 0;
  Value mask =
      compare(upper ? CompareDirection::GE : CompareDirection::LE, diff, k);
  Value y = select(mask, x, scalarLike(x, 0));
  if (!y)
    return failure();
  out(0, y);
  return success();
}

LogicalResult Importer::importShrink() {
  Value x = in(0);
  if (!x)
    return err() << "expects an input";
  if (::mlir::failed(rejectUnsigned(x)) || elt(x).isInteger(1))
    return err() << "expects a signed numeric input";
  double lambd = aFloat("lambd", 0.5f), bias = aFloat("bias", 0.0f);
  Value lo = compare(CompareDirection::LT, x, scalarLike(x, -lambd));
  Value hi = compare(CompareDirection::GT, x, scalarLike(x, lambd));
  Value y = select(
      lo, binary<AddOp>(x, scalarLike(x, bias)),
      select(hi, binary<SubOp>(x, scalarLike(x, bias)), scalarLike(x, 0)));
  if (!y)
    return failure();
  out(0, y);
  return success();
}

LogicalResult Importer::importEyeLike() {
  Value x = in(0);
  if (!x)
    return err() << "expects an input";
  if (rank(x) != 2)
    return err() << "input must have rank 2";
  Type e = elt(x);
  bool uns = isUns(x);
  if (attr("dtype")) {
    e = convertElementType(&ctx, (int32_t)aInt("dtype", 1), uns);
    if (!e)
      return err() << "unsupported dtype " << aInt("dtype", 1);
  }
  int64_t k = aInt("k", 0);
  Value row = iotaAlong(x, 0, 2, 0), col = iotaAlong(x, 1, 2, 1);
  Value mask =
      compare(CompareDirection::EQ, binary<SubOp>(col, row), constI64Scalar(k));
  Value y = select(mask, constScalar(e, 1), constScalar(e, 0));
  if (!y)
    return failure();
  if (uns)
    unsignedVals.insert(y);
  out(0, y);
  return success();
}

LogicalResult Importer::importHardmax() {
  Value x = in(0);
  if (!x)
    return err() << "expects an input";
  if (::mlir::failed(rejectUnsigned(x)) || elt(x).isInteger(1))
    return err() << "expects a signed numeric input";
  int64_t r = rank(x);
  if (r == 0)
    return err() << "input must have rank >= 1";
  FailureOr<int64_t> axis = normAxis(aInt("axis", opset < 13 ? 1 : -1), r);
  if (::mlir::failed(axis))
    return failure();
  Value v = x;
  int64_t ax = *axis;
  if (opset < 13) { // coerced to 2-D [prod(:axis), prod(axis:)]
    TDim a = tdimConst(1), c = tdimConst(1);
    for (int64_t i = 0; i < r; ++i)
      (i < ax ? a : c) = tdimMul(i < ax ? a : c, tdimOf(x, i));
    v = reshapeT(x, {a, c});
    ax = 1;
  }
  int64_t vr = rank(v);
  Dims vd = dims(v), o;
  for (int64_t i = 0; i < vr; ++i)
    o.push_back(i == ax ? Dim(1) : vd[i]);
  Value am = mk<ArgReduceOp>(o, b.getI64Type(), v, (uint64_t)ax, true,
                             /*keep_dims=*/true, /*select_last_index=*/false);
  Value mask = compare(CompareDirection::EQ, iotaAlong(v, ax, vr, ax), am);
  Value y = select(mask, scalarLike(v, 1), scalarLike(v, 0));
  if (!y)
    return failure();
  if (opset < 13)
    y = mk<DynamicReshapeOp>(dims(x), elt(x), y, shapeOf(x), true);
  out(0, y);
  return success();
}

LogicalResult Importer::importOneHot() {
  Value idx = in(0), depth = in(1), vals = in(2);
  if (!idx || !depth || !vals)
    return err() << "expects indices, depth and values";
  if (!maybeScalar(depth))
    return err() << "depth must be a scalar";
  if (rank(vals) != 1 || (!tt(vals).isDynamicDim(0) && tt(vals).getDimSize(0) != 2))
    return err() << "values must be a 2-element vector";
  int64_t r = rank(idx) + 1;
  FailureOr<int64_t> axis = normAxis(aInt("axis", -1), r);
  if (::mlir::failed(axis))
    return failure();
  if (rank(depth) != 0)
    depth = reshapeToScalar(depth);
  if (isFloat(depth))
    depth = unary<FloorOp>(depth);
  FailureOr<Value> di = widen(depth);
  if (::mlir::failed(di))
    return failure();
  depth = toI64(*di);
  FailureOr<Value> ii = widen(idx);
  if (::mlir::failed(ii))
    return failure();
  Value ix = *ii;
  if (isFloat(ix))
    ix = unary<FloorOp>(ix);
  ix = toI64(ix);
  // Negative indices count from the end.
  ix = select(compare(CompareDirection::LT, ix, constI64Scalar(0)),
              binary<AddOp>(ix, depth), ix);
  Dim dd;
  if (std::optional<SmallVector<int64_t>> kd = knownInts(depth))
    dd = Dim((*kd)[0]);
  Value io = mk<RangeOp>(Dims{dd}, b.getI64Type(), constI64Scalar(0), depth,
                         constI64Scalar(1));
  SmallVector<TDim> t(r, tdimConst(1));
  t[*axis] = tdimOf(io, 0);
  io = reshapeT(io, t);
  Value mask = compare(CompareDirection::EQ, unsqueezeAt(ix, *axis), io);
  Value off = reshapeToScalar(slice1D(vals, 0, 1));
  Value on = reshapeToScalar(slice1D(vals, 1, 2));
  Value y = select(mask, on, off);
  if (!y)
    return failure();
  out(0, y);
  return success();
}

/// Depth/space rearrangements: reshape, transpose, reshape.
LogicalResult Importer::importDepthSpace(bool toSpace) {
  Value x = in(0);
  if (!x)
    return err() << "expects an input";
  if (rank(x) != 4)
    return err() << "input must have rank 4";
  int64_t bs = aInt("blocksize", 0);
  if (bs <= 0)
    return err() << "blocksize must be positive";
  TDim n = tdimOf(x, 0), c = tdimOf(x, 1), h = tdimOf(x, 2), w = tdimOf(x, 3);
  TDim bt = tdimConst(bs);
  auto divBy = [&](TDim d, int64_t f) -> TDim {
    if (d.d.isStatic())
      return tdimConst(d.d.size / f);
    Value q = binary<DivOp>(d.v, constI64({f}));
    return {Dim(), q};
  };
  Value y;
  if (toSpace) {
    bool crd = aStr("mode", "DCR") == "CRD";
    TDim cq = divBy(c, bs * bs);
    SmallVector<TDim> s1 = crd ? SmallVector<TDim>{n, cq, bt, bt, h, w}
                               : SmallVector<TDim>{n, bt, bt, cq, h, w};
    SmallVector<int64_t> perm = crd ? SmallVector<int64_t>{0, 1, 4, 2, 5, 3}
                                    : SmallVector<int64_t>{0, 3, 4, 1, 5, 2};
    Value t = transpose(reshapeT(x, s1), perm);
    y = reshapeT(t, {n, cq, tdimMul(h, bt), tdimMul(w, bt)});
  } else {
    TDim hq = divBy(h, bs), wq = divBy(w, bs);
    Value t =
        transpose(reshapeT(x, {n, c, hq, bt, wq, bt}), {0, 3, 5, 1, 2, 4});
    y = reshapeT(t, {n, tdimMul(c, tdimConst(bs * bs)), hq, wq});
  }
  if (!y)
    return failure();
  out(0, y);
  return success();
}

/// NegativeLogLikelihoodLoss on `x` [N, C, d...] (log-probabilities) with
/// `target` [N, d...]: the picked entry is selected with a one-hot mask
/// (target == iota over C), so an ignored target outside [0, C) is harmless.
FailureOr<Value> Importer::nllLoss(Value x, Value target, Value weight) {
  int64_t r = rank(x);
  if (r < 2) {
    err() << "input must have rank >= 2";
    return failure();
  }
  if (rank(target) != r - 1) {
    err() << "target must have rank " << r - 1;
    return failure();
  }
  if (!isa<IntegerType>(elt(target)) || elt(target).isInteger(1)) {
    err() << "target must be an integer tensor";
    return failure();
  }
  std::string red = aStr("reduction", "mean");
  if (red != "none" && red != "sum" && red != "mean") {
    err() << "unsupported reduction '" << red << "'";
    return failure();
  }
  FailureOr<Value> tw = widen(target);
  if (::mlir::failed(tw))
    return failure();
  Value ti = toI64(*tw);
  Value t = unsqueezeAt(ti, 1); // [N, 1, d...]
  Value onehot = compare(CompareDirection::EQ, t, iotaAlong(x, 1, r, 1));
  Value zero = scalarLike(x, 0);
  Value picked = reduce(ReduceKind::Sum, select(onehot, x, zero), {1}, false);
  Value w;
  if (weight) {
    if (rank(weight) != 1 || elt(weight) != elt(x))
      return err() << "weight must be a 1-D tensor of the input type",
             failure();
    SmallVector<TDim> ws(r, tdimConst(1));
    ws[1] = tdimOf(weight, 0);
    w = reduce(ReduceKind::Sum, select(onehot, reshapeT(weight, ws), zero), {1},
               false);
  } else {
    w = reduce(ReduceKind::Sum, select(onehot, scalarLike(x, 1), zero), {1},
               false);
  }
  if (attr("ignore_index")) {
    Value keep = compare(CompareDirection::NE, ti,
                         constI64Scalar(aInt("ignore_index", 0)));
    w = select(keep, w, zero);
  }
  Value loss = unary<NegOp>(binary<MulOp>(picked, w));
  if (!loss)
    return failure();
  if (red == "none")
    return loss;
  SmallVector<int64_t> all = llvm::to_vector(llvm::seq<int64_t>(0, r - 1));
  Value s = reduce(ReduceKind::Sum, loss, all, false);
  if (red == "sum")
    return s;
  return binary<DivOp>(s, reduce(ReduceKind::Sum, w, all, false));
}

LogicalResult Importer::importNllLoss() {
  Value x = in(0), target = in(1);
  if (!x || !target)
    return err() << "expects input and target";
  if (::mlir::failed(requireFloat(x)))
    return failure();
  FailureOr<Value> l = nllLoss(x, target, in(2));
  if (::mlir::failed(l) || !*l)
    return failure();
  out(0, *l);
  return success();
}

LogicalResult Importer::importSoftmaxCrossEntropy() {
  Value x = in(0), target = in(1);
  if (!x || !target)
    return err() << "expects scores and labels";
  if (::mlir::failed(requireFloat(x)))
    return failure();
  if (rank(x) < 2)
    return err() << "scores must have rank >= 2";
  Value m = reduce(ReduceKind::Max, x, {1}, true);
  Value shifted = binary<SubOp>(x, m);
  Value logp = binary<SubOp>(
      shifted,
      unary<LogOp>(reduce(ReduceKind::Sum, unary<ExpOp>(shifted), {1}, true)));
  if (!logp)
    return failure();
  FailureOr<Value> l = nllLoss(logp, target, in(2));
  if (::mlir::failed(l) || !*l)
    return failure();
  out(0, *l);
  out(1, logp);
  return success();
}

LogicalResult Importer::importConstant() {
  if (const onnx::AttributeProto *a = attr("value")) {
    if (a->type() != onnx::AttributeProto_AttributeType_TENSOR)
      return err() << "attribute 'value' must be a tensor";
    FailureOr<Value> c = importTensor(a->t(), "attribute 'value'");
    if (::mlir::failed(c))
      return failure();
    out(0, *c);
    return success();
  }
  if (attr("value_float")) {
    out(0, constScalar(b.getF32Type(), aFloat("value_float", 0)));
    return success();
  }
  if (attr("value_int")) {
    out(0, constI64Scalar(aInt("value_int", 0)));
    return success();
  }
  if (attr("value_ints")) {
    out(0, constI64(aInts("value_ints").value_or(SmallVector<int64_t>{})));
    return success();
  }
  if (attr("value_floats")) {
    SmallVector<float> f = aFloats("value_floats").value_or(SmallVector<float>{});
    auto type = RankedTensorType::get({(int64_t)f.size()}, b.getF32Type());
    out(0, constDense(DenseElementsAttr::get(type, ArrayRef<float>(f))));
    return success();
  }
  return err() << "only value, value_float(s) and value_int(s) are supported "
                  "(not sparse_value or strings)";
}

//===----------------------------------------------------------------------===//
// Recurrent layers (RNN, GRU, LSTM)
//===----------------------------------------------------------------------===//

FailureOr<Importer::Activation>
Importer::parseActivation(StringRef name, ArrayRef<float> alphas,
                          ArrayRef<float> betas, size_t &ai, size_t &bi) {
  // Default alpha/beta per ONNX operator; -1 marks "takes none".
  static const struct {
    const char *name;
    float alpha, beta;
    bool hasAlpha, hasBeta;
  } table[] = {{"Tanh", 0, 0, false, false},
               {"Sigmoid", 0, 0, false, false},
               {"Relu", 0, 0, false, false},
               {"Softsign", 0, 0, false, false},
               {"Softplus", 0, 0, false, false},
               {"Affine", 1.0f, 0.0f, true, true},
               {"LeakyRelu", 0.01f, 0, true, false},
               {"ThresholdedRelu", 1.0f, 0, true, false},
               {"ScaledTanh", 1.0f, 1.0f, true, true},
               {"HardSigmoid", 0.2f, 0.5f, true, true},
               {"Elu", 1.0f, 0, true, false}};
  for (const auto &e : table) {
    if (!name.equals_insensitive(e.name))
      continue;
    Activation a{e.name, e.alpha, e.beta};
    if (e.hasAlpha && ai < alphas.size())
      a.alpha = alphas[ai++];
    if (e.hasBeta && bi < betas.size())
      a.beta = betas[bi++];
    return a;
  }
  err() << "opset " << opset << ": attribute 'activations': unsupported "
        << "activation '" << name << "'";
  return failure();
}

Value Importer::applyActivation(const Activation &a, Value v) {
  auto mul = [&](Value x, float c) {
    return c == 1.0f ? x : binary<MulOp>(x, scalarLike(x, c));
  };
  auto add = [&](Value x, float c) {
    return c == 0.0f ? x : binary<AddOp>(x, scalarLike(x, c));
  };
  Value zero = scalarLike(v, 0);
  StringRef n = a.name;
  if (n == "Tanh")
    return unary<TanhOp>(v);
  if (n == "Sigmoid")
    return unary<LogisticOp>(v);
  if (n == "Relu")
    return binary<MaxOp>(v, zero);
  if (n == "Softsign")
    return binary<DivOp>(v, add(unary<AbsOp>(v), 1.0f));
  if (n == "Softplus") // max(x, 0) + log(1 + exp(-|x|))
    return binary<AddOp>(
        binary<MaxOp>(v, zero),
        unary<LogOp>(add(unary<ExpOp>(unary<NegOp>(unary<AbsOp>(v))), 1.0f)));
  if (n == "Affine")
    return add(mul(v, a.alpha), a.beta);
  if (n == "LeakyRelu")
    return select(compare(CompareDirection::LT, v, zero), mul(v, a.alpha), v);
  if (n == "ThresholdedRelu")
    return select(compare(CompareDirection::GT, v, scalarLike(v, a.alpha)), v,
                  zero);
  if (n == "ScaledTanh")
    return mul(unary<TanhOp>(mul(v, a.beta)), a.alpha);
  if (n == "HardSigmoid")
    return binary<MinOp>(binary<MaxOp>(add(mul(v, a.alpha), a.beta), zero),
                         scalarLike(v, 1));
  assert(n == "Elu");
  return select(compare(CompareDirection::LT, v, zero),
                mul(add(unary<ExpOp>(v), -1.0f), a.alpha), v);
}

Value Importer::sliceStatic(Value x, ArrayRef<int64_t> axes,
                            ArrayRef<int64_t> starts, ArrayRef<int64_t> ends) {
  Dims o = dims(x);
  for (auto [i, a] : llvm::enumerate(axes))
    o[a] = Dim(ends[i] - starts[i]);
  return mk<SliceOp>(o, elt(x), x, constI64(starts), constI64(ends),
                     constI64(SmallVector<int64_t>(axes.size(), 1)), axes);
}

LogicalResult Importer::importRnn(StringRef op) {
  enum Kind {
    Rnn,
    Gru,
    Lstm
  } kind = op == "RNN"   ? Rnn
           : op == "GRU" ? Gru
                         : Lstm;
  int64_t numGates = kind == Rnn ? 1 : kind == Gru ? 3 : 4;
  Value x = in(0), w = in(1), r = in(2);
  if (!x || !w || !r)
    return err() << "expects inputs X, W and R";
  if (::mlir::failed(requireFloat(x)) || ::mlir::failed(sameElt(x, w)) ||
      ::mlir::failed(sameElt(x, r)))
    return failure();
  if (rank(x) != 3 || rank(w) != 3 || rank(r) != 3)
    return err() << "X, W and R must be 3-D";
  Type e = elt(x);

  std::string direction = aStr("direction", "forward");
  int64_t numDir;
  if (direction == "forward" || direction == "reverse")
    numDir = 1;
  else if (direction == "bidirectional")
    numDir = 2;
  else
    return err() << "opset " << opset << ": attribute 'direction': unknown "
                 << "value '" << direction << "'";
  int64_t layout = aInt("layout", 0);
  if (layout != 0 && layout != 1)
    return err() << "opset " << opset << ": attribute 'layout' must be 0 or 1";
  int64_t hidden = aInt("hidden_size", kDyn);
  if (hidden == kDyn)
    hidden = tt(r).getDimSize(2);
  if (hidden == kDyn || hidden <= 0)
    return err() << "opset " << opset
                 << ": attribute 'hidden_size' is required when R's last dim "
                    "is dynamic";
  std::optional<float> clip;
  if (attr("clip"))
    clip = aFloat("clip", 0.0f);
  bool linearBeforeReset = kind == Gru && aInt("linear_before_reset", 0) != 0;
  bool inputForget = kind == Lstm && aInt("input_forget", 0) != 0;

  // Activations: f (RNN); f, g (GRU); f, g, h (LSTM), per direction.
  SmallVector<StringRef> defaults =
      kind == Rnn   ? SmallVector<StringRef>{"Tanh"}
      : kind == Gru ? SmallVector<StringRef>{"Sigmoid", "Tanh"}
                    : SmallVector<StringRef>{"Sigmoid", "Tanh", "Tanh"};
  SmallVector<std::string> actNames;
  if (const onnx::AttributeProto *a = attr("activations"))
    for (const std::string &s : a->strings())
      actNames.push_back(s);
  if (actNames.empty())
    for (int64_t d = 0; d < numDir; ++d)
      for (StringRef s : defaults)
        actNames.push_back(s.str());
  if ((int64_t)actNames.size() != (int64_t)defaults.size() * numDir)
    return err() << "opset " << opset << ": attribute 'activations' needs "
                 << defaults.size() * numDir << " entries, got "
                 << actNames.size();
  SmallVector<float>
      alphas = aFloats("activation_alpha").value_or(SmallVector<float>{}),
      betas = aFloats("activation_beta").value_or(SmallVector<float>{});
  SmallVector<Activation> acts;
  size_t ai = 0, bi = 0;
  for (const std::string &n : actNames) {
    FailureOr<Activation> a = parseActivation(n, alphas, betas, ai, bi);
    if (::mlir::failed(a))
      return failure();
    acts.push_back(*a);
  }

  Value bias = in(3), seqLens = in(4), h0 = in(5);
  Value c0 = kind == Lstm ? in(6) : Value(),
        peep = kind == Lstm ? in(7) : Value();
  for (Value v : {bias, h0, c0, peep})
    if (v && ::mlir::failed(sameElt(x, v)))
      return failure();
  if (seqLens && direction != "forward")
    return err() << "opset " << opset
                 << ": input 'sequence_lens' is only supported with direction "
                    "'forward'";
  if (seqLens && (rank(seqLens) != 1 || !isa<IntegerType>(elt(seqLens))))
    return err() << "sequence_lens must be a 1-D integer tensor";
  for (Value v : {h0, c0})
    if (v && rank(v) != 3)
      return err() << "initial_h/initial_c must be 3-D";
  if (bias && rank(bias) != 2)
    return err() << "B must be 2-D";
  if (peep && rank(peep) != 2)
    return err() << "P must be 2-D";

  if (layout == 1) {
    x = transpose(x, {1, 0, 2});
    if (h0)
      h0 = transpose(h0, {1, 0, 2});
    if (c0)
      c0 = transpose(c0, {1, 0, 2});
  }
  // Everything the loop body needs from outside is built here, so that no
  // cached shape computation ends up inside a loop.
  TDim batch = tdimOf(x, 1), inSize = tdimOf(x, 2), hid = tdimConst(hidden);
  Dims dx = dims(x);
  Dims stateDims = {dx[1], Dim(hidden)};
  Dims yDims = {dx[0], dx[1], Dim(hidden)};
  Value stateShape = shapeFrom({batch, hid});
  Value yShape = shapeFrom({tdimOf(x, 0), batch, hid});
  Value lens;
  if (seqLens)
    lens = reshapeT(toI64(seqLens), {batch, tdimConst(1)});
  bool wantY = wantOut(0);

  Value seqLen = tensor::DimOp::create(b, loc, x, 0).getResult();
  Value zeroIdx = arith::ConstantIndexOp::create(b, loc, 0).getResult();
  Value oneIdx = arith::ConstantIndexOp::create(b, loc, 1).getResult();

  SmallVector<Value> ys, hs, cs;
  for (int64_t d = 0; d < numDir; ++d) {
    bool reverse = direction == "reverse" || d == 1;
    ArrayRef<Activation> act =
        ArrayRef<Activation>(acts).slice(d * defaults.size(), defaults.size());
    // Per-gate weights [H, I] / [H, H] and biases [H].
    SmallVector<Value> wg, rg, wb, rb, pg;
    for (int64_t g = 0; g < numGates; ++g) {
      wg.push_back(reshapeT(
          sliceStatic(w, {0, 1}, {d, g * hidden}, {d + 1, (g + 1) * hidden}),
          {hid, tdimOf(w, 2)}));
      rg.push_back(reshapeT(
          sliceStatic(r, {0, 1}, {d, g * hidden}, {d + 1, (g + 1) * hidden}),
          {hid, hid}));
      if (bias) {
        int64_t wo = g * hidden, ro = (numGates + g) * hidden;
        wb.push_back(reshapeT(
            sliceStatic(bias, {0, 1}, {d, wo}, {d + 1, wo + hidden}), {hid}));
        rb.push_back(reshapeT(
            sliceStatic(bias, {0, 1}, {d, ro}, {d + 1, ro + hidden}), {hid}));
      }
    }
    if (peep)
      for (int64_t g = 0; g < 3; ++g)
        pg.push_back(reshapeT(sliceStatic(peep, {0, 1}, {d, g * hidden},
                                          {d + 1, (g + 1) * hidden}),
                              {hid}));
    auto initState = [&](Value v) -> Value {
      if (!v)
        return expandTo(scalarLike(x, 0), stateShape, stateDims);
      return reshapeT(sliceStatic(v, {0}, {d}, {d + 1}), {batch, hid});
    };
    SmallVector<Value> inits = {initState(h0)};
    if (kind == Lstm)
      inits.push_back(initState(c0));
    if (wantY)
      inits.push_back(expandTo(scalarLike(x, 0), yShape, yDims));
    for (Value v : inits)
      if (!v)
        return failure();

    auto loop = scf::ForOp::create(b, loc, zeroIdx, seqLen, oneIdx, inits);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(loop.getBody());
      ValueRange args = loop.getRegionIterArgs();
      for (auto [arg, init] : llvm::zip(args, inits))
        record(arg, dims(init));
      Value h = args[0], c = kind == Lstm ? args[1] : Value();
      Value y = wantY ? args.back() : Value();

      Value t = loop.getInductionVar();
      if (reverse)
        t = arith::SubIOp::create(
                b, loc,
                arith::SubIOp::create(b, loc, seqLen, oneIdx).getResult(), t)
                .getResult();
      auto vec = [&](Value idx) {
        Value i =
            arith::IndexCastOp::create(b, loc, b.getI64Type(), idx).getResult();
        return tensor::FromElementsOp::create(
                   b, loc, RankedTensorType::get({1}, b.getI64Type()), i)
            .getResult();
      };
      Value tv = vec(t);
      Value tEnd = vec(arith::AddIOp::create(b, loc, t, oneIdx).getResult());
      Value xt = mk<SliceOp>(Dims{Dim(1), dx[1], dx[2]}, e, x, tv, tEnd,
                             constI64({1}), ArrayRef<int64_t>{0});
      xt = reshapeT(xt, {batch, inSize});

      auto dot = [&](Value a, Value wt) {
        return mk<DotGeneralOp>(stateDims, e, a, wt, ArrayRef<int64_t>{},
                                ArrayRef<int64_t>{}, ArrayRef<int64_t>{1},
                                ArrayRef<int64_t>{1});
      };
      auto clipped = [&](Value v) {
        if (!clip)
          return v;
        return binary<MinOp>(binary<MaxOp>(v, scalarLike(v, -*clip)),
                             scalarLike(v, *clip));
      };
      auto addBias = [&](Value v, int64_t g, bool wBias, bool rBias) {
        if (bias && wBias)
          v = binary<AddOp>(v, wb[g]);
        if (bias && rBias)
          v = binary<AddOp>(v, rb[g]);
        return v;
      };
      // Gate pre-activation X_t W_g^T + H R_g^T + Wb_g + Rb_g.
      auto gate = [&](int64_t g) {
        return addBias(binary<AddOp>(dot(xt, wg[g]), dot(h, rg[g])), g, true,
                       true);
      };
      Value one = scalarLike(x, 1);
      Value hNew, cNew;
      if (kind == Rnn) {
        hNew = applyActivation(act[0], clipped(gate(0)));
      } else if (kind == Gru) {
        // Gates z, r, h.
        Value z = applyActivation(act[0], clipped(gate(0)));
        Value rt = applyActivation(act[0], clipped(gate(1)));
        Value pre;
        if (linearBeforeReset)
          pre = binary<AddOp>(
              addBias(dot(xt, wg[2]), 2, true, false),
              binary<MulOp>(rt, addBias(dot(h, rg[2]), 2, false, true)));
        else
          pre = addBias(
              binary<AddOp>(dot(xt, wg[2]), dot(binary<MulOp>(rt, h), rg[2])),
              2, true, true);
        Value hh = applyActivation(act[1], clipped(pre));
        hNew = binary<AddOp>(binary<MulOp>(binary<SubOp>(one, z), hh),
                             binary<MulOp>(z, h));
      } else {
        // Gates i, o, f, c; peepholes i, o, f.
        auto peephole = [&](Value v, int64_t p, Value state) {
          return peep ? binary<AddOp>(v, binary<MulOp>(pg[p], state)) : v;
        };
        Value it = applyActivation(act[0], clipped(peephole(gate(0), 0, c)));
        Value ft =
            inputForget
                ? binary<SubOp>(one, it)
                : applyActivation(act[0], clipped(peephole(gate(2), 2, c)));
        Value ct = applyActivation(act[1], clipped(gate(3)));
        cNew = binary<AddOp>(binary<MulOp>(ft, c), binary<MulOp>(it, ct));
        Value ot = applyActivation(act[0], clipped(peephole(gate(1), 1, cNew)));
        hNew = binary<MulOp>(ot, applyActivation(act[2], cNew));
      }
      Value yt = hNew;
      if (lens) {
        // Steps past a sequence's length keep the state and output zeros.
        Value valid = compare(CompareDirection::LT, tv, lens);
        yt = select(valid, hNew, scalarLike(x, 0));
        hNew = select(valid, hNew, h);
        if (cNew)
          cNew = select(valid, cNew, c);
      }
      SmallVector<Value> next = {hNew};
      if (kind == Lstm)
        next.push_back(cNew);
      if (wantY) {
        auto yType = tt(y);
        SmallVector<OpFoldResult> offsets = {t, b.getIndexAttr(0),
                                             b.getIndexAttr(0)};
        SmallVector<OpFoldResult> sizes = {b.getIndexAttr(1)};
        for (int64_t i = 1; i < 3; ++i)
          sizes.push_back(
              yType.isDynamicDim(i)
                  ? OpFoldResult(
                        tensor::DimOp::create(b, loc, y, i).getResult())
                  : OpFoldResult(b.getIndexAttr(yType.getDimSize(i))));
        SmallVector<OpFoldResult> strides(3, b.getIndexAttr(1));
        auto srcType = RankedTensorType::get(
            {yType.getDimSize(1), yType.getDimSize(2)}, e);
        Value src = yt;
        if (yt.getType() != srcType)
          src = tensor::CastOp::create(b, loc, srcType, yt).getResult();
        next.push_back(record(tensor::InsertSliceOp::create(
                                  b, loc, src, y, offsets, sizes, strides)
                                  .getResult(),
                              dims(y)));
      }
      for (Value v : next)
        if (!v)
          return failure();
      scf::YieldOp::create(b, loc, next);
    }
    // Shapes computed inside the loop must not be reused outside it.
    for (auto it = shapeCache.begin(); it != shapeCache.end();) {
      auto cur = it++;
      Operation *def = cur->second.getDefiningOp();
      if (def && loop->isProperAncestor(def))
        shapeCache.erase(cur);
    }
    ValueRange res = loop.getResults();
    for (auto [v, init] : llvm::zip(res, inits))
      record(v, dims(init));
    if (wantOut(1))
      hs.push_back(unsqueezeAt(res[0], 0));
    if (wantOut(2))
      cs.push_back(unsqueezeAt(res[1], 0));
    if (wantY)
      ys.push_back(unsqueezeAt(res.back(), 1));
  }
  auto join = [&](ArrayRef<Value> parts, int64_t axis) {
    if (parts.size() == 1)
      return parts[0];
    Dims o = dims(parts[0]);
    o[axis] = Dim(2);
    return mk<ConcatenateOp>(o, e, parts, (uint64_t)axis);
  };
  if (wantY) {
    Value y = join(ys, 1);
    out(0, layout == 1 ? transpose(y, {2, 0, 1, 3}) : y);
  }
  if (wantOut(1)) {
    Value yh = join(hs, 0);
    out(1, layout == 1 ? transpose(yh, {1, 0, 2}) : yh);
  }
  if (wantOut(2)) {
    Value yc = join(cs, 0);
    out(2, layout == 1 ? transpose(yc, {1, 0, 2}) : yc);
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Entry point
//===----------------------------------------------------------------------===//

OwningOpRef<ModuleOp> mlir::disc::importOnnxModel(MLIRContext &context,
                                                  llvm::StringRef path,
                                                  const OnnxImportOptions &options) {
  onnx::ModelProto model;
  std::string error;
  Location loc = FileLineColLoc::get(&context, path, 0, 0);
  if (!onnx_checker::loadOnnxModel(path.str(), model, error)) {
    emitError(loc) << error;
    return nullptr;
  }
  Importer importer(context, model, path, options);
  // The op scan runs before the checker so that a model with unsupported ops
  // gets the full list, not the checker's first complaint.
  if (::mlir::failed(importer.scanUnsupported()))
    return nullptr;
  if (!onnx_checker::checkOnnxModel(model, error)) {
    emitError(loc) << error;
    return nullptr;
  }
  return importer.run();
}
