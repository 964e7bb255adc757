//===- Signature.cpp - the signature of a compiled model -----------------===//
//
// Builds the signature (docs/runtime-abi.md) on the disc-level module, maps
// it and the memory model to attributes and back, and serializes the JSON
// that the model wrapper embeds.
//
//===----------------------------------------------------------------------===//
#include "disc/Target/Signature.h"
#include "disc/Target/RuntimeSymbols.h"

#include "disc/runtime/abi.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"

using namespace mlir;

//===----------------------------------------------------------------------===//
// --dim
//===----------------------------------------------------------------------===//

llvm::Expected<disc::NamedDimRange> mlir::disc::parseDimRange(StringRef spec) {
  auto [name, value] = spec.split('=');
  SmallVector<StringRef> parts;
  value.split(parts, ':');
  int64_t v[3] = {0, 0, 0};
  bool bad = name.empty() || value.empty() || parts.size() > 3;
  for (size_t i = 0; !bad && i < parts.size(); ++i)
    bad = parts[i].trim().getAsInteger(10, v[i]) || v[i] < 0;
  if (bad)
    return llvm::createStringError(
        "bad --dim '" + spec +
        "' (expected NAME=MIN:MAX[:LIKELY] or NAME=VALUE)");
  NamedDimRange r;
  r.name = name.str();
  r.range.min = v[0];
  r.range.max = parts.size() == 1 ? v[0] : v[1];
  if (parts.size() == 3)
    r.range.likely = v[2];
  if (*r.range.max < r.range.min ||
      (r.range.likely &&
       (*r.range.likely < r.range.min || *r.range.likely > *r.range.max)))
    return llvm::createStringError("bad --dim '" + spec +
                                   "': empty range or likely "
                                   "value outside it");
  return r;
}

SmallVector<std::string> mlir::disc::getEntryDimNames(func::FuncOp entry) {
  SmallVector<std::string> names;
  llvm::StringSet<> seen;
  for (unsigned i = 0, e = entry ? entry.getNumArguments() : 0; i < e; ++i)
    if (auto dims = entry.getArgAttrOfType<ArrayAttr>(i, "disc.dims"))
      for (Attribute d : dims)
        if (auto s = dyn_cast<StringAttr>(d))
          if (seen.insert(s.getValue()).second)
            names.push_back(s.str());
  return names;
}

llvm::Expected<llvm::StringMap<disc::DimRange>>
mlir::disc::parseEntryDimRanges(func::FuncOp entry,
                                ArrayRef<std::string> specs) {
  SmallVector<std::string> known = getEntryDimNames(entry);
  llvm::StringSet<> knownSet;
  for (const std::string &k : known)
    knownSet.insert(k);
  llvm::StringMap<DimRange> ranges;
  for (const std::string &spec : specs) {
    llvm::Expected<NamedDimRange> r = parseDimRange(spec);
    if (!r)
      return r.takeError();
    if (!knownSet.contains(r->name))
      return llvm::createStringError(
          "unknown dim name '" + r->name + "' in --dim; known: " +
          (known.empty() ? std::string("(none)") : llvm::join(known, ", ")));
    ranges[r->name] = r->range;
  }
  return ranges;
}

//===----------------------------------------------------------------------===//
// JSON values as attributes
//===----------------------------------------------------------------------===//

Attribute mlir::disc::jsonToAttribute(MLIRContext *ctx,
                                      const llvm::json::Value &value) {
  Builder b(ctx);
  if (value.getAsNull())
    return b.getUnitAttr();
  if (std::optional<bool> v = value.getAsBoolean())
    return b.getBoolAttr(*v);
  if (std::optional<int64_t> v = value.getAsInteger())
    return b.getI64IntegerAttr(*v);
  if (std::optional<double> v = value.getAsNumber())
    return b.getF64FloatAttr(*v);
  if (std::optional<StringRef> v = value.getAsString())
    return b.getStringAttr(*v);
  if (const llvm::json::Array *arr = value.getAsArray()) {
    SmallVector<Attribute> elements;
    for (const llvm::json::Value &e : *arr)
      elements.push_back(jsonToAttribute(ctx, e));
    return b.getArrayAttr(elements);
  }
  SmallVector<NamedAttribute> members;
  for (const auto &[key, member] : *value.getAsObject())
    members.push_back(b.getNamedAttr(key, jsonToAttribute(ctx, member)));
  return b.getDictionaryAttr(members);
}

llvm::json::Value mlir::disc::attributeToJson(Attribute attr) {
  if (isa<UnitAttr>(attr))
    return nullptr;
  if (auto v = dyn_cast<BoolAttr>(attr))
    return v.getValue();
  if (auto v = dyn_cast<IntegerAttr>(attr))
    return v.getInt();
  if (auto v = dyn_cast<FloatAttr>(attr))
    return v.getValueAsDouble();
  if (auto v = dyn_cast<StringAttr>(attr))
    return v.str();
  if (auto v = dyn_cast<ArrayAttr>(attr)) {
    llvm::json::Array elements;
    for (Attribute e : v)
      elements.push_back(attributeToJson(e));
    return elements;
  }
  if (auto v = dyn_cast<DictionaryAttr>(attr)) {
    llvm::json::Object members;
    for (NamedAttribute m : v)
      members[m.getName().strref()] = attributeToJson(m.getValue());
    return members;
  }
  std::string text;
  llvm::raw_string_ostream os(text);
  attr.print(os);
  return text;
}

//===----------------------------------------------------------------------===//
// Signature
//===----------------------------------------------------------------------===//

/// Maps an element type to the ABI dtype name (docs/runtime-abi.md).
static FailureOr<std::string> dtypeName(Type type, bool isUnsigned) {
  if (type.isF32())
    return std::string("float32");
  if (type.isF64())
    return std::string("float64");
  if (type.isF16())
    return std::string("float16");
  if (type.isBF16())
    return std::string("bfloat16");
  if (type.isInteger(1))
    return std::string("bool");
  if (auto it = dyn_cast<IntegerType>(type)) {
    unsigned w = it.getWidth();
    if (w == 8 || w == 16 || w == 32 || w == 64)
      return (isUnsigned || it.isUnsigned() ? "uint" : "int") +
             std::to_string(w);
  }
  return failure();
}

/// One signature entry of an argument or result: name, dtype, dims.
static FailureOr<llvm::json::Object>
signatureEntry(func::FuncOp func, Type type, DictionaryAttr attrs,
               StringRef defaultName, bool isInput) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor) {
    func.emitError("entry ") << defaultName << " must be a ranked tensor";
    return failure();
  }
  std::string name = defaultName.str();
  if (auto n = attrs ? attrs.getAs<StringAttr>("disc.name") : nullptr)
    name = n.str();
  bool isUnsigned = attrs && attrs.get("disc.unsigned");
  FailureOr<std::string> dtype = dtypeName(tensor.getElementType(), isUnsigned);
  if (failed(dtype)) {
    func.emitError("unsupported element type ")
        << tensor.getElementType() << " for '" << name << "'";
    return failure();
  }
  ArrayAttr dims = attrs ? attrs.getAs<ArrayAttr>("disc.dims") : nullptr;
  llvm::json::Array shape;
  for (int64_t i = 0; i < tensor.getRank(); ++i) {
    int64_t size = tensor.getDimSize(i);
    if (!ShapedType::isDynamic(size)) {
      shape.push_back(size);
      continue;
    }
    if (dims && i < (int64_t)dims.size())
      if (auto s = dyn_cast<StringAttr>(dims[i])) {
        shape.push_back(s.str());
        continue;
      }
    shape.push_back(isInput ? name + "_d" + std::to_string(i)
                            : std::string("?"));
  }
  llvm::json::Object entry{
      {"name", name}, {"dtype", *dtype}, {"shape", std::move(shape)}};
  // Training state (disc-build-training-step, docs/training.md): an input
  // the session holds, with its initial value, and an output that replaces
  // it after each run.
  if (attrs && attrs.get(disc::kStateAttrName)) {
    entry["state"] = true;
    auto init = attrs.getAs<FlatSymbolRefAttr>(disc::kStateInitAttrName);
    entry["init"] = init ? init.getValue().str() : std::string("zeros");
  }
  if (auto updates =
          attrs ? attrs.getAs<StringAttr>(disc::kStateUpdateAttrName) : nullptr)
    entry["updates"] = updates.str();
  // An optional tensor input: [count, dims...] with count 0 or 1.
  if (attrs && attrs.get("disc.optional"))
    entry["optional"] = true;
  return entry;
}

/// Smallest size of a dynamic input dim without a user range.
static constexpr int64_t kDefaultMinDim = 1;

FailureOr<llvm::json::Object> mlir::disc::buildSignature(func::FuncOp func,
                                                         StringRef modelName) {
  auto module = func->getParentOfType<ModuleOp>();
  llvm::json::Array inputs, outputs, symbols;
  llvm::StringSet<> seen;
  // Ranges of named dims, from `disc_shape.symbolic_dim` ops (disc-compile
  // --dim, the shape passes); read generically to keep this library free of
  // the disc_shape dialect.
  llvm::StringMap<std::pair<int64_t, std::optional<int64_t>>> ranges;
  for (Operation &op : *module.getBody()) {
    if (op.getName().getStringRef() != "disc_shape.symbolic_dim")
      continue;
    auto n = op.getAttrOfType<StringAttr>("name");
    auto mn = op.getAttrOfType<IntegerAttr>("min");
    auto mx = op.getAttrOfType<IntegerAttr>("max");
    if (!n)
      continue;
    ranges[n.getValue()] = {mn ? mn.getInt() : kDefaultMinDim,
                            mx ? std::optional<int64_t>(mx.getInt())
                               : std::nullopt};
  }
  for (auto [i, type] : llvm::enumerate(func.getArgumentTypes())) {
    auto entry = signatureEntry(func, type, func.getArgAttrDict(i),
                                "input_" + std::to_string(i), true);
    if (failed(entry))
      return failure();
    // json::Value(StringRef) does not copy: names are copied into the
    // symbols list, the entries move below.
    for (const llvm::json::Value &d : *entry->getArray("shape"))
      if (auto s = d.getAsString(); s && seen.insert(*s).second) {
        // Without a range, a dynamic dim is at least 1: the shape analysis
        // assumes it (docs/symbolic-shapes.md), so the runtime enforces it.
        int64_t mn = kDefaultMinDim;
        std::optional<int64_t> mx;
        if (auto r = ranges.find(*s); r != ranges.end())
          std::tie(mn, mx) = r->second;
        llvm::json::Value maxValue =
            mx ? llvm::json::Value(*mx) : llvm::json::Value(nullptr);
        symbols.push_back(llvm::json::Object{
            {"name", s->str()}, {"min", mn}, {"max", std::move(maxValue)}});
      }
    inputs.push_back(std::move(*entry));
  }
  for (auto [i, type] : llvm::enumerate(func.getResultTypes())) {
    auto entry = signatureEntry(func, type, func.getResultAttrDict(i),
                                "output_" + std::to_string(i), false);
    if (failed(entry))
      return failure();
    outputs.push_back(std::move(*entry));
  }
  llvm::json::Object sig{{"abi_version", DISC_MODEL_ABI_VERSION},
                         {"model", modelName.str()},
                         {"inputs", std::move(inputs)},
                         {"outputs", std::move(outputs)},
                         {"symbols", std::move(symbols)}};
  if (auto loss = func->getAttrOfType<StringAttr>(disc::kLossAttrName))
    sig["loss"] = loss.str();
  return sig;
}

FailureOr<std::string> mlir::disc::serializeSignature(ModuleOp module,
                                                      StringRef entryName,
                                                      int64_t checksKept,
                                                      int64_t checksDropped) {
  auto sigAttr = module->getAttrOfType<DictionaryAttr>(kSignatureAttrName);
  if (!sigAttr)
    return module.emitError("no '")
           << kSignatureAttrName << "' attribute (disc-attach-signature)";
  llvm::json::Value sig = attributeToJson(sigAttr);
  llvm::json::Object &root = *sig.getAsObject();
  if (auto memory = module->getAttrOfType<DictionaryAttr>(kMemoryAttrName)) {
    root.try_emplace("memory", attributeToJson(memory));
  }
  if (auto remat = module->getAttrOfType<DictionaryAttr>(kRematAttrName))
    root.try_emplace("remat", attributeToJson(remat));
  if (auto points = module->getAttrOfType<ArrayAttr>(kTracePointsAttr))
    root.try_emplace("trace_points", attributeToJson(points));
  // CUDA: bytes and FLOPs of each kernel and library call
  // (disc-gpu-kernel-cost, docs/cuda.md "Roofline").
  if (auto kernels = module->getAttrOfType<ArrayAttr>("disc.kernels"))
    root.try_emplace("kernels", attributeToJson(kernels));
  root["runtime_checks"] =
      llvm::json::Object{{"kept", checksKept}, {"dropped", checksDropped}};
  std::string text;
  llvm::raw_string_ostream os(text);
  os << sig;
  return text;
}

void mlir::disc::getSignatureRanks(ModuleOp module,
                                   SmallVectorImpl<int64_t> &inRanks,
                                   SmallVectorImpl<int64_t> &outRanks) {
  auto sig = module->getAttrOfType<DictionaryAttr>(kSignatureAttrName);
  if (!sig)
    return;
  for (auto [key, ranks] : {std::make_pair("inputs", &inRanks),
                            std::make_pair("outputs", &outRanks)})
    if (auto entries = sig.getAs<ArrayAttr>(key))
      for (Attribute e : entries)
        if (auto entry = dyn_cast<DictionaryAttr>(e))
          if (auto shape = entry.getAs<ArrayAttr>("shape"))
            ranks->push_back(shape.size());
}

bool mlir::disc::isCudaSignature(ModuleOp module) {
  auto sig = module->getAttrOfType<DictionaryAttr>(kSignatureAttrName);
  auto target = sig ? sig.getAs<StringAttr>("target") : StringAttr();
  return target && target.getValue() == "cuda";
}
