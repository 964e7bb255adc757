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
#include "Importer.h"

#include "OnnxChecker.h"

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
#include <queue>
#include <vector>

namespace mlir::disc::onnx_import {

bool isDefaultDomain(const std::string &d) {
  return d.empty() || d == "ai.onnx";
}

/// ONNX element type -> MLIR element type (null when unsupported).
Type convertElementType(MLIRContext *ctx, int32_t t, bool &isUnsigned) {
  struct OnnxInteger {
    int32_t onnx;
    unsigned bits;
    bool isUnsigned;
  };
  static constexpr OnnxInteger integers[] = {
      {onnx::TensorProto_DataType_INT8, 8, false},
      {onnx::TensorProto_DataType_INT16, 16, false},
      {onnx::TensorProto_DataType_INT32, 32, false},
      {onnx::TensorProto_DataType_INT64, 64, false},
      {onnx::TensorProto_DataType_UINT8, 8, true},
      {onnx::TensorProto_DataType_UINT16, 16, true},
      {onnx::TensorProto_DataType_UINT32, 32, true},
      {onnx::TensorProto_DataType_UINT64, 64, true},
  };
  isUnsigned = false;
  Builder b(ctx);
  for (const OnnxInteger &i : integers)
    if (i.onnx == t) {
      isUnsigned = i.isUnsigned;
      return b.getIntegerType(i.bits);
    }
  switch (t) {
  case onnx::TensorProto_DataType_FLOAT:
    return b.getF32Type();
  case onnx::TensorProto_DataType_DOUBLE:
    return b.getF64Type();
  case onnx::TensorProto_DataType_FLOAT16:
    return b.getF16Type();
  case onnx::TensorProto_DataType_BFLOAT16:
    return b.getBF16Type();
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

LogicalResult Importer::scanUnsupported() {
  SmallVector<std::string> bad;
  // Every node, those of subgraphs (If/Loop bodies) included.
  SmallVector<std::pair<const onnx::NodeProto *, int>> all;
  std::function<void(const onnx::GraphProto &)> collect =
      [&](const onnx::GraphProto &g) {
        for (int i = 0; i < g.node_size(); ++i) {
          all.push_back({&g.node(i), i});
          for (const onnx::AttributeProto &a : g.node(i).attribute()) {
            if (a.has_g())
              collect(a.g());
            for (const onnx::GraphProto &sg : a.graphs())
              collect(sg);
          }
        }
      };
  collect(graph);
  for (auto [np, i] : all) {
    const onnx::NodeProto &n = *np;
    std::string name = n.name().empty() ? "#" + std::to_string(i) : n.name();
    std::string domain = nodeDomain(n);
    int64_t version = nodeOpset(n);
    bool ok = findOp(n.op_type(), version, domain);
    if (!ok) {
      std::string opName =
          domain.empty() ? n.op_type() : domain + "." + n.op_type();
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
    << ", and the optimizers of ai.onnx.preview.training, opset 1; see "
       "docs/onnx-frontend.md)";
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
    if (d < 0 ||
        (d > 0 && numel > std::numeric_limits<int64_t>::max() / d / 16)) {
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
    // The typed field of the element type: numel entries, each stored as
    // its low eltBytes bytes (little endian; the same bytes when the field
    // has the element's own type).
    auto copyField = [&](const auto &field) {
      if (field.size() != numel) {
        fail() << "has " << field.size() << " data entries, expected " << numel;
        return failure();
      }
      for (int64_t i = 0; i < numel; ++i) {
        auto v = field.Get(i);
        std::memcpy(buf.data() + i * eltBytes, &v, eltBytes);
      }
      return success();
    };
    auto copyData = [&]() {
      switch (t.data_type()) {
      case onnx::TensorProto_DataType_FLOAT:
        return copyField(t.float_data());
      case onnx::TensorProto_DataType_DOUBLE:
        return copyField(t.double_data());
      case onnx::TensorProto_DataType_INT64:
        return copyField(t.int64_data());
      case onnx::TensorProto_DataType_UINT32:
      case onnx::TensorProto_DataType_UINT64:
        return copyField(t.uint64_data());
      default: // int32, int16, int8, uint8, uint16, bool, float16, bfloat16
        return copyField(t.int32_data());
      }
    };
    if (::mlir::failed(copyData()))
      return failure();
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
    Block *entry = funcEntry ? funcEntry : b.getInsertionBlock();
    b.setInsertionPointToStart(entry);
    Location saved = loc;
    const onnx::NodeProto *savedNode = node;
    node = nullptr;
    loc = nameLoc(name);
    FailureOr<Value> c =
        importTensor(*init->second, "initializer '" + name + "'");
    loc = saved;
    node = savedNode;
    if (::mlir::failed(c))
      return nullptr;
    if (options.markParameters && isa<FloatType>(elt(*c)))
      if (auto op = c->getDefiningOp<ConstantOp>())
        op->setAttr(kParamAttrName, b.getStringAttr(name));
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
    // An optional tensor input is a tensor of 0 or 1 elements along an
    // extra leading dim `<name>.count` (range [0, 1], set by the driver):
    // [1, dims...] holds the tensor, [0, dims...] is an empty optional.
    bool optional = vi.type().has_optional_type() &&
                    vi.type().optional_type().elem_type().has_tensor_type();
    if (!vi.type().has_tensor_type() && !optional)
      return emitError(l) << "graph input '" << vi.name()
                          << "' is not a tensor or an optional tensor "
                             "(sequences and maps are not supported)";
    const onnx::TypeProto_Tensor &tt =
        optional ? vi.type().optional_type().elem_type().tensor_type()
                 : vi.type().tensor_type();
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
    if (optional) {
      shape.push_back(kDyn);
      dimAttrs.push_back(b.getStringAttr(vi.name() + ".count"));
      optionalInputs.insert(vi.name());
    }
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
    if (optional)
      attrs.push_back(b.getNamedAttr("disc.optional", b.getUnitAttr()));
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
  // A model of training-domain ops alone (an optimizer step) need not
  // import the default domain; its nodes were checked by scanUnsupported.
  bool otherDomain =
      llvm::any_of(model.opset_import(), [](const onnx::OperatorSetIdProto &o) {
        return !isDefaultDomain(o.domain());
      });
  if (opset == 0 && !otherDomain) {
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
  funcEntry = entry;
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

  onnxUses.clear();
  bool subgraphs = false;
  for (const onnx::NodeProto &n : graph.node()) {
    for (const std::string &in : n.input())
      if (!in.empty())
        ++onnxUses[in];
    for (const onnx::AttributeProto &a : n.attribute())
      subgraphs |= a.type() == onnx::AttributeProto_AttributeType_GRAPH ||
                   a.type() == onnx::AttributeProto_AttributeType_GRAPHS;
  }
  for (const onnx::ValueInfoProto &vi : graph.output())
    ++onnxUses[vi.name()];
  if (subgraphs)
    onnxUses.clear();

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
  StringRef op = n.op_type();
  for (int i = 0; i < n.input_size(); ++i)
    if (optionalInputs.contains(n.input(i)) && op != "OptionalHasElement" &&
        op != "OptionalGetElement")
      return err() << "input #" << i << " ('" << n.input(i)
                   << "') is an optional graph input: only "
                      "OptionalHasElement and OptionalGetElement take it";
  for (int i = 0; i < n.input_size(); ++i)
    if (!n.input(i).empty() && !sequences.count(n.input(i)) && !in(i))
      return failure();
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
    // MaxPool's Indices are int64 whatever the input (uint64 included).
    if (op == "MaxPool" && i == 1)
      continue;
    for (int j = 0; j < n.input_size(); ++j)
      if (Value iv = sequences.count(n.input(j)) ? Value() : in(j))
        if (isUns(iv) && elt(iv) == elt(v))
          unsignedVals.insert(v);
  }
  return success();
}

int64_t Importer::nodeOpset(const onnx::NodeProto &n) const {
  int64_t version = 0;
  for (const onnx::OperatorSetIdProto &o : model.opset_import())
    if (isDefaultDomain(o.domain()) ? isDefaultDomain(n.domain())
                                    : o.domain() == n.domain())
      version = o.version();
  return version;
}

LogicalResult Importer::dispatch(StringRef op) {
  const OpDef *d = findOp(op, nodeOpset(*node), nodeDomain(*node));
  if (!d)
    return err() << "unsupported op";
  if (::mlir::failed(checkOp(*d)))
    return failure();
  return (this->*d->fn)(op);
}

LogicalResult Importer::checkOp(const OpDef &d) {
  for (unsigned i = 0; i < d.minInputs; ++i)
    if (!has(i))
      return err() << "expects " << d.inputsText;
  if (d.minInputs == 0)
    return success();
  Value x = in(0);
  switch (d.inputType) {
  case InputType::Any:
    break;
  case InputType::Float:
    if (::mlir::failed(requireFloat(x)))
      return failure();
    break;
  case InputType::SignedNumeric:
    if (isUns(x) || elt(x).isInteger(1))
      return err() << "expects a signed numeric input";
    break;
  case InputType::NoBool:
    if (elt(x).isInteger(1))
      return err() << "does not accept bool inputs";
    break;
  case InputType::Bool:
    if (!elt(x).isInteger(1))
      return err() << "expects a bool input";
    break;
  }
  int64_t r = rank(x);
  if (d.rank >= 0 && (d.exactRank ? r != d.rank : r < d.rank))
    return err() << "input must have rank " << (d.exactRank ? "" : ">= ")
                 << d.rank;
  if (d.axisDefault != kNoAxis) {
    FailureOr<int64_t> axis = normAxis(aInt("axis", d.axisDefault), r);
    if (::mlir::failed(axis))
      return failure();
    nodeAxis = *axis;
  }
  return success();
}

LogicalResult Importer::importIdentity(StringRef) {
  out(0, in(0));
  return success();
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

/// Adds to `out` the names that `g`'s nodes (and their subgraphs) read but
/// that `g` does not define (inputs, initializers, node outputs): the
/// outer-scope values a subgraph captures.
static void collectCaptures(const onnx::GraphProto &g, llvm::StringSet<> &out) {
  llvm::StringSet<> defined;
  for (const onnx::ValueInfoProto &vi : g.input())
    defined.insert(vi.name());
  for (const onnx::TensorProto &t : g.initializer())
    defined.insert(t.name());
  for (const onnx::NodeProto &n : g.node())
    for (const std::string &o : n.output())
      defined.insert(o);
  for (const onnx::NodeProto &n : g.node()) {
    for (const std::string &i : n.input())
      if (!i.empty() && !defined.contains(i))
        out.insert(i);
    for (const onnx::AttributeProto &a : n.attribute()) {
      llvm::StringSet<> inner;
      if (a.has_g())
        collectCaptures(a.g(), inner);
      for (const onnx::GraphProto &sg : a.graphs())
        collectCaptures(sg, inner);
      for (const auto &e : inner)
        if (!defined.contains(e.getKey()))
          out.insert(e.getKey());
    }
  }
}

LogicalResult sortNodesTopologically(onnx::GraphProto &g, std::string &error) {
  // Subgraphs first: their order does not depend on the outer one.
  for (onnx::NodeProto &n : *g.mutable_node())
    for (onnx::AttributeProto &a : *n.mutable_attribute()) {
      if (a.has_g() &&
          ::mlir::failed(sortNodesTopologically(*a.mutable_g(), error)))
        return failure();
      for (onnx::GraphProto &sg : *a.mutable_graphs())
        if (::mlir::failed(sortNodesTopologically(sg, error)))
          return failure();
    }
  int n = g.node_size();
  llvm::StringMap<int> producer;
  for (int i = 0; i < n; ++i)
    for (const std::string &o : g.node(i).output())
      if (!o.empty())
        producer.try_emplace(o, i);
  // Kahn's algorithm; among the ready nodes the one first in the file goes
  // first, so an already sorted list is kept as it is.
  SmallVector<SmallVector<int>> users(n);
  SmallVector<int> pending(n, 0);
  bool sorted = true;
  for (int i = 0; i < n; ++i) {
    const onnx::NodeProto &node = g.node(i);
    llvm::StringSet<> reads;
    for (const std::string &in : node.input())
      if (!in.empty())
        reads.insert(in);
    for (const onnx::AttributeProto &a : node.attribute()) {
      if (a.has_g())
        collectCaptures(a.g(), reads);
      for (const onnx::GraphProto &sg : a.graphs())
        collectCaptures(sg, reads);
    }
    llvm::DenseSet<int> deps;
    for (const auto &r : reads) {
      auto it = producer.find(r.getKey());
      if (it != producer.end() && deps.insert(it->second).second) {
        users[it->second].push_back(i);
        ++pending[i];
        sorted &= it->second < i;
      }
    }
  }
  if (sorted)
    return success();
  std::priority_queue<int, std::vector<int>, std::greater<int>> ready;
  for (int i = 0; i < n; ++i)
    if (pending[i] == 0)
      ready.push(i);
  SmallVector<int> order;
  while (!ready.empty()) {
    int i = ready.top();
    ready.pop();
    order.push_back(i);
    for (int u : users[i])
      if (--pending[u] == 0)
        ready.push(u);
  }
  if ((int)order.size() != n) {
    std::string names;
    llvm::raw_string_ostream os(names);
    int shown = 0, left = 0;
    for (int i = 0; i < n; ++i) {
      if (pending[i] == 0)
        continue;
      if (shown == 8) {
        ++left;
        continue;
      }
      const onnx::NodeProto &node = g.node(i);
      os << (shown++ ? ", " : "") << "'"
         << (node.name().empty() ? "#" + std::to_string(i) : node.name())
         << "' (" << node.op_type() << ")";
    }
    if (left)
      os << " and " << left << " more";
    error = "graph '" + g.name() +
            "' has a cycle: these nodes wait on each other's outputs: " + names;
    return failure();
  }
  google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes;
  nodes.Reserve(n);
  for (int i : order)
    *nodes.Add() = g.node(i);
  g.mutable_node()->Swap(&nodes);
  return success();
}

} // namespace mlir::disc::onnx_import

using namespace mlir;
using namespace mlir::disc;
using namespace mlir::disc::onnx_import;

OwningOpRef<ModuleOp>
mlir::disc::importOnnxModel(MLIRContext &context, llvm::StringRef path,
                            const OnnxImportOptions &options) {
  onnx::ModelProto model;
  std::string error;
  Location loc = FileLineColLoc::get(&context, path, 0, 0);
  if (!onnx_checker::loadOnnxModel(path.str(), model, error)) {
    emitError(loc) << error;
    return nullptr;
  }
  // ONNX Runtime runs graphs whose nodes are not listed in topological order;
  // the checker rejects them. Sort (the loaded copy) first.
  if (::mlir::failed(sortNodesTopologically(*model.mutable_graph(), error))) {
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
