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
#include <map>
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
      "SoftmaxCrossEntropyLoss", "SequenceEmpty", "SequenceConstruct",
      "SequenceInsert", "SequenceErase", "SequenceAt", "SequenceLength",
      "ConcatFromSequence", "SplitToSequence", "Resize", "Upsample",
      "GatherElements", "GatherND", "ScatterElements", "Scatter", "ScatterND",
      "TopK", "GridSample",
      "ConvTranspose", "CumSum", "BitShift",
      "Einsum", "QuantizeLinear", "DequantizeLinear", "DynamicQuantizeLinear",
      "MatMulInteger", "ConvInteger", "QLinearMatMul", "QLinearConv", "LRN",
      "MeanVarianceNormalization", "HannWindow", "HammingWindow",
      "BlackmanWindow", "ReverseSequence", "RNN", "GRU",
      "LSTM"};
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
    if (!x) // The operand already failed (with a diagnostic).
      return nullptr;
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
  FailureOr<Value> reduceSumRuntimeAxes(Value x, Value axesV, bool keep);
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
  FailureOr<Value> sliceRuntimeAxes(Value x, Value axesV, Value startsV,
                                    Value endsV, Value stepsV);
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
  LogicalResult importSequence(StringRef op);
  FailureOr<SmallVector<Value>> inSeq(unsigned i);
  FailureOr<Value> seqIndex(Value pos, int64_t n);
  /// `v < 0 ? v + n : v` on a run-time i64 tensor (negative axes and
  /// positions count from the end).
  Value wrapNegative(Value v, int64_t n) {
    Value neg = compare(CompareDirection::LT, v, constI64({0}));
    return select(neg, binary<AddOp>(v, constI64({n})), v);
  }
  FailureOr<Value> nllLoss(Value x, Value target, Value weight);
  FailureOr<Value> matmul(Value a, Value c);
  FailureOr<Value> conv(Value x, Value w);
  Value addChannelBias(Value x, Value bias, int64_t k);
  LogicalResult importConvTranspose();
  LogicalResult importCumSum();
  LogicalResult importBitShift();
  LogicalResult importEinsum();
  LogicalResult importQuantizeLinear();
  LogicalResult importDequantizeLinear();
  LogicalResult importDynamicQuantizeLinear();
  LogicalResult importMatMulInteger();
  LogicalResult importConvInteger();
  LogicalResult importQLinearMatMul();
  LogicalResult importQLinearConv();
  LogicalResult importLrn();
  LogicalResult importMvn();
  LogicalResult importWindow(StringRef op);
  LogicalResult importReverseSequence();
  FailureOr<Value> maxPoolIndices(Value x, ArrayRef<int64_t> kernel,
                                  ArrayRef<int64_t> strides,
                                  ArrayRef<int64_t> dilations,
                                  ArrayRef<int64_t> pads, ArrayRef<Dim> outDims,
                                  Value &values);
  Value unsignedCompare(CompareDirection dir, Value l, Value r);
  Value uint64MaxMin(bool isMax, Value l, Value r);
  Value uint64Rem(Value a, Value c);
  FailureOr<Value> toI32Centered(Value x, Value zp, int64_t axis);
  Value quantizeFloat(Value y, Type qType, bool qUns);
  Value perAxis(Value v, int64_t r, int64_t axis);
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
  LogicalResult importResize(StringRef op);
  LogicalResult checkIndices(Value idx);
  LogicalResult importGatherElements();
  LogicalResult importGatherNd();
  FailureOr<std::string> scatterReduction();
  LogicalResult importScatterElements();
  LogicalResult importScatterNd();
  LogicalResult importTopK();
  LogicalResult importGridSample();
  std::optional<int64_t> declaredRank(const std::string &name);

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
  /// Sequence values inside the graph: compile-time lists of tensors (the
  /// length is always known; positions may be run-time values).
  llvm::StringMap<SmallVector<Value>> sequences;
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
  // Unsigned values (uint8 zero points >= 128, ...) read zero-extended.
  bool zext = isUns(v);
  Dims out;
  for (const APInt &a : attr.getValues<APInt>())
    out.push_back(Dim(a.getBitWidth() == 1 || zext ? (int64_t)a.getZExtValue()
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
  if (!l || !r) // An operand already failed (with a diagnostic).
    return nullptr;
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
  if (!l || !r) // An operand already failed (with a diagnostic).
    return nullptr;
  FailureOr<Dims> d = broadcastDims({dims(l), dims(r)});
  if (::mlir::failed(d))
    return nullptr;
  return mk<CompareOp>(*d, b.getI1Type(), dir, l, r);
}

Value Importer::select(Value p, Value t, Value f) {
  if (!p || !t || !f) // An operand already failed (with a diagnostic).
    return nullptr;
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
  if (!x) // The operand already failed (with a diagnostic).
    return nullptr;
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
      if (!buf.empty()) // Empty fields have no storage.
        std::memcpy(buf.data(), t.float_data().data(), buf.size());
      break;
    case onnx::TensorProto_DataType_DOUBLE:
      if (countMismatch(t.double_data_size()))
        return failure();
      if (!buf.empty()) // Empty fields have no storage.
        std::memcpy(buf.data(), t.double_data().data(), buf.size());
      break;
    case onnx::TensorProto_DataType_INT64:
      if (countMismatch(t.int64_data_size()))
        return failure();
      if (!buf.empty()) // Empty fields have no storage.
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
  if (llvm::is_contained({"Reshape", "Expand", "Tile", "Squeeze", "Unsqueeze",
                          "Split", "SplitToSequence"},
                         opType) ||
      opType.starts_with("Reduce"))
    return i == 1; // Reduce*: the axes input (ReduceSum 13, all from 18)
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
  // Node name, then op type: run-time check messages name both.
  loc =
      NameLoc::get(StringAttr::get(&ctx, nodeName),
                   NameLoc::get(StringAttr::get(&ctx, n.op_type()), fileLoc()));
  for (int i = 0; i < n.input_size(); ++i)
    if (!n.input(i).empty() && !sequences.count(n.input(i)) && !in(i))
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
    if (n.output(i).empty() || sequences.count(n.output(i)))
      continue;
    auto it = values.find(n.output(i));
    if (it == values.end())
      return err() << "output #" << i << " ('" << n.output(i)
                   << "') is not supported";
    Value v = it->second;
    if (!keepsSign || !isa<IntegerType>(elt(v)) || elt(v).isInteger(1))
      continue;
    for (int j = 0; j < n.input_size(); ++j)
      if (Value iv = sequences.count(n.input(j)) ? Value() : in(j))
        if (isUns(iv) && elt(iv) == elt(v))
          unsignedVals.insert(v);
  }
  return success();
}

LogicalResult Importer::dispatch(StringRef op) {
  if (op.starts_with("Sequence") || op == "ConcatFromSequence" ||
      op == "SplitToSequence")
    return importSequence(op);
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
  if (op == "Resize" || op == "Upsample")
    return importResize(op);
  if (op == "GatherElements")
    return importGatherElements();
  if (op == "GatherND")
    return importGatherNd();
  if (op == "ScatterElements" || op == "Scatter")
    return importScatterElements();
  if (op == "ScatterND")
    return importScatterNd();
  if (op == "TopK")
    return importTopK();
  if (op == "GridSample")
    return importGridSample();
  if (op == "ConvTranspose")
    return importConvTranspose();
  if (op == "CumSum")
    return importCumSum();
  if (op == "BitShift")
    return importBitShift();
  if (op == "Einsum")
    return importEinsum();
  if (op == "QuantizeLinear")
    return importQuantizeLinear();
  if (op == "DequantizeLinear")
    return importDequantizeLinear();
  if (op == "DynamicQuantizeLinear")
    return importDynamicQuantizeLinear();
  if (op == "MatMulInteger")
    return importMatMulInteger();
  if (op == "ConvInteger")
    return importConvInteger();
  if (op == "QLinearMatMul")
    return importQLinearMatMul();
  if (op == "QLinearConv")
    return importQLinearConv();
  if (op == "LRN")
    return importLrn();
  if (op == "MeanVarianceNormalization")
    return importMvn();
  if (op == "HannWindow" || op == "HammingWindow" || op == "BlackmanWindow")
    return importWindow(op);
  if (op == "ReverseSequence")
    return importReverseSequence();
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
  // uint64 cannot be widened: compare with the sign bit flipped instead.
  bool u64 = wide && elt(acc).getIntOrFloatBitWidth() >= 64;
  if (u64)
    wide = false;
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
    if (u64)
      acc = uint64MaxMin(op == "Max", acc, v);
    else if (op == "Max")
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
  if (wide && origType.getIntOrFloatBitWidth() >= 64) {
    // uint64: fmod does not matter for unsigned operands.
    Value r = uint64Rem(a, c);
    if (!r)
      return failure();
    out(0, r);
    return success();
  }
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

static std::optional<SmallVector<double>> constFloats(Value v);

LogicalResult Importer::importDropout() {
  Value x = in(0);
  if (!x)
    return err() << "expects an input";
  if (opset >= 12 && has(2)) {
    std::optional<SmallVector<int64_t>> training = knownInts(in(2));
    if (!training || training->size() != 1)
      return err() << "training_mode must be a constant";
    // Training mode with a constant ratio 0 drops nothing: the identity
    // (exporters emit it for drop rates of 0). The default ratio is 0.5.
    if ((*training)[0] != 0) {
      std::optional<SmallVector<double>> ratio =
          has(1) ? constFloats(in(1)) : SmallVector<double>{0.5};
      if (!ratio || ratio->size() != 1 || (*ratio)[0] != 0.0)
        return err() << "training mode is not supported (inference only) "
                        "unless the ratio is a constant 0";
    }
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
  FailureOr<Value> r = matmul(a, c);
  if (::mlir::failed(r))
    return failure();
  out(0, *r);
  return success();
}

/// NumPy matmul of `a` and `c` (same element type).
FailureOr<Value> Importer::matmul(Value a, Value c) {
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
  if (ra == 1 && rc == 1)
    return mk<DotGeneralOp>(Dims{}, e, a, c, ArrayRef<int64_t>{},
                            ArrayRef<int64_t>{}, ArrayRef<int64_t>{0},
                            ArrayRef<int64_t>{0});
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
  return res;
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
  FailureOr<Value> res = conv(x, w);
  if (::mlir::failed(res))
    return failure();
  if (bias) {
    int64_t k = rank(x) - 2;
    if (rank(bias) != 1 || ::mlir::failed(sameElt(x, bias)))
      return err() << "bias must be 1-D of the input element type";
    *res = addChannelBias(*res, bias, k);
    if (!*res)
      return failure();
  }
  out(0, *res);
  return success();
}

/// `bias` [C] reshaped to [C, 1..] (k ones) and added to `x` [N, C, ...].
Value Importer::addChannelBias(Value x, Value bias, int64_t k) {
  SmallVector<TDim> t = {tdimOf(bias, 0)};
  t.append(k, tdimConst(1));
  return binary<AddOp>(x, reshapeT(bias, t));
}

/// Conv of `x` with `w` (attributes of the current node), without bias.
FailureOr<Value> Importer::conv(Value x, Value w) {
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
  return mk<ConvOp>(outDims, elt(x), x, w, win.strides, win.dilations, win.pads,
                    (uint64_t)group);
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
  bool wantIndices = op == "MaxPool" && wantOut(1);
  if (wantOut(1) && !wantIndices)
    return err() << "has only one output";
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
  Dims outDims = {dx[0], dx[1]};
  for (int64_t i = 0; i < k; ++i)
    outDims.push_back(windowOut(dx[i + 2], win.kernel[i], win.strides[i],
                                win.dilations[i], win.pads[i], win.pads[i + k],
                                ceilMode));
  Value y = mk<PoolOp>(
      outDims, elt(x), op == "MaxPool" ? PoolKind::Max : PoolKind::Avg, x,
      win.kernel, win.strides, win.dilations, win.pads, ceilMode, countPad);
  if (wantIndices) {
    FailureOr<Value> idx = maxPoolIndices(x, win.kernel, win.strides,
                                          win.dilations, win.pads, outDims, y);
    if (::mlir::failed(idx))
      return failure();
    out(1, *idx);
  }
  out(0, y);
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

/// ReduceSum whose `axes` input (static length L > 0) is only known at run
/// time. Per dim i, mask_i = any_j(axes[j] (+ rank if negative) == i); the
/// sum along every masked dim is taken in place (the reduced value
/// broadcast back), then the masked dims are cut to 1 (keepdims) and, for
/// keepdims = 0, the result is reshaped to the unmasked dims in order (its
/// rank is rank - L, the axes being distinct as the spec requires).
FailureOr<Value> Importer::reduceSumRuntimeAxes(Value x, Value axesV,
                                               bool keep) {
  int64_t r = rank(x);
  if (rank(axesV) != 1 || ShapedType::isDynamic(tt(axesV).getDimSize(0))) {
    err() << "axes given at run time must be a 1-D tensor of static length";
    return failure();
  }
  int64_t n = tt(axesV).getDimSize(0);
  if (!keep && n > r) {
    err() << n << " axes for an input of rank " << r;
    return failure();
  }
  SmallVector<Value> axis;
  for (int64_t j = 0; j < n; ++j)
    axis.push_back(wrapNegative(slice1D(axesV, j, j + 1), r));
  Value zero = constI64({0}), one = constI64({1});
  SmallVector<Value> masked; // i64 [1]: 1 when dim i is reduced
  for (int64_t i = 0; i < r; ++i) {
    Value m = zero;
    for (int64_t j = 0; j < n; ++j)
      m = select(compare(CompareDirection::EQ, axis[j], constI64({i})), one,
                 m);
    masked.push_back(m);
  }
  Value y = x;
  for (int64_t i = 0; i < r; ++i) {
    Value s = reduce(ReduceKind::Sum, y, {i}, /*keep=*/true);
    Value full = expandTo(s, shapeOf(y), dims(y));
    y = select(compare(CompareDirection::EQ, masked[i], one), full, y);
  }
  SmallVector<Value> starts, ends, steps;
  for (int64_t i = 0; i < r; ++i) {
    starts.push_back(zero);
    ends.push_back(select(compare(CompareDirection::EQ, masked[i], one), one,
                          constI64({std::numeric_limits<int64_t>::max()})));
    steps.push_back(one);
  }
  Value kept = mk<SliceOp>(Dims(r, Dim()), elt(x), y, concatI64(starts),
                           concatI64(ends), concatI64(steps),
                           llvm::to_vector(llvm::seq<int64_t>(0, r)));
  if (isUns(x))
    unsignedVals.insert(kept);
  if (keep)
    return kept;
  // Output dim k is the dim i that is the k-th unmasked one.
  SmallVector<Value> before; // number of unmasked dims before i
  Value count = zero;
  for (int64_t i = 0; i < r; ++i) {
    before.push_back(count);
    count = binary<AddOp>(count, binary<SubOp>(one, masked[i]));
  }
  SmallVector<TDim> target;
  for (int64_t k = 0; k < r - n; ++k) {
    Value sizeK = zero;
    for (int64_t i = 0; i < r; ++i) {
      Value pick = binary<MulOp>(
          binary<SubOp>(one, masked[i]),
          select(compare(CompareDirection::EQ, before[i], constI64({k})), one,
                 zero));
      sizeK = binary<AddOp>(sizeK, binary<MulOp>(pick, dimOf(x, i)));
    }
    target.push_back({Dim(), sizeK});
  }
  return reshapeT(kept, target);
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
    Value axesV = in(1);
    bool emptyAxes = axesV && rank(axesV) == 1 && tt(axesV).getDimSize(0) == 0;
    if (axesV && !emptyAxes && !knownInts(axesV) && op == "ReduceSum") {
      FailureOr<Value> y = reduceSumRuntimeAxes(
          x, toI64(axesV), aInt("keepdims", 1) != 0);
      if (::mlir::failed(y))
        return failure();
      out(0, *y);
      return success();
    }
    FailureOr<SmallVector<int64_t>> a =
        emptyAxes ? FailureOr<SmallVector<int64_t>>(SmallVector<int64_t>{})
                  : constInts(axesV, "axes");
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
  // Given sizes are never clamped: disc.slice checks them at run time.
  std::string ax = "{2} (axis " + std::to_string(*axis) + ")";
  auto checked = [&](Value v, int64_t i) {
    Operation *s = v.getDefiningOp();
    s->setAttr(kSliceBoundsMessageAttr,
               b.getStringAttr("split[" + std::to_string(i) +
                               "] is {3} at offset {0}: the sizes must be "
                               ">= 0 and sum to " +
                               ax));
    if (i == n - 1)
      s->setAttr(kSliceEndMessageAttr,
                 b.getStringAttr("split sizes sum to {1}, not " + ax));
    return v;
  };
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
        out(i, checked(mk<SliceOp>(o, elt(x), x, start, end, one,
                                   ArrayRef<int64_t>{*axis}),
                       i));
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
      Value res = checked(mk<SliceOp>(o, elt(x), x, constI64({start}),
                                      constI64({start + sizes[i]}), one,
                                      ArrayRef<int64_t>{*axis}),
                          i);
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

/// Slice whose `axes` input is only known at run time: the bounds become
/// full-rank vectors, entry i taken from the last j with
/// axes[j] (+ rank if negative) == i, else 0 / INT64_MAX / 1 (ONNX Slice-13
/// defaults). Out-of-range axes select no dim.
FailureOr<Value> Importer::sliceRuntimeAxes(Value x, Value axesV,
                                           Value startsV, Value endsV,
                                           Value stepsV) {
  int64_t r = rank(x);
  int64_t n = tt(startsV).getDimSize(0);
  for (Value v : {axesV, endsV, stepsV})
    if (rank(v) != 1 || tt(v).getDimSize(0) != n) {
      err() << "starts, ends, axes and steps need the same static length";
      return failure();
    }
  SmallVector<Value> axis, st, en, sp;
  for (int64_t j = 0; j < n; ++j) {
    axis.push_back(wrapNegative(slice1D(axesV, j, j + 1), r));
    st.push_back(slice1D(startsV, j, j + 1));
    en.push_back(slice1D(endsV, j, j + 1));
    sp.push_back(slice1D(stepsV, j, j + 1));
  }
  SmallVector<Value> fs, fe, fp;
  for (int64_t i = 0; i < r; ++i) {
    Value s0 = constI64({0});
    Value e0 = constI64({std::numeric_limits<int64_t>::max()});
    Value p0 = constI64({1});
    for (int64_t j = 0; j < n; ++j) {
      Value m = compare(CompareDirection::EQ, axis[j], constI64({i}));
      s0 = select(m, st[j], s0);
      e0 = select(m, en[j], e0);
      p0 = select(m, sp[j], p0);
    }
    fs.push_back(s0);
    fe.push_back(e0);
    fp.push_back(p0);
  }
  Value res = mk<SliceOp>(Dims(r, Dim()), elt(x), x, concatI64(fs),
                          concatI64(fe), concatI64(fp),
                          llvm::to_vector(llvm::seq<int64_t>(0, r)));
  if (isUns(x))
    unsignedVals.insert(res);
  return res;
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
    stepsV = has(4) ? toI64(in(4)) : constI64(SmallVector<int64_t>(n, 1));
    if (has(3) && !knownInts(in(3))) {
      // Axes given at run time: scatter the bounds into full-rank vectors
      // (defaults 0 / INT64_MAX / 1 for the axes not listed).
      FailureOr<Value> full = sliceRuntimeAxes(x, toI64(in(3)), startsV,
                                               endsV, stepsV);
      if (::mlir::failed(full))
        return failure();
      out(0, *full);
      return success();
    }
    if (has(3)) {
      FailureOr<SmallVector<int64_t>> a = constInts(in(3), "axes");
      if (::mlir::failed(a))
        return failure();
      axes = *a;
    } else {
      axes = llvm::to_vector(llvm::seq<int64_t>(0, n));
    }
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

//===----------------------------------------------------------------------===//
// Sequences
//===----------------------------------------------------------------------===//

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
  if (!pos || tt(pos).getNumElements() != 1 ||
      !isa<IntegerType>(elt(pos))) {
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
  auto sameType = [&](ArrayRef<Value> elems) -> LogicalResult {
    for (Value e : elems)
      if (e.getType() != elems.front().getType() ||
          !tt(e).hasStaticShape())
        return err() << "a run-time position needs sequence elements of one "
                        "static type";
    return success();
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
          o[i] = o[i].isStatic() && dv[i].isStatic() ? Dim(o[i].size + dv[i].size)
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
    if (::mlir::failed(sameType(elems)))
      return failure();
    FailureOr<Value> p = seqIndex(in(1), n);
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
    if (::mlir::failed(sameType(elems)))
      return failure();
    FailureOr<Value> p = seqIndex(in(1), n);
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
    if (::mlir::failed(sameType(all)))
      return failure();
    FailureOr<Value> p = seqIndex(in(2), n);
    if (::mlir::failed(p))
      return failure();
    SmallVector<Value> res;
    for (int64_t i = 0; i <= n; ++i) {
      // slot i: e[i] before p, t at p, e[i-1] after p.
      Value after = i > 0 ? elems[i - 1] : t;
      Value at = select(compare(CompareDirection::EQ, *p, constI64({i})), t,
                        after);
      res.push_back(i < n ? select(compare(CompareDirection::GT, *p,
                                           constI64({i})),
                                   elems[i], at)
                          : at);
    }
    return setSeq(res);
  }
  return err() << "unsupported sequence op";
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
  if (!picked || !w)
    return failure();
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

//===----------------------------------------------------------------------===//
// ConvTranspose, CumSum, BitShift, Einsum
//===----------------------------------------------------------------------===//

LogicalResult Importer::importConvTranspose() {
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
  SmallVector<int64_t> kernel =
      aInts("kernel_shape").value_or(SmallVector<int64_t>{});
  if (kernel.empty())
    for (int64_t i = 0; i < k; ++i)
      kernel.push_back(dw[i + 2].size);
  SmallVector<int64_t> strides =
      aInts("strides").value_or(SmallVector<int64_t>(k, 1));
  SmallVector<int64_t> dil =
      aInts("dilations").value_or(SmallVector<int64_t>(k, 1));
  SmallVector<int64_t> outPad =
      aInts("output_padding").value_or(SmallVector<int64_t>(k, 0));
  SmallVector<int64_t> pads =
      aInts("pads").value_or(SmallVector<int64_t>(2 * k, 0));
  std::optional<SmallVector<int64_t>> outShape = aInts("output_shape");
  if (outShape && (int64_t)outShape->size() == k + 2)
    outShape->erase(outShape->begin(), outShape->begin() + 2);
  int64_t group = aInt("group", 1);
  std::string autoPad = aStr("auto_pad", "NOTSET");
  if (failed)
    return failure();
  if ((int64_t)kernel.size() != k || (int64_t)strides.size() != k ||
      (int64_t)dil.size() != k || (int64_t)outPad.size() != k ||
      (int64_t)pads.size() != 2 * k ||
      (outShape && (int64_t)outShape->size() != k))
    return err() << "kernel_shape/strides/dilations/output_padding/pads/"
                    "output_shape have the wrong length";
  if (group <= 0)
    return err() << "group must be positive";
  if (group > 1 && (!dw[0].isStatic() || !dw[1].isStatic()))
    return err() << "group = " << group
                 << " needs static weight channel dims (opset " << opset << ")";
  for (int64_t i = 0; i < k; ++i)
    if (dw[i + 2].isStatic() && kernel[i] != dw[i + 2].size)
      return err() << "kernel_shape does not match the weight's spatial dims";
  if (autoPad != "NOTSET" && autoPad != "VALID" && autoPad != "SAME_UPPER" &&
      autoPad != "SAME_LOWER")
    return err() << "unsupported auto_pad '" << autoPad << "' (opset " << opset
                 << ")";
  bool upper = autoPad == "SAME_UPPER";
  bool same = upper || autoPad == "SAME_LOWER";
  if (autoPad == "VALID")
    pads.assign(2 * k, 0);
  // With output_shape (or SAME: D * stride) the pads follow from the target
  // size: total = full - target, split as the ONNX spec says. They are
  // attributes when the sizes are static; otherwise the full result is
  // cropped (or extended) at run time.
  bool runtime = false;
  if (outShape || same) {
    for (int64_t i = 0; i < k; ++i) {
      Dim d = dx[i + 2];
      if (kernel[i] == kDyn || (outShape && !d.isStatic())) {
        runtime = true;
        break;
      }
      int64_t full = strides[i] * ((outShape ? d.size : 1) - 1) + outPad[i] +
                     (kernel[i] - 1) * dil[i] + 1;
      int64_t total = full - (outShape ? (*outShape)[i] : strides[i]);
      int64_t half = floorDiv(total, 2);
      pads[i] = upper ? half : total - half;
      pads[i + k] = upper ? total - half : half;
    }
  }
  SmallVector<int64_t> opPads = runtime ? SmallVector<int64_t>(2 * k, 0) : pads;
  Dims outDims = {dx[0], dw[1].isStatic() ? Dim(dw[1].size * group) : Dim()};
  for (int64_t i = 0; i < k; ++i) {
    Dim d = dx[i + 2];
    if (!d.isStatic() || kernel[i] == kDyn) {
      outDims.push_back(Dim());
      continue;
    }
    outDims.push_back(Dim(strides[i] * (d.size - 1) + outPad[i] +
                          (kernel[i] - 1) * dil[i] + 1 - opPads[i] -
                          opPads[i + k]));
  }
  Value y = mk<ConvTransposeOp>(outDims, elt(x), x, w, strides, dil, opPads,
                                outPad, (uint64_t)group);
  if (runtime) {
    SmallVector<Value> lo = {constI64({0, 0})}, hi = {constI64({0, 0})};
    SmallVector<Value> starts, ends;
    Dims padded = {outDims[0], outDims[1]}, final = {outDims[0], outDims[1]};
    Value zero = constI64({0});
    for (int64_t i = 0; i < k; ++i) {
      Value full = dimOf(y, i + 2), target;
      Dim td;
      if (outShape) {
        target = constI64({(*outShape)[i]});
        td = Dim((*outShape)[i]);
      } else {
        target = binaryFolded("Mul", dimOf(x, i + 2), constI64({strides[i]}));
        if (dx[i + 2].isStatic())
          td = Dim(dx[i + 2].size * strides[i]);
      }
      Value total = binary<SubOp>(full, target);
      // floor(total / 2) with a truncating division.
      Value neg = select(compare(CompareDirection::LT, total, zero),
                         constI64({1}), zero);
      Value half = binary<DivOp>(binary<SubOp>(total, neg), constI64({2}));
      Value begin = upper ? half : binary<SubOp>(total, half);
      Value padLo = binary<MaxOp>(unary<NegOp>(begin), zero);
      Value padHi = binary<MaxOp>(
          binary<SubOp>(binary<AddOp>(begin, target), full), zero);
      Value start = binary<AddOp>(begin, padLo);
      lo.push_back(padLo);
      hi.push_back(padHi);
      starts.push_back(start);
      ends.push_back(binary<AddOp>(start, target));
      padded.push_back(Dim());
      final.push_back(td);
    }
    SmallVector<Value> all(lo);
    all.append(hi);
    Value p = mk<PadOp>(padded, elt(y), PadMode::Constant, y, concatI64(all),
                        scalarLike(y, 0));
    y = mk<SliceOp>(final, elt(y), p, concatI64(starts), concatI64(ends),
                    constI64(SmallVector<int64_t>(k, 1)),
                    llvm::to_vector(llvm::seq<int64_t>(2, r)));
  }
  if (bias) {
    if (rank(bias) != 1 || ::mlir::failed(sameElt(x, bias)))
      return err() << "bias must be 1-D of the input element type";
    y = addChannelBias(y, bias, k);
    if (!y)
      return failure();
  }
  out(0, y);
  return success();
}

LogicalResult Importer::importCumSum() {
  Value x = in(0), axis = in(1);
  if (!x || !axis)
    return err() << "expects x and axis";
  if (elt(x).isInteger(1))
    return err() << "does not accept bool inputs";
  int64_t r = rank(x);
  if (r == 0)
    return err() << "input must have rank >= 1";
  if (!maybeScalar(axis) || isFloat(axis))
    return err() << "axis must be an integer scalar";
  bool exclusive = aInt("exclusive", 0) != 0;
  bool reverse = aInt("reverse", 0) != 0;
  auto scan = [&](int64_t d) {
    Value v = mk<CumSumOp>(dims(x), elt(x), x, (uint64_t)d, exclusive, reverse);
    if (isUns(x))
      unsignedVals.insert(v);
    return v;
  };
  if (std::optional<SmallVector<int64_t>> ka = knownInts(axis)) {
    FailureOr<int64_t> a = normAxis((*ka)[0], r);
    if (::mlir::failed(a))
      return failure();
    out(0, scan(*a));
    return success();
  }
  if (r == 1) { // the only valid axis
    out(0, scan(0));
    return success();
  }
  // Run-time axis: one scan per dim, picked by comparing the axis.
  Value a = toI64(rank(axis) == 0 ? axis : reshapeToScalar(axis));
  a = select(compare(CompareDirection::LT, a, constI64Scalar(0)),
             binary<AddOp>(a, constI64Scalar(r)), a);
  Value res = scan(r - 1);
  for (int64_t d = r - 2; d >= 0 && res; --d)
    res = select(compare(CompareDirection::EQ, a, constI64Scalar(d)), scan(d),
                 res);
  if (!res)
    return failure();
  out(0, res);
  return success();
}

LogicalResult Importer::importBitShift() {
  Value x = in(0), y = in(1);
  if (!x || !y)
    return err() << "expects two inputs";
  if (::mlir::failed(sameElt(x, y)))
    return failure();
  if (!isa<IntegerType>(elt(x)) || elt(x).isInteger(1))
    return err() << "expects unsigned integer inputs";
  std::string dir = aStr("direction", "");
  if (dir != "LEFT" && dir != "RIGHT")
    return err() << "attribute 'direction' must be LEFT or RIGHT (opset "
                 << opset << "), got '" << dir << "'";
  Value r =
      dir == "LEFT" ? binary<ShiftLeftOp>(x, y) : binary<ShiftRightOp>(x, y);
  if (!r)
    return failure();
  out(0, r);
  return success();
}

/// Einsum: per operand, repeated labels take the diagonal (mask and sum) and
/// labels used nowhere else are summed out; operands are then combined
/// pairwise with disc.dot_general (shared labels still needed are batch
/// dims, the others are contracted) and transposed to the output order.
/// Ellipsis dims get labels of their own, aligned from the right.
LogicalResult Importer::importEinsum() {
  std::string eq;
  for (char ch : aStr("equation", ""))
    if (ch != ' ')
      eq.push_back(ch);
  if (failed)
    return failure();
  size_t arrow = eq.find("->");
  std::string lhs = eq.substr(0, arrow);
  SmallVector<StringRef> terms;
  StringRef(lhs).split(terms, ',');
  if (terms.size() != numIn() || numIn() == 0)
    return err() << "equation '" << eq << "' has " << terms.size()
                 << " operand terms for " << numIn() << " inputs";
  constexpr int64_t kEllipsis = 1000;
  auto letters = [](StringRef t) {
    int64_t n = 0;
    for (char ch : t)
      n += llvm::isAlpha(ch);
    return n;
  };
  int64_t ell = 0;
  for (auto [i, t] : llvm::enumerate(terms)) {
    if (!in(i))
      return err() << "input #" << i << " is missing";
    if (t.contains("..."))
      ell = std::max(ell, rank(in(i)) - letters(t));
  }
  // Labels of a term: letters by character, ellipsis dims as kEllipsis + j.
  auto parse = [&](StringRef t, int64_t r,
                   SmallVector<int64_t> &labels) -> LogicalResult {
    int64_t e = t.contains("...") ? r - letters(t) : 0;
    if (e < 0 || (!t.contains("...") && letters(t) != r))
      return err() << "term '" << t << "' does not match rank " << r;
    for (size_t p = 0; p < t.size(); ++p) {
      if (t.substr(p).starts_with("...")) {
        for (int64_t j = 0; j < e; ++j)
          labels.push_back(kEllipsis + ell - e + j);
        p += 2;
        continue;
      }
      if (!llvm::isAlpha(t[p]))
        return err() << "unexpected character '" << t[p] << "' in equation";
      labels.push_back(t[p]);
    }
    return success();
  };
  SmallVector<Value> vals;
  SmallVector<SmallVector<int64_t>> labs;
  for (auto [i, t] : llvm::enumerate(terms)) {
    SmallVector<int64_t> l;
    if (::mlir::failed(parse(t, rank(in(i)), l)))
      return failure();
    vals.push_back(in(i));
    labs.push_back(l);
  }
  SmallVector<int64_t> outLab;
  if (arrow != std::string::npos) {
    std::string rhs = eq.substr(arrow + 2);
    int64_t n = letters(rhs) + (StringRef(rhs).contains("...") ? ell : 0);
    if (::mlir::failed(parse(rhs, n, outLab)))
      return failure();
  } else {
    for (int64_t j = 0; j < ell; ++j)
      outLab.push_back(kEllipsis + j);
    std::map<int64_t, int> count;
    for (auto &l : labs)
      for (int64_t x : l)
        if (x < kEllipsis)
          ++count[x];
    for (auto [x, c] : count)
      if (c == 1)
        outLab.push_back(x);
  }
  auto neededBy = [&](int64_t label, size_t skip, size_t from) {
    if (llvm::is_contained(outLab, label))
      return true;
    for (size_t t = from; t < labs.size(); ++t)
      if (t != skip && llvm::is_contained(labs[t], label))
        return true;
    return false;
  };
  for (size_t t = 0; t < vals.size(); ++t) {
    Value &v = vals[t];
    SmallVector<int64_t> &l = labs[t];
    // Diagonals of repeated labels.
    for (size_t p = 0; p < l.size(); ++p) {
      for (size_t q = p + 1; q < l.size();) {
        if (l[q] != l[p]) {
          ++q;
          continue;
        }
        int64_t r = rank(v);
        Value mask = compare(CompareDirection::EQ, iotaAlong(v, p, r, p),
                             iotaAlong(v, q, r, q));
        v = reduce(ReduceKind::Sum, select(mask, v, scalarLike(v, 0)),
                   {(int64_t)q}, false);
        if (!v)
          return failure();
        l.erase(l.begin() + q);
      }
    }
    // Labels nobody else needs.
    SmallVector<int64_t> sumAxes;
    SmallVector<int64_t> kept;
    for (auto [p, x] : llvm::enumerate(l)) {
      if (neededBy(x, t, 0))
        kept.push_back(x);
      else
        sumAxes.push_back(p);
    }
    if (!sumAxes.empty()) {
      v = reduce(ReduceKind::Sum, v, sumAxes, false);
      l = kept;
    }
  }
  Value cur = vals[0];
  SmallVector<int64_t> curLab = labs[0];
  for (size_t t = 1; t < vals.size(); ++t) {
    Value o = vals[t];
    ArrayRef<int64_t> oLab = labs[t];
    if (::mlir::failed(sameElt(cur, o)))
      return failure();
    // Ellipsis dims broadcast (NumPy): where one side may be 1 and the
    // other P, both operands are expanded to the common size first (at run
    // time, `a == 1 ? b : a`; the Expand checks that the sizes agree).
    {
      Dims dc = dims(cur), dO = dims(o);
      SmallVector<TDim> curT, oT;
      for (int64_t p = 0, e = rank(cur); p < e; ++p)
        curT.push_back(tdimOf(cur, p));
      for (int64_t q = 0, e = rank(o); q < e; ++q)
        oT.push_back(tdimOf(o, q));
      auto valueOf = [&](const TDim &d) {
        return d.v ? d.v : constI64({d.d.size});
      };
      bool expandCur = false, expandO = false;
      for (auto [p, x] : llvm::enumerate(curLab)) {
        auto it = llvm::find(oLab, x);
        if (x < kEllipsis || it == oLab.end())
          continue;
        int64_t q = it - oLab.begin();
        const Dim &a = dc[p], &c = dO[q];
        if (a.isStatic() && c.isStatic()) {
          if (a.size == c.size)
            continue;
          if (a.size != 1 && c.size != 1)
            return err() << "ellipsis dims of sizes " << a.size << " and "
                         << c.size << " do not broadcast";
          if (a.size == 1) {
            curT[p] = oT[q];
            expandCur = true;
          } else {
            oT[q] = curT[p];
            expandO = true;
          }
          continue;
        }
        if (a.name && a.name == c.name)
          continue;
        Value av = valueOf(curT[p]), cv = valueOf(oT[q]);
        Value isOne = compare(CompareDirection::EQ, av, constI64({1}));
        Value common = isOne ? select(isOne, cv, av) : Value();
        if (!common)
          return failure();
        Dim cd = a.isStatic() && a.size != 1   ? a
                 : c.isStatic() && c.size != 1 ? c
                                               : Dim();
        curT[p] = oT[q] = TDim{cd, cd.isStatic() ? Value() : common};
        expandCur = expandO = true;
      }
      auto expandToT = [&](Value v, ArrayRef<TDim> t) {
        Dims ds;
        for (const TDim &d : t)
          ds.push_back(d.d);
        return expandTo(v, shapeFrom(t), ds);
      };
      if (expandCur)
        cur = expandToT(cur, curT);
      if (expandO)
        o = expandToT(o, oT);
      if (!cur || !o)
        return failure();
    }
    SmallVector<int64_t> lb, rb, lc, rc, resLab;
    Dims resDims, dc = dims(cur), dO = dims(o);
    for (auto [p, x] : llvm::enumerate(curLab)) {
      auto it = llvm::find(oLab, x);
      if (it == oLab.end())
        continue;
      int64_t q = it - oLab.begin();
      bool later = llvm::is_contained(outLab, x);
      for (size_t u = t + 1; u < labs.size(); ++u)
        later |= llvm::is_contained(labs[u], x);
      if (dc[p].isStatic() && dO[q].isStatic() && dc[p].size != dO[q].size)
        return err() << "sizes of label dims differ (" << dc[p].size << " vs "
                     << dO[q].size << "); broadcasting is not supported";
      if (later) {
        lb.push_back(p);
        rb.push_back(q);
        resLab.push_back(x);
        resDims.push_back(dc[p].isStatic() ? dc[p] : dO[q]);
      } else {
        lc.push_back(p);
        rc.push_back(q);
      }
    }
    for (auto [p, x] : llvm::enumerate(curLab))
      if (!llvm::is_contained(lb, (int64_t)p) &&
          !llvm::is_contained(lc, (int64_t)p)) {
        resLab.push_back(x);
        resDims.push_back(dc[p]);
      }
    for (auto [q, x] : llvm::enumerate(oLab))
      if (!llvm::is_contained(rb, (int64_t)q) &&
          !llvm::is_contained(rc, (int64_t)q)) {
        resLab.push_back(x);
        resDims.push_back(dO[q]);
      }
    Value res = mk<DotGeneralOp>(resDims, elt(cur), cur, o, lb, rb, lc, rc);
    if (isUns(cur) || isUns(o))
      unsignedVals.insert(res);
    cur = res;
    curLab = resLab;
  }
  SmallVector<int64_t> perm;
  for (int64_t x : outLab) {
    auto it = llvm::find(curLab, x);
    if (it == curLab.end())
      return err() << "output label not found among the inputs";
    perm.push_back(it - curLab.begin());
  }
  if (perm.size() != curLab.size())
    return err() << "internal error: unreduced labels";
  if (!llvm::equal(perm, llvm::seq<int64_t>(0, perm.size())))
    cur = transpose(cur, perm);
  out(0, cur);
  return success();
}

//===----------------------------------------------------------------------===//
// Quantization (ONNX rounding: half to even, then saturate)
//===----------------------------------------------------------------------===//

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
  Value v = convert(x, i32, isUns(x), false);
  if (!zp)
    return v;
  if (rank(zp) > 1)
    return err() << "zero points must be scalars or 1-D";
  Value z = convert(zp, i32, isUns(zp), false);
  if (axis >= 0)
    z = perAxis(z, rank(x), axis);
  Value r = binary<SubOp>(v, z);
  if (!r)
    return failure();
  return r;
}

LogicalResult Importer::importQuantizeLinear() {
  Value x = in(0), scale = in(1), zp = in(2);
  if (!x || !scale)
    return err() << "expects x and y_scale";
  if (!isFloat(scale) || rank(scale) > 1)
    return err() << "y_scale must be a floating-point scalar or 1-D tensor";
  // The axis only matters for a per-axis (1-D) parameter.
  int64_t r = rank(x), axis = 0;
  if (r > 1 && rank(scale) == 1) {
    FailureOr<int64_t> a = normAxis(aInt("axis", 1), r);
    if (::mlir::failed(a))
      return failure();
    axis = *a;
  }
  Type qt = zp ? elt(zp) : b.getIntegerType(8);
  bool qUns = zp ? isUns(zp) : true;
  if (!qt.isInteger(8))
    return err() << "only int8/uint8 outputs are supported (opset " << opset
                 << ")";
  Value xf = convert(x, elt(scale), isUns(x), false);
  // As the reference: round(x / scale) (half to even), then + zero point.
  Value y = binary<DivOp>(xf, perAxis(scale, r, axis));
  y = y ? unary<RoundOp>(y) : Value();
  if (zp && y)
    y = binary<AddOp>(y,
                      perAxis(convert(zp, elt(scale), qUns, false), r, axis));
  if (!y)
    return failure();
  y = quantizeFloat(y, qt, qUns);
  if (!y)
    return failure();
  out(0, y);
  return success();
}

LogicalResult Importer::importDequantizeLinear() {
  Value x = in(0), scale = in(1), zp = in(2);
  if (!x || !scale)
    return err() << "expects x and x_scale";
  if (!isFloat(scale) || rank(scale) > 1)
    return err() << "x_scale must be a floating-point scalar or 1-D tensor";
  if (!isa<IntegerType>(elt(x)) || elt(x).isInteger(1))
    return err() << "expects an integer input";
  // The axis only matters for a per-axis (1-D) parameter.
  int64_t r = rank(x), axis = 0;
  if (r > 1 && rank(scale) == 1) {
    FailureOr<int64_t> a = normAxis(aInt("axis", 1), r);
    if (::mlir::failed(a))
      return failure();
    axis = *a;
  }
  Type ft = elt(scale);
  Value xf = convert(x, ft, isUns(x), false);
  if (zp)
    xf = binary<SubOp>(xf, perAxis(convert(zp, ft, isUns(zp), false), r, axis));
  Value y = xf ? binary<MulOp>(xf, perAxis(scale, r, axis)) : Value();
  if (!y)
    return failure();
  out(0, y);
  return success();
}

/// As the ONNX function body: scale = (max(x, 0) - min(x, 0)) / 255,
/// zero point = round(clip(0 - min / scale, 0, 255)), uint8 outputs.
LogicalResult Importer::importDynamicQuantizeLinear() {
  Value x = in(0);
  if (!x)
    return err() << "expects an input";
  if (::mlir::failed(requireFloat(x)))
    return failure();
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
  if (!y)
    return failure();
  out(0, y);
  out(1, scale);
  out(2, zp);
  return success();
}

LogicalResult Importer::importMatMulInteger() {
  Value a = in(0), c = in(1);
  if (!a || !c)
    return err() << "expects A and B";
  int64_t ra = rank(a), rc = rank(c);
  FailureOr<Value> a32 = toI32Centered(a, in(2), ra >= 2 ? ra - 2 : -1);
  if (::mlir::failed(a32))
    return failure();
  FailureOr<Value> c32 = toI32Centered(c, in(3), rc >= 2 ? rc - 1 : -1);
  if (::mlir::failed(c32))
    return failure();
  FailureOr<Value> y = matmul(*a32, *c32);
  if (::mlir::failed(y))
    return failure();
  out(0, *y);
  return success();
}

LogicalResult Importer::importConvInteger() {
  Value x = in(0), w = in(1);
  if (!x || !w)
    return err() << "expects x and w";
  if (rank(x) < 3)
    return err() << "input must have rank >= 3";
  if (has(2) && rank(in(2)) != 0 && !maybeScalar(in(2)))
    return err() << "x_zero_point must be a scalar";
  FailureOr<Value> x32 = toI32Centered(x, in(2), -1);
  if (::mlir::failed(x32))
    return failure();
  FailureOr<Value> w32 = toI32Centered(w, in(3), 0);
  if (::mlir::failed(w32))
    return failure();
  FailureOr<Value> y = conv(*x32, *w32);
  if (::mlir::failed(y))
    return failure();
  out(0, *y);
  return success();
}

LogicalResult Importer::importQLinearMatMul() {
  for (unsigned i = 0; i < 8; ++i)
    if (!has(i))
      return err() << "expects eight inputs";
  Value a = in(0), as = in(1), c = in(3), cs = in(4), ys = in(6), yzp = in(7);
  int64_t ra = rank(a), rc = rank(c);
  if (!isFloat(as) || !isFloat(cs) || !isFloat(ys))
    return err() << "scales must be floating-point";
  FailureOr<Value> a32 = toI32Centered(a, in(2), ra >= 2 ? ra - 2 : -1);
  if (::mlir::failed(a32))
    return failure();
  FailureOr<Value> c32 = toI32Centered(c, in(5), rc >= 2 ? rc - 1 : -1);
  if (::mlir::failed(c32))
    return failure();
  FailureOr<Value> acc = matmul(*a32, *c32);
  if (::mlir::failed(acc))
    return failure();
  Type ft = elt(as);
  // a_scale may be per row of A, b_scale per column of B.
  Value mult = binary<DivOp>(
      binary<MulOp>(ra >= 2 ? perAxis(as, ra, ra - 2) : as, cs), ys);
  Value y = binary<MulOp>(convert(*acc, ft, false, false), mult);
  y = binary<AddOp>(unary<RoundOp>(y), convert(yzp, ft, isUns(yzp), false));
  y = y ? quantizeFloat(y, elt(yzp), isUns(yzp)) : Value();
  if (!y)
    return failure();
  out(0, y);
  return success();
}

LogicalResult Importer::importQLinearConv() {
  for (unsigned i = 0; i < 8; ++i)
    if (!has(i))
      return err() << "expects at least eight inputs";
  Value x = in(0), xs = in(1), w = in(3), ws = in(4), ys = in(6), yzp = in(7);
  int64_t r = rank(x);
  if (r < 3)
    return err() << "input must have rank >= 3";
  if (!isFloat(xs) || !isFloat(ws) || !isFloat(ys))
    return err() << "scales must be floating-point";
  FailureOr<Value> x32 = toI32Centered(x, in(2), -1);
  if (::mlir::failed(x32))
    return failure();
  FailureOr<Value> w32 = toI32Centered(w, in(5), 0);
  if (::mlir::failed(w32))
    return failure();
  FailureOr<Value> acc = conv(*x32, *w32);
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
  if (!y)
    return failure();
  out(0, y);
  return success();
}

//===----------------------------------------------------------------------===//
// LRN, MeanVarianceNormalization, windows, ReverseSequence
//===----------------------------------------------------------------------===//

/// LRN: the channel-window sum of squares is an average pool (padding
/// counted) over [N, 1, C, prod(spatial)] times the window size.
LogicalResult Importer::importLrn() {
  Value x = in(0);
  if (!x)
    return err() << "expects an input";
  if (::mlir::failed(requireFloat(x)))
    return failure();
  int64_t r = rank(x);
  if (r < 3)
    return err() << "input must have rank >= 3";
  int64_t size = aInt("size", 0);
  if (size <= 0)
    return err() << "attribute 'size' must be positive";
  double alpha = aFloat("alpha", 1e-4f), beta = aFloat("beta", 0.75f),
         bias = aFloat("bias", 1.0f);
  TDim spatial = tdimConst(1);
  for (int64_t i = 2; i < r; ++i)
    spatial = tdimMul(spatial, tdimOf(x, i));
  Value sq = binary<MulOp>(x, x);
  Value v = reshapeT(sq, {tdimOf(x, 0), tdimConst(1), tdimOf(x, 1), spatial});
  Dims vd = dims(v);
  int64_t lo = (size - 1) / 2, hi = size - 1 - lo;
  Value avg =
      mk<PoolOp>(vd, elt(x), PoolKind::Avg, v, ArrayRef<int64_t>{size, 1},
                 ArrayRef<int64_t>{1, 1}, ArrayRef<int64_t>{1, 1},
                 ArrayRef<int64_t>{lo, 0, hi, 0}, false, true);
  SmallVector<TDim> back;
  for (int64_t i = 0; i < r; ++i)
    back.push_back(tdimOf(x, i));
  avg = reshapeT(avg, back);
  // alpha / size * sum == alpha * average.
  Value den =
      binary<PowOp>(binary<AddOp>(binary<MulOp>(avg, scalarLike(x, alpha)),
                                  scalarLike(x, bias)),
                    scalarLike(x, beta));
  Value y = binary<DivOp>(x, den);
  if (!y)
    return failure();
  out(0, y);
  return success();
}

/// As the ONNX function body: (x - E[x]) / (sqrt(E[x^2] - E[x]^2) + 1e-9).
LogicalResult Importer::importMvn() {
  Value x = in(0);
  if (!x)
    return err() << "expects an input";
  if (::mlir::failed(requireFloat(x)))
    return failure();
  SmallVector<int64_t> axes =
      aInts("axes").value_or(SmallVector<int64_t>{0, 2, 3});
  FailureOr<SmallVector<int64_t>> n = normAxes(axes, rank(x), true);
  if (::mlir::failed(n))
    return failure();
  Value mean = reduce(ReduceKind::Mean, x, *n, true);
  Value sqMean = reduce(ReduceKind::Mean, binary<MulOp>(x, x), *n, true);
  Value var = binary<SubOp>(sqMean, binary<MulOp>(mean, mean));
  Value y =
      binary<DivOp>(binary<SubOp>(x, mean),
                    binary<AddOp>(unary<SqrtOp>(var), scalarLike(x, 1e-9)));
  if (!y)
    return failure();
  out(0, y);
  return success();
}

/// Hann/Hamming/Blackman windows as the ONNX function bodies:
/// a0 - a1 * cos(2 pi n / N) (+ a2 * cos(4 pi n / N)), N = size (periodic)
/// or size - 1 (symmetric).
LogicalResult Importer::importWindow(StringRef op) {
  Value size = in(0);
  if (!size)
    return err() << "expects a size input";
  if (!maybeScalar(size) || !isa<IntegerType>(elt(size)) ||
      elt(size).isInteger(1))
    return err() << "size must be an integer scalar";
  bool periodic = aInt("periodic", 1) != 0;
  bool uns = false;
  Type ot = convertElementType(&ctx, (int32_t)aInt("output_datatype", 1), uns);
  if (!ot)
    return err() << "unsupported output_datatype "
                 << aInt("output_datatype", 1);
  if (failed)
    return failure();
  Value n = toI64(rank(size) == 0 ? size : reshapeToScalar(size));
  Dim len;
  if (std::optional<SmallVector<int64_t>> k = knownInts(size))
    len = Dim((*k)[0]);
  Value idx = mk<RangeOp>(Dims{len}, b.getI64Type(), constI64Scalar(0), n,
                          constI64Scalar(1));
  Type f32 = b.getF32Type();
  Value nf = convert(n, f32, false, false);
  if (!periodic)
    nf = binary<SubOp>(nf, constScalar(f32, 1));
  Value ang = binary<MulOp>(convert(idx, f32, false, false),
                            binary<DivOp>(constScalar(f32, 6.2831853), nf));
  double a0 = 0.5, a1 = 0.5, a2 = 0;
  if (op == "HammingWindow") {
    a0 = 25.0 / 46.0;
    a1 = 1.0 - a0;
  } else if (op == "BlackmanWindow") {
    a0 = 0.42;
    a1 = 0.5;
    a2 = 0.08;
  }
  Value y =
      binary<SubOp>(constScalar(f32, a0),
                    binary<MulOp>(constScalar(f32, a1), unary<CosOp>(ang)));
  if (a2 != 0)
    y = binary<AddOp>(
        y,
        binary<MulOp>(constScalar(f32, a2),
                      unary<CosOp>(binary<MulOp>(ang, constScalar(f32, 2)))));
  if (!y)
    return failure();
  y = convert(y, ot, false, uns);
  out(0, y);
  return success();
}

/// out[t, b] = x[len[b] - 1 - t, b] for t < len[b], else x[t, b]: a one-hot
/// mask over (t, source t) selects and sums the source rows.
LogicalResult Importer::importReverseSequence() {
  Value x = in(0), lens = in(1);
  if (!x || !lens)
    return err() << "expects input and sequence_lens";
  int64_t r = rank(x);
  if (r < 2)
    return err() << "input must have rank >= 2";
  if (elt(x).isInteger(1))
    return err() << "does not accept bool inputs";
  if (rank(lens) != 1 || !isa<IntegerType>(elt(lens)))
    return err() << "sequence_lens must be a 1-D integer tensor";
  int64_t ba = aInt("batch_axis", 1), ta = aInt("time_axis", 0);
  if (!((ba == 0 && ta == 1) || (ba == 1 && ta == 0)))
    return err() << "batch_axis/time_axis must be 0 and 1";
  SmallVector<int64_t> swap = llvm::to_vector(llvm::seq<int64_t>(0, r));
  std::swap(swap[0], swap[1]);
  Value v = ta == 0 ? x : transpose(x, swap); // [T, B, ...]
  Value len = reshapeT(
      toI64(lens), {tdimConst(1), tdimConst(1), tdimOf(lens, 0)}); // [1, 1, B]
  Value t = iotaAlong(v, 0, 3, 0), src = iotaAlong(v, 0, 3, 1);
  Value rev = binary<SubOp>(binary<SubOp>(len, constI64Scalar(1)), t);
  Value from = select(compare(CompareDirection::LT, t, len), rev, t); // [T,1,B]
  Value mask = compare(CompareDirection::EQ, src, from);              // [T,T,B]
  if (!mask)
    return failure();
  SmallVector<TDim> ms;
  for (int64_t i = 0; i < 3; ++i)
    ms.push_back(tdimOf(mask, i));
  ms.append(r - 2, tdimConst(1));
  mask = reshapeT(mask, ms);
  Value y =
      reduce(ReduceKind::Sum, select(mask, unsqueezeAt(v, 0), scalarLike(v, 0)),
             {1}, false);
  if (!y)
    return failure();
  if (ta == 1)
    y = transpose(y, swap);
  out(0, y);
  return success();
}

//===----------------------------------------------------------------------===//
// MaxPool indices, uint64 Max/Min/Mod
//===----------------------------------------------------------------------===//

/// The Indices output of MaxPool: the flat index (row-major, or with the
/// spatial dims in reverse order when storage_order = 1) of the first max of
/// each window, by a running compare over the window offsets of strided
/// slices of the input padded with -inf.
FailureOr<Value> Importer::maxPoolIndices(Value x, ArrayRef<int64_t> kernel,
                                          ArrayRef<int64_t> strides,
                                          ArrayRef<int64_t> dilations,
                                          ArrayRef<int64_t> pads,
                                          ArrayRef<Dim> outDims,
                                          Value &values) {
  int64_t r = rank(x), k = r - 2;
  bool colMajor = aInt("storage_order", 0) != 0;
  Type e = elt(x);
  SmallVector<int64_t> pv(2 * r, 0);
  Dims dx = dims(x), padded = {dx[0], dx[1]};
  for (int64_t i = 0; i < k; ++i) {
    pv[2 + i] = pads[i];
    pv[r + 2 + i] = pads[k + i] + strides[i];
    padded.push_back(dx[2 + i].isStatic()
                         ? Dim(dx[2 + i].size + pv[2 + i] + pv[r + 2 + i])
                         : Dim());
  }
  Value lowest = constScalar(e, -std::numeric_limits<double>::infinity());
  Value xp = mk<PadOp>(padded, e, PadMode::Constant, x, constI64(pv), lowest);
  // Flat offset of (n, c) and the spatial strides of the index.
  Value nc =
      binary<AddOp>(binary<MulOp>(iotaAlong(values, 0, r, 0), dimScalar(x, 1)),
                    iotaAlong(values, 1, r, 1));
  Value plane = constI64Scalar(1);
  SmallVector<Value> mult(k);
  for (int64_t j = 0; j < k; ++j) {
    int64_t i = colMajor ? j : k - 1 - j;
    mult[i] = plane;
    plane = binary<MulOp>(plane, dimScalar(x, 2 + i));
  }
  // Index of the window's first element; a window offset adds a constant.
  Value idx0 = binary<MulOp>(nc, plane);
  for (int64_t i = 0; i < k; ++i) {
    Value h = binary<SubOp>(binary<MulOp>(iotaAlong(values, 2 + i, r, 2 + i),
                                          constI64Scalar(strides[i])),
                            constI64Scalar(pads[i]));
    idx0 = binary<AddOp>(idx0, binary<MulOp>(h, mult[i]));
  }
  // The window elements as slices stacked on a new leading dim (row-major
  // offset order); the first max along it gives the offset number.
  SmallVector<Value> cands;
  SmallVector<int64_t> off(k, 0);
  while (true) {
    SmallVector<Value> st, en;
    for (int64_t i = 0; i < k; ++i) {
      int64_t s0 = off[i] * dilations[i];
      st.push_back(constI64({s0}));
      en.push_back(binary<AddOp>(
          binary<MulOp>(binary<SubOp>(dimOf(values, 2 + i), constI64({1})),
                        constI64({strides[i]})),
          constI64({s0 + 1})));
    }
    Value cand = mk<SliceOp>(outDims, e, xp, concatI64(st), concatI64(en),
                             constI64(strides),
                             llvm::to_vector(llvm::seq<int64_t>(2, r)));
    cands.push_back(unsqueezeAt(cand, 0));
    int64_t i = k - 1;
    while (i >= 0 && ++off[i] == kernel[i])
      off[i--] = 0;
    if (i < 0)
      break;
  }
  Dims stackDims = {Dim((int64_t)cands.size())};
  stackDims.append(outDims.begin(), outDims.end());
  Value stack = cands.size() == 1
                    ? cands.front()
                    : mk<ConcatenateOp>(stackDims, e, cands, (uint64_t)0);
  Value best = reduce(ReduceKind::Max, stack, {0}, false);
  Value bestOff =
      mk<ArgReduceOp>(Dims(outDims.begin(), outDims.end()), b.getI64Type(),
                      stack, (uint64_t)0, true, /*keep_dims=*/false,
                      /*select_last_index=*/false);
  // Offset number -> per-dim offsets (row-major over the kernel).
  Value bestIdx = idx0, rest = bestOff;
  for (int64_t i = k - 1; i >= 0; --i) {
    Value ki = constI64Scalar(kernel[i]);
    Value oi = binary<RemOp>(rest, ki);
    rest = binary<DivOp>(rest, ki);
    bestIdx = binary<AddOp>(
        bestIdx, binary<MulOp>(binary<MulOp>(oi, constI64Scalar(dilations[i])),
                               mult[i]));
  }
  if (!bestIdx)
    return failure();
  values = best;
  return bestIdx;
}

/// Unsigned comparison of i64 values: flipping the sign bit maps the
/// unsigned order onto the signed one.
Value Importer::unsignedCompare(CompareDirection dir, Value l, Value r) {
  if (!l || !r) // An operand already failed (with a diagnostic).
    return nullptr;
  Value m = constScalar(elt(l), (double)std::numeric_limits<int64_t>::min());
  return compare(dir, binary<XorOp>(l, m), binary<XorOp>(r, m));
}

Value Importer::uint64MaxMin(bool isMax, Value l, Value r) {
  Value pick = unsignedCompare(
      isMax ? CompareDirection::GT : CompareDirection::LT, l, r);
  return pick ? select(pick, l, r) : Value();
}

/// Unsigned 64-bit remainder from signed ops: for c >= 2^63 the quotient is
/// 0 or 1; otherwise q = ((a >> 1) / c) << 1 leaves a - q * c < 2 * c, fixed
/// by one conditional subtraction. A zero divisor gives 0.
Value Importer::uint64Rem(Value a, Value c) {
  Value zero = scalarLike(a, 0), one = scalarLike(a, 1);
  Value big = compare(CompareDirection::LT, c, zero);
  Value r1 = select(unsignedCompare(CompareDirection::GE, a, c),
                    binary<SubOp>(a, c), a);
  Value cs = select(compare(CompareDirection::EQ, c, zero), one, c);
  Value q =
      binary<ShiftLeftOp>(binary<DivOp>(binary<ShiftRightOp>(a, one), cs), one);
  Value rr = binary<SubOp>(a, binary<MulOp>(q, cs));
  Value r2 = select(unsignedCompare(CompareDirection::GE, rr, cs),
                    binary<SubOp>(rr, cs), rr);
  if (!big || !r1 || !r2)
    return nullptr;
  return select(big, r1, r2);
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

//===----------------------------------------------------------------------===//
// Resize, element-wise gather/scatter, TopK
//===----------------------------------------------------------------------===//

/// Float values of a constant (scales), if any.
static std::optional<SmallVector<double>> constFloats(Value v) {
  auto c = v.getDefiningOp<ConstantOp>();
  if (!c)
    return std::nullopt;
  auto d = dyn_cast<DenseElementsAttr>(c.getValue());
  if (!d || !isa<FloatType>(d.getElementType()))
    return std::nullopt;
  SmallVector<double> out;
  for (const APFloat &f : d.getValues<APFloat>())
    out.push_back(f.convertToDouble());
  return out;
}

/// `s == num / den` with `den` a power of two (every float is one); then
/// `floor(d * s) == (d * num) floordiv den` for a size `d`.
static bool dyadic(double s, int64_t &num, int64_t &den) {
  for (den = 1; den <= (int64_t(1) << 30); den *= 2) {
    double n = s * (double)den;
    if (n == std::floor(n) && n < (double)(int64_t(1) << 31)) {
      num = (int64_t)n;
      return true;
    }
  }
  return false;
}

/// The rank declared for graph value `name` (graph outputs, value_info).
std::optional<int64_t> Importer::declaredRank(const std::string &name) {
  auto rankOf = [&](const onnx::ValueInfoProto &vi) -> std::optional<int64_t> {
    if (vi.name() != name || !vi.type().has_tensor_type() ||
        !vi.type().tensor_type().has_shape())
      return std::nullopt;
    return vi.type().tensor_type().shape().dim_size();
  };
  for (const onnx::ValueInfoProto &vi : graph.output())
    if (std::optional<int64_t> r = rankOf(vi))
      return r;
  for (const onnx::ValueInfoProto &vi : graph.value_info())
    if (std::optional<int64_t> r = rankOf(vi))
      return r;
  return std::nullopt;
}

/// Resize (10, 11, 13, 18) and Upsample (7, 9) as one `disc.resize`. The
/// result shape is `sizes`, or `floor(in * scale)`: integer arithmetic on
/// the input dims when the scales are constants (so the dims stay
/// symbolic), f64 arithmetic when they come at run time. Dims that
/// provably keep their size (scale 1) under a coordinate transformation
/// that maps them to themselves are copied, not interpolated.
LogicalResult Importer::importResize(StringRef op) {
  Value x = in(0);
  if (!x)
    return err() << "expects an input";
  int64_t r = rank(x);
  bool legacy = op == "Upsample" || opset < 11;
  std::string mode = aStr("mode", "nearest");
  if (!llvm::is_contained({"nearest", "linear", "cubic"}, mode) ||
      (legacy && mode == "cubic"))
    return err() << "mode '" << mode << "' is not supported (opset " << opset
                 << ")";
  std::string ctm = legacy
                        ? "asymmetric"
                        : aStr("coordinate_transformation_mode", "half_pixel");
  if (!llvm::is_contained({"half_pixel", "pytorch_half_pixel", "align_corners",
                           "asymmetric", "tf_half_pixel_for_nn",
                           "tf_crop_and_resize"},
                          ctm))
    return err() << "coordinate_transformation_mode '" << ctm
                 << "' is not supported (opset " << opset << ")";
  std::string nm =
      legacy ? "simple" : aStr("nearest_mode", "round_prefer_floor");
  if (!llvm::is_contained({"round_prefer_floor", "round_prefer_ceil", "floor",
                           "ceil", "simple"},
                          nm) ||
      (!legacy && nm == "simple"))
    return err() << "nearest_mode '" << nm << "' is not supported (opset "
                 << opset << ")";
  if (op == "Resize" && opset >= 18) {
    if (aInt("antialias", 0) != 0)
      return err() << "attribute 'antialias' = 1 is not supported (opset "
                   << opset << ")";
    if (attr("axes"))
      return err() << "attribute 'axes' is not supported (opset " << opset
                   << ")";
    std::string policy = aStr("keep_aspect_ratio_policy", "stretch");
    if (policy != "stretch")
      return err() << "attribute 'keep_aspect_ratio_policy' = '" << policy
                   << "' is not supported (opset " << opset << ")";
  }
  if (mode != "nearest" && !isFloat(x))
    return err() << "attribute 'mode' = '" << mode
                 << "' expects a floating-point input, got " << elt(x)
                 << " (opset " << opset << ")";
  if (failed)
    return failure();

  Value scalesIn, sizesIn, roiIn;
  if (op == "Upsample" && opset < 9) {
    std::optional<SmallVector<float>> s = aFloats("scales");
    if (!s)
      return err() << "attribute 'scales' is required (opset " << opset << ")";
    scalesIn = constDense(DenseElementsAttr::get(
        RankedTensorType::get({(int64_t)s->size()}, b.getF32Type()),
        ArrayRef<float>(*s)));
  } else if (legacy) {
    scalesIn = in(1);
  } else {
    roiIn = in(1);
    scalesIn = in(2);
    sizesIn = in(3);
  }
  auto emptyVec = [&](Value v) {
    return v && rank(v) == 1 && tt(v).getDimSize(0) == 0;
  };
  if (emptyVec(sizesIn))
    sizesIn = nullptr;
  if (emptyVec(scalesIn))
    scalesIn = nullptr;
  if (sizesIn && scalesIn && tt(scalesIn).hasStaticShape())
    return err() << "only one of 'scales' and 'sizes' may be given";
  if (!sizesIn && !scalesIn)
    return err() << "expects 'scales' or 'sizes'";
  for (Value v : {sizesIn, scalesIn}) {
    if (!v)
      continue;
    if (rank(v) != 1 || (!tt(v).isDynamicDim(0) && tt(v).getDimSize(0) != r))
      return err() << "'scales' / 'sizes' must be 1-D with " << r << " entries";
  }
  if (sizesIn && !isa<IntegerType>(elt(sizesIn)))
    return err() << "'sizes' must be int64";
  if (scalesIn && !isFloat(scalesIn))
    return err() << "'scales' must be float";

  Type f64 = b.getF64Type();
  Dims inDims = dims(x), outDims(r, Dim());
  SmallVector<bool> sameSize(r, false);
  Value sizesV, scalesV;
  if (sizesIn) {
    sizesV = toI64(sizesIn);
    std::optional<Dims> k = known(sizesV);
    for (int64_t i = 0; i < r; ++i)
      if (k && (int64_t)k->size() == r) {
        outDims[i] = (*k)[i];
        sameSize[i] = (*k)[i] == inDims[i];
      }
    // The reference's scale is `sizes / input shape` in f64.
    scalesV = binary<DivOp>(convert(sizesV, f64, false, false),
                            convert(shapeOf(x), f64, false, false));
  } else {
    scalesV = convert(scalesIn, f64, false, false);
    std::optional<SmallVector<double>> cs = constFloats(scalesIn);
    if (cs && (int64_t)cs->size() == r) {
      SmallVector<TDim> parts;
      for (int64_t i = 0; i < r; ++i) {
        double s = (*cs)[i];
        if (!(s > 0))
          return err() << "scales must be positive, got " << s;
        int64_t num, den;
        sameSize[i] = s == 1.0;
        if (inDims[i].isStatic()) {
          outDims[i] = Dim((int64_t)std::floor((double)inDims[i].size * s));
          parts.push_back(tdimConst(outDims[i].size));
        } else if (s == 1.0) {
          outDims[i] = inDims[i];
          parts.push_back(tdimOf(x, i));
        } else if (dyadic(s, num, den)) {
          Value v = dimOf(x, i);
          if (num != 1)
            v = binaryFolded("Mul", v, constI64({num}));
          if (den != 1)
            v = binaryFolded("Div", v, constI64({den}));
          parts.push_back({Dim(), v});
        } else {
          Value sf = constDense(DenseElementsAttr::get(
              RankedTensorType::get({1}, f64), ArrayRef<double>{s}));
          Value v = binary<MulOp>(convert(dimOf(x, i), f64, false, false), sf);
          parts.push_back({Dim(), convert(v, b.getI64Type(), false, false)});
        }
      }
      sizesV = shapeFrom(parts);
    } else {
      // Truncation is the floor: sizes and scales are non-negative.
      sizesV = convert(
          binary<MulOp>(convert(shapeOf(x), f64, false, false), scalesV),
          b.getI64Type(), false, false);
    }
  }
  Value roiV;
  if (ctm == "tf_crop_and_resize") {
    if (!roiIn || emptyVec(roiIn))
      return err() << "tf_crop_and_resize expects a 'roi' input";
    if (!isFloat(roiIn) || rank(roiIn) != 1)
      return err() << "'roi' must be a 1-D float tensor";
    roiV = convert(roiIn, f64, false, false);
  }
  bool selfMapping = llvm::is_contained(
      {"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric"}, ctm);
  SmallVector<int64_t> axes;
  for (int64_t i = 0; i < r; ++i) {
    if (selfMapping && sameSize[i]) {
      outDims[i] = inDims[i];
      continue;
    }
    axes.push_back(i);
  }
  Value res =
      mk<ResizeOp>(outDims, elt(x), b.getStringAttr(mode), x, sizesV, scalesV,
                   roiV, b.getStringAttr(ctm), b.getStringAttr(nm),
                   b.getF64FloatAttr(aFloat("cubic_coeff_a", -0.75f)),
                   b.getBoolAttr(aInt("exclude_outside", 0) != 0),
                   b.getF64FloatAttr(aFloat("extrapolation_value", 0.0f)),
                   b.getDenseI64ArrayAttr(axes));
  out(0, res);
  return success();
}

LogicalResult Importer::checkIndices(Value idx) {
  if (!(elt(idx).isInteger(32) || elt(idx).isInteger(64)) || isUns(idx))
    return err() << "indices must be int32 or int64";
  return success();
}

LogicalResult Importer::importGatherElements() {
  Value data = in(0), idx = in(1);
  if (!data || !idx)
    return err() << "expects two inputs";
  if (::mlir::failed(checkIndices(idx)))
    return failure();
  int64_t r = rank(data);
  if (r == 0 || rank(idx) != r)
    return err() << "data and indices must have the same rank >= 1";
  FailureOr<int64_t> axis = normAxis(aInt("axis", 0), r);
  if (::mlir::failed(axis))
    return failure();
  out(0,
      mk<GatherElementsOp>(dims(idx), elt(data), data, idx, (uint64_t)*axis));
  return success();
}

LogicalResult Importer::importGatherNd() {
  Value data = in(0), idx = in(1);
  if (!data || !idx)
    return err() << "expects two inputs";
  if (::mlir::failed(checkIndices(idx)))
    return failure();
  int64_t r = rank(data), q = rank(idx);
  int64_t bd = aInt("batch_dims", 0);
  if (q < 1 || r < 1 || bd < 0 || bd >= std::min(r, q))
    return err() << "batch_dims " << bd
                 << " must be below the ranks of data and indices";
  int64_t k = tt(idx).getDimSize(q - 1);
  if (ShapedType::isDynamic(k)) {
    // The tuple length sets the result rank: take it from the declared
    // rank of the output.
    std::optional<int64_t> outRank = declaredRank(node->output(0));
    if (!outRank)
      return err() << "the last dim of 'indices' must be known at compile "
                      "time (it sets the result rank; opset "
                   << opset << ")";
    k = q - 1 + r - bd - *outRank;
  }
  if (k < 1 || k > r - bd)
    return err() << "index tuples of " << k << " entries do not fit data of "
                 << "rank " << r << " with batch_dims " << bd;
  Dims di = dims(idx), dd = dims(data);
  Dims o(di.begin(), di.end() - 1);
  o.append(dd.begin() + bd + k, dd.end());
  out(0, mk<GatherNdOp>(o, elt(data), data, idx, (uint64_t)bd));
  return success();
}

FailureOr<std::string> Importer::scatterReduction() {
  std::string red = aStr("reduction", "none");
  if (!llvm::is_contained({"none", "add", "mul"}, red)) {
    err() << "attribute 'reduction' = '" << red << "' is not supported (opset "
          << opset << ")";
    return failure();
  }
  return red;
}

LogicalResult Importer::importScatterElements() {
  Value data = in(0), idx = in(1), upd = in(2);
  if (!data || !idx || !upd)
    return err() << "expects three inputs";
  if (::mlir::failed(checkIndices(idx)) || ::mlir::failed(sameElt(data, upd)))
    return failure();
  int64_t r = rank(data);
  if (r == 0 || rank(idx) != r || rank(upd) != r)
    return err() << "data, indices and updates must have the same rank >= 1";
  FailureOr<int64_t> axis = normAxis(aInt("axis", 0), r);
  FailureOr<std::string> red = scatterReduction();
  if (::mlir::failed(axis) || ::mlir::failed(red))
    return failure();
  out(0, mk<ScatterElementsOp>(dims(data), elt(data), data, idx, upd,
                               (uint64_t)*axis, *red));
  return success();
}

LogicalResult Importer::importScatterNd() {
  Value data = in(0), idx = in(1), upd = in(2);
  if (!data || !idx || !upd)
    return err() << "expects three inputs";
  if (::mlir::failed(checkIndices(idx)) || ::mlir::failed(sameElt(data, upd)))
    return failure();
  int64_t r = rank(data), q = rank(idx);
  int64_t k = r - rank(upd) + q - 1;
  if (q < 1 || k < 1 || k > r)
    return err() << "the ranks of data (" << r << "), indices (" << q
                 << ") and updates (" << rank(upd) << ") do not match";
  FailureOr<std::string> red = scatterReduction();
  if (::mlir::failed(red))
    return failure();
  out(0, mk<ScatterNdOp>(dims(data), elt(data), data, idx, upd, *red));
  return success();
}

/// TopK: `disc.arg_sort`, the first k indices along the axis
/// (`disc.slice`, k may be run-time), values by `disc.gather_elements`.
/// The sorted order is also a valid answer for `sorted = 0`.
LogicalResult Importer::importTopK() {
  Value x = in(0);
  if (!x)
    return err() << "expects an input";
  if (::mlir::failed(rejectUnsigned(x)))
    return failure();
  if (elt(x).isInteger(1))
    return err() << "expects a numeric input";
  int64_t r = rank(x);
  if (r == 0)
    return err() << "input must have rank >= 1";
  FailureOr<int64_t> axis = normAxis(aInt("axis", -1), r);
  if (::mlir::failed(axis))
    return failure();
  bool largest = opset < 11 || aInt("largest", 1) != 0;
  Value kv;
  if (opset < 10) {
    const onnx::AttributeProto *ka = attr("k");
    if (!ka)
      return err() << "attribute 'k' is required (opset " << opset << ")";
    kv = constI64({aInt("k", 0)});
  } else {
    Value k = in(1);
    if (!k)
      return err() << "expects a 'K' input";
    if (!maybeScalar(k) || !isa<IntegerType>(elt(k)))
      return err() << "'K' must be a 1-element int64 tensor";
    kv = toI64(k);
    if (rank(kv) != 1 || tt(kv).getDimSize(0) != 1)
      kv = reshapeT(kv, {tdimConst(1)});
  }
  if (failed)
    return failure();
  Dims o = dims(x);
  if (std::optional<SmallVector<int64_t>> kc = knownInts(kv)) {
    if ((*kc)[0] < 0 || (o[*axis].isStatic() && (*kc)[0] > o[*axis].size))
      return err() << "k = " << (*kc)[0] << " out of range for the axis";
    o[*axis] = Dim((*kc)[0]);
  } else {
    o[*axis] = Dim();
  }
  Value perm =
      mk<ArgSortOp>(dims(x), b.getI64Type(), x, (uint64_t)*axis, largest);
  Value idx = mk<SliceOp>(o, b.getI64Type(), perm, constI64({0}), kv,
                          constI64({1}), ArrayRef<int64_t>{*axis});
  // k is never clamped: checked at run time.
  idx.getDefiningOp()->setAttr(
      kSliceBoundsMessageAttr,
      b.getStringAttr("k is {1}, out of range [0, {2}] for axis " +
                      std::to_string(*axis)));
  out(0, mk<GatherElementsOp>(o, elt(x), x, idx, (uint64_t)*axis));
  out(1, idx);
  return success();
}

/// GridSample (opset 16, 4-d input) as `disc.grid_sample`.
LogicalResult Importer::importGridSample() {
  Value x = in(0), grid = in(1);
  if (!x || !grid)
    return err() << "expects two inputs";
  if (::mlir::failed(requireFloat(x)) || ::mlir::failed(sameElt(x, grid)))
    return failure();
  if (rank(x) != 4 || rank(grid) != 4)
    return err() << "input and grid must be 4-D (opset " << opset << ")";
  if (!tt(grid).isDynamicDim(3) && tt(grid).getDimSize(3) != 2)
    return err() << "grid must have shape [N, H_out, W_out, 2]";
  std::string mode = aStr("mode", "bilinear");
  if (!llvm::is_contained({"bilinear", "nearest", "bicubic"}, mode))
    return err() << "attribute 'mode' = '" << mode
                 << "' is not supported (opset " << opset << ")";
  std::string pad = aStr("padding_mode", "zeros");
  if (!llvm::is_contained({"zeros", "border", "reflection"}, pad))
    return err() << "attribute 'padding_mode' = '" << pad
                 << "' is not supported (opset " << opset << ")";
  bool ac = aInt("align_corners", 0) != 0;
  if (failed)
    return failure();
  Dims dx = dims(x), dg = dims(grid);
  out(0, mk<GridSampleOp>(Dims{dx[0], dx[1], dg[1], dg[2]}, elt(x), x, grid,
                          mode, pad, ac));
  return success();
}

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
