//===- Importer.h - ONNX importer state shared by the op families -*- C++
//-*-===//
//
// The Importer class walks the (checked) ONNX graph in order and builds one
// `func.func` whose body uses `disc` ops. Its core (graph walk, value maps,
// initializers, diagnostics) is in OnnxImporter.cpp, the shared builders in
// Builders.cpp, and the import functions of each op family in a file of its
// own (Elementwise.cpp, Reductions.cpp, ...).
//
//===----------------------------------------------------------------------===//
#ifndef DISC_LIB_FRONTEND_ONNX_IMPORTER_H
#define DISC_LIB_FRONTEND_ONNX_IMPORTER_H

#include "disc/Frontend/Onnx/OnnxImporter.h"

#include "disc/Dialect/Disc/IR/DiscDialect.h"
#include "disc/Transforms/TrainingStep.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

#include <onnx/onnx_pb.h>

#include <cassert>
#include <iterator>
#include <limits>
#include <optional>
#include <string>

namespace mlir::disc::onnx_import {

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
    return isStatic() ? size == o.size
                      : (!o.isStatic() && name && name == o.name);
  }
};
using Dims = SmallVector<Dim, 4>;

/// A target dim for an internal reshape: its static/named description and,
/// when not static, the 1-element i64 tensor holding its value at run time.
struct TDim {
  Dim d;
  Value v;
};

/// Whether `d` names the default ONNX domain ("" or "ai.onnx").
bool isDefaultDomain(const std::string &d);
/// Reorders the nodes of `g` (and of its subgraphs) topologically: a node
/// follows the producers of its inputs and of the outer-scope values its
/// subgraphs read; among independent nodes the original order is kept. A
/// cycle fails with `error` naming the nodes on it (or waiting on it).
LogicalResult sortNodesTopologically(onnx::GraphProto &g, std::string &error);
/// ONNX element type -> MLIR element type (null when unsupported).
Type convertElementType(MLIRContext *ctx, int32_t t, bool &isUnsigned);
/// The ONNX name of element type `t` (for diagnostics).
std::string elementTypeName(int32_t t);
/// The float values of a constant (scales), if any.
std::optional<SmallVector<double>> constFloats(Value v);
/// The value of a 0-d or 1-element constant as double.
std::optional<double> scalarConstant(Value v);

inline int64_t ceilDiv(int64_t a, int64_t b) {
  return (a >= 0) == (b >= 0) ? (a + b + (b > 0 ? -1 : 1)) / b : a / b;
}
inline int64_t floorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (q * b != a && ((a < 0) != (b < 0))) ? q - 1 : q;
}

/// Window geometry shared by Conv and pooling.
struct Window {
  SmallVector<int64_t> kernel, strides, dilations, pads;
  /// auto_pad SAME_UPPER (1) / SAME_LOWER (2) with dynamic spatial dims: the
  /// input is padded explicitly at run time and `pads` stays zero.
  int runtimeSame = 0;

  /// Whether kernel, strides and dilations have `k` entries and pads 2 * k.
  bool hasSpatialRank(int64_t k) const {
    return (int64_t)kernel.size() == k && (int64_t)strides.size() == k &&
           (int64_t)dilations.size() == k && (int64_t)pads.size() == 2 * k;
  }
};

class Importer;

/// The element-type constraint the op table checks on input 0.
enum class InputType : uint8_t {
  Any,
  /// "expects a floating-point input, got <type>".
  Float,
  /// Neither unsigned nor bool: "expects a signed numeric input".
  SignedNumeric,
  /// "does not accept bool inputs".
  NoBool,
  /// "expects a bool input".
  Bool,
};

/// `OpDef::axis` of an op without an `axis` attribute (or one that reads it
/// itself).
constexpr int64_t kNoAxis = std::numeric_limits<int64_t>::min();

/// One row of the op table (OpTable.cpp): an op of the default ONNX domain
/// over an opset range, the checks every import of it starts with, and its
/// import function. Importer::dispatch runs the checks once, in this order:
/// inputs 0..minInputs-1 present, element type of input 0, rank of input 0,
/// then the `axis` attribute (normalized against that rank into
/// Importer::nodeAxis). Rows are built with the chained setters:
///   OpDef("ArgMax", &Importer::importArgReduce)
///       .inputs(1).type(InputType::SignedNumeric).minRank(1).axis(0)
struct OpDef {
  using ImportFn = LogicalResult (Importer::*)(StringRef op);

  const char *name;
  ImportFn fn;
  /// The op's domain: "" is the default ONNX domain; the opsets are those
  /// of this domain.
  const char *domain = "";
  int64_t minOpset = kMinOpset, maxOpset = kMaxOpset;
  unsigned minInputs = 0;
  /// The inputs in "expects <inputsText>" when one is missing.
  const char *inputsText = "";
  InputType inputType = InputType::Any;
  /// Rank of input 0: at least `rank` (exactly when `exactRank`); -1: any.
  int64_t rank = -1;
  bool exactRank = false;
  /// Default of the `axis` attribute, or kNoAxis.
  int64_t axisDefault = kNoAxis;

  constexpr OpDef(const char *name, ImportFn fn) : name(name), fn(fn) {}
  constexpr OpDef opsets(int64_t lo, int64_t hi) const {
    return with(&OpDef::minOpset, lo).with(&OpDef::maxOpset, hi);
  }
  /// An op of domain `d` (not the default one).
  constexpr OpDef inDomain(const char *d) const {
    return with(&OpDef::domain, d);
  }
  /// `n` leading inputs are required; `text` names them in the diagnostic
  /// (default: "an input", "two inputs", ...).
  constexpr OpDef inputs(unsigned n, const char *text = nullptr) const {
    constexpr const char *counts[] = {"",
                                      "an input",
                                      "two inputs",
                                      "three inputs",
                                      "four inputs",
                                      "five inputs",
                                      "six inputs",
                                      "seven inputs",
                                      "eight inputs"};
    assert((text || n < std::size(counts)) && "name the inputs in `text`");
    return with(&OpDef::minInputs, n)
        .with(&OpDef::inputsText, text ? text : counts[n]);
  }
  constexpr OpDef type(InputType t) const { return with(&OpDef::inputType, t); }
  constexpr OpDef minRank(int64_t r) const { return with(&OpDef::rank, r); }
  constexpr OpDef exactlyRank(int64_t r) const {
    return minRank(r).with(&OpDef::exactRank, true);
  }
  constexpr OpDef axis(int64_t def) const {
    return with(&OpDef::axisDefault, def);
  }

private:
  /// A copy of this row with `field` set to `value`.
  template <typename T>
  constexpr OpDef with(T OpDef::*field, T value) const {
    OpDef d = *this;
    d.*field = value;
    return d;
  }
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
  /// `v`, recorded as unsigned when `uns` (null stays null).
  Value markUnsigned(Value v, bool uns) {
    if (v && uns)
      unsignedVals.insert(v);
    return v;
  }
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
  static bool allInts(ArrayRef<Dim> k) {
    for (const Dim &d : k)
      if (!d.isStatic())
        return false;
    return true;
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
  /// Row-major elements of `v` when it is an integer constant of static
  /// shape with at most kMaxKnown elements, of any rank (known values are
  /// 1-D only: PyTorch's F.pad export reshapes its pads to [n, 2], reverses
  /// and transposes them before they reach Pad).
  std::optional<SmallVector<APInt>> constElements(Value v);
  /// `v`, just built, replaced by a constant of its type holding `vals`
  /// (row-major); its op is erased if unused. `v` when its type is not
  /// static or `vals` does not fill it.
  Value foldTo(Value v, ArrayRef<APInt> vals);
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
  Value sliceEveryAxis(Value x, ArrayRef<Value> starts, ArrayRef<Value> ends,
                       ArrayRef<Value> steps);
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
  Value binaryNamed(StringRef op, Value l, Value r);
  Value binaryFolded(StringRef op, Value l, Value r);
  /// The ONNX Mod of `a` and `c` when every entry of both is a known
  /// integer (broadcast as in binaryFolded; `truncated`: fmod = 1, the
  /// result takes the sign of `a`, else of `c`). None when an entry is
  /// unknown or symbolic, for a zero divisor and for INT64_MIN % -1 (left
  /// to the run time). importMod asks it for signed operands only.
  std::optional<Dims> knownMod(Value a, Value c, bool truncated);
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
  FailureOr<Value> importValueAttr();
  Value lookup(const std::string &name);
  LogicalResult importNode(const onnx::NodeProto &n, int index);
  LogicalResult dispatch(StringRef op);

  /// The op table (OpTable.cpp) and its row for `name` of `domain` ("" for
  /// the default domain) at `opset` of that domain (null when the op is not
  /// supported there).
  static ArrayRef<OpDef> opTable();
  static const OpDef *findOp(StringRef name, int64_t opset,
                             StringRef domain = "");
  /// The opset the model imports for the domain of `n` (0 when none).
  int64_t nodeOpset(const onnx::NodeProto &n) const;
  /// The domain of `n` as the op table spells it ("" for the default one).
  static std::string nodeDomain(const onnx::NodeProto &n) {
    return isDefaultDomain(n.domain()) ? "" : n.domain();
  }
  /// Runs the checks of row `d` on the current node and sets nodeAxis.
  LogicalResult checkOp(const OpDef &d);

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
  /// Sets output 0 to `v` and succeeds; fails when `v` is null or a failure
  /// (a builder whose operand failed, the diagnostic already emitted).
  LogicalResult finish(Value v) {
    if (!v)
      return failure();
    out(0, v);
    return success();
  }
  LogicalResult finish(FailureOr<Value> v) {
    return ::mlir::failed(v) ? failure() : finish(*v);
  }
  /// Sets outputs 0, 1, ... to `vs` and succeeds; fails when one is null.
  LogicalResult finishAll(ArrayRef<Value> vs) {
    if (llvm::is_contained(vs, Value()))
      return failure();
    for (auto [i, v] : llvm::enumerate(vs))
      out(i, v);
    return success();
  }
  const onnx::AttributeProto *attr(StringRef name) const {
    for (const onnx::AttributeProto &a : node->attribute())
      if (a.name() == name)
        return &a;
    return nullptr;
  }
  /// Whether `a` holds a value in the field of type `t` (how an attribute
  /// without a type is read).
  static bool hasField(const onnx::AttributeProto &a,
                       onnx::AttributeProto_AttributeType t) {
    return (t == onnx::AttributeProto_AttributeType_INT && a.has_i()) ||
           (t == onnx::AttributeProto_AttributeType_FLOAT && a.has_f()) ||
           (t == onnx::AttributeProto_AttributeType_STRING && a.has_s()) ||
           (t == onnx::AttributeProto_AttributeType_INTS && a.ints_size()) ||
           (t == onnx::AttributeProto_AttributeType_FLOATS && a.floats_size());
  }
  /// Attribute `name` of type `t` (`kind` in the error when it has another
  /// type); null when absent or of another type.
  const onnx::AttributeProto *
  attr(StringRef name, onnx::AttributeProto_AttributeType t, StringRef kind) {
    const onnx::AttributeProto *a = attr(name);
    if (!a || a->type() == t ||
        (a->type() == onnx::AttributeProto_AttributeType_UNDEFINED &&
         hasField(*a, t)))
      return a;
    err() << "attribute '" << a->name() << "' must be " << kind;
    return nullptr;
  }
  int64_t aInt(StringRef name, int64_t def) {
    const auto *a =
        attr(name, onnx::AttributeProto_AttributeType_INT, "an int");
    return a ? a->i() : def;
  }
  float aFloat(StringRef name, float def) {
    const auto *a =
        attr(name, onnx::AttributeProto_AttributeType_FLOAT, "a float");
    return a ? a->f() : def;
  }
  std::string aStr(StringRef name, StringRef def) {
    const auto *a =
        attr(name, onnx::AttributeProto_AttributeType_STRING, "a string");
    return a ? a->s() : def.str();
  }
  std::optional<SmallVector<int64_t>> aInts(StringRef name) {
    const auto *a =
        attr(name, onnx::AttributeProto_AttributeType_INTS, "a list of ints");
    if (!a)
      return std::nullopt;
    return SmallVector<int64_t>(a->ints().begin(), a->ints().end());
  }
  std::optional<SmallVector<float>> aFloats(StringRef name) {
    const auto *a = attr(name, onnx::AttributeProto_AttributeType_FLOATS,
                         "a list of floats");
    if (!a)
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

  // Op families: one import function per op or group of ops, registered
  // in the op table; `op` is the node's op type.
  LogicalResult importIdentity(StringRef op);
  LogicalResult importElementwiseBinary(StringRef op);
  LogicalResult importVariadic(StringRef op);
  LogicalResult importUnary(StringRef op);
  LogicalResult importActivation(StringRef op);
  LogicalResult importCompare(StringRef op);
  LogicalResult importCast(StringRef op);
  LogicalResult importMatMul(StringRef);
  LogicalResult importGemm(StringRef);
  LogicalResult importConv(StringRef);
  LogicalResult importPool(StringRef op);
  LogicalResult importBatchNorm(StringRef);
  Value foldBatchNormIntoConv(Value x, Value scale, Value bias, Value mean,
                              Value var, float eps);
  LogicalResult importInstanceNorm(StringRef);
  LogicalResult importBatchNormTraining(Value x, Value scale, Value bias,
                                        Value mean, Value var);
  LogicalResult importLayerNorm(StringRef);
  LogicalResult importSoftmax(StringRef op);
  LogicalResult importReduce(StringRef op);
  FailureOr<Value> reduceSumRuntimeAxes(Value x, Value axesV, bool keep);
  LogicalResult importArgReduce(StringRef op);
  LogicalResult importShape(StringRef);
  LogicalResult importSize(StringRef);
  LogicalResult importReshape(StringRef);
  LogicalResult importFlatten(StringRef);
  LogicalResult importSqueeze(StringRef op);
  LogicalResult importTranspose(StringRef);
  LogicalResult importConcat(StringRef);
  LogicalResult importSplit(StringRef);
  LogicalResult importSlice(StringRef);
  FailureOr<Value> sliceRuntimeAxes(Value x, Value axesV, Value startsV,
                                    Value endsV, Value stepsV);
  LogicalResult importGather(StringRef);
  LogicalResult importExpand(StringRef);
  LogicalResult importTile(StringRef);
  LogicalResult importPad(StringRef);
  LogicalResult importConstantOfShape(StringRef);
  LogicalResult importRange(StringRef);
  LogicalResult importConstant(StringRef);
  LogicalResult importDropout(StringRef);
  LogicalResult importClip(StringRef);
  LogicalResult importWhere(StringRef);
  LogicalResult importMod(StringRef);
  LogicalResult importTrilu(StringRef);
  LogicalResult importSqueezeRuntimeAxes(bool unsqueeze);
  LogicalResult importShrink(StringRef);
  LogicalResult importEyeLike(StringRef);
  LogicalResult importHardmax(StringRef);
  LogicalResult importOneHot(StringRef);
  LogicalResult importDepthSpace(StringRef op);
  LogicalResult importNllLoss(StringRef);
  LogicalResult importSoftmaxCrossEntropy(StringRef);
  LogicalResult importSequence(StringRef op);
  LogicalResult importOptionalInput(StringRef op);
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
  LogicalResult importConvTranspose(StringRef);
  LogicalResult importCumSum(StringRef);
  LogicalResult importBitShift(StringRef);
  LogicalResult importEinsum(StringRef);
  LogicalResult importQuantizeLinear(StringRef);
  LogicalResult importDequantizeLinear(StringRef);
  LogicalResult importDynamicQuantizeLinear(StringRef);
  LogicalResult importMatMulInteger(StringRef);
  LogicalResult importConvInteger(StringRef);
  LogicalResult importQLinearMatMul(StringRef);
  LogicalResult importQLinearConv(StringRef);
  LogicalResult importLrn(StringRef);
  LogicalResult importMvn(StringRef);
  LogicalResult importWindow(StringRef op);
  LogicalResult importRandom(StringRef op);
  LogicalResult importReverseSequence(StringRef);
  FailureOr<Value> maxPoolIndices(Value x, ArrayRef<int64_t> kernel,
                                  ArrayRef<int64_t> strides,
                                  ArrayRef<int64_t> dilations,
                                  ArrayRef<int64_t> pads, ArrayRef<Dim> outDims,
                                  Value &values);
  Value unsignedCompare(CompareDirection dir, Value l, Value r);
  Value uint64MaxMin(bool isMax, Value l, Value r);
  Value uint64Rem(Value a, Value c);
  FailureOr<Value> toI32Centered(Value x, Value zp, int64_t axis);
  using ProductFn = FailureOr<Value> (Importer::*)(Value, Value);
  FailureOr<Value> centeredProduct(ProductFn product, Value a, unsigned aZp,
                                   int64_t aAxis, Value c, unsigned cZp,
                                   int64_t cAxis);
  FailureOr<Value> centeredMatmul(Value a, unsigned aZp, Value c, unsigned cZp);
  Value quantizeFloat(Value y, Type qType, bool qUns);
  FailureOr<int64_t> quantAxis(Value x, Value scale);
  Value perAxis(Value v, int64_t r, int64_t axis);
  Value dimScalar(Value x, int64_t i);
  Value padSameRuntime(Value x, const Window &w, Value value);
  Value lowestScalar(Value x);
  LogicalResult resolveAutoPad(ArrayRef<Dim> spatial, Window &w);
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
  LogicalResult importGatherElements(StringRef);
  LogicalResult importGatherNd(StringRef);
  FailureOr<std::string> scatterReduction();
  LogicalResult importScatterElements(StringRef);
  LogicalResult importScatterNd(StringRef);
  LogicalResult importTopK(StringRef);
  LogicalResult importGridSample(StringRef);
  std::optional<int64_t> declaredRank(const std::string &name);
  // Data-dependent output sizes (DataDependent.cpp, RoiAlign.cpp).
  LogicalResult importNonZero(StringRef);
  LogicalResult importCompress(StringRef);
  LogicalResult importUnique(StringRef);
  LogicalResult importNonMaxSuppression(StringRef);
  LogicalResult importRoiAlign(StringRef);
  Value compactIndices(Value mask);
  Value flattenAll(Value x);
  // Optimizers of ai.onnx.preview.training (Optimizers.cpp).
  LogicalResult importOptimizer(StringRef op);
  // Unpooling (Unpool.cpp).
  LogicalResult importMaxUnpool(StringRef);
  // Signal processing (Signal.cpp).
  LogicalResult importDft(StringRef);
  LogicalResult importStft(StringRef);
  LogicalResult importMelWeightMatrix(StringRef);
  FailureOr<Value> dft(Value x, int64_t axis, Value length, bool inverse,
                       bool onesided);
  // Linear algebra (LinearAlgebra.cpp).
  LogicalResult importDet(StringRef);
  // Control flow (ControlFlow.cpp).
  LogicalResult importIf(StringRef);
  LogicalResult importLoop(StringRef);
  LogicalResult importScan(StringRef);
  /// The graph attribute `name` of the node (an error when missing).
  const onnx::GraphProto *graphAttr(StringRef name);
  /// Imports the nodes of `g` at the insertion point, its inputs bound to
  /// `inputs`; returns its outputs. Names defined in `g` stay scoped to it.
  FailureOr<SmallVector<Value>> importSubgraph(const onnx::GraphProto &g,
                                               ArrayRef<Value> inputs);
  /// Forgets what is recorded about the values inside `op`; erases it.
  void eraseWithRegions(Operation *op);

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
  /// The entry block of the function (initializer constants go there, also
  /// when first read inside a region).
  Block *funcEntry = nullptr;
  /// The current node's `axis` attribute (or its OpDef default), normalized
  /// against the rank of input 0; set for rows with OpDef::axis.
  int64_t nodeAxis = 0;

  llvm::StringMap<Value> values;
  /// Graph inputs of optional tensor type: [count, dims...] tensors with
  /// count 0 (empty) or 1 (importInputs); only OptionalHasElement and
  /// OptionalGetElement read them.
  llvm::StringSet<> optionalInputs;
  /// Consumers (node inputs and graph outputs) of each value of the main
  /// graph, by name; empty when the graph has subgraphs (they may read any
  /// outer value). BatchNormalization folds into a Conv read by nothing else.
  llvm::StringMap<int> onnxUses;
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

template <typename OpTy>
inline Value Importer::binary(Value l, Value r) {
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

} // namespace mlir::disc::onnx_import

#endif // DISC_LIB_FRONTEND_ONNX_IMPORTER_H
