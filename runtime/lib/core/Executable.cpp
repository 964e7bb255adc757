//===- Executable.cpp - Loading model.so and parsing its signature --------===//

#include "disc/runtime/Runtime.h"
#include "disc/runtime/abi.h"

#include <dlfcn.h>
#include <nlohmann/json.hpp>

namespace disc {

using json = nlohmann::json;

std::string DimSpec::toString() const {
  if (isStatic())
    return std::to_string(size);
  if (isSymbolic())
    return symbol;
  return "?";
}

const SymbolSpec *Signature::findSymbol(std::string_view name) const {
  for (const SymbolSpec &s : symbols)
    if (s.name == name)
      return &s;
  return nullptr;
}

int64_t Signature::findInput(std::string_view name) const {
  for (size_t i = 0; i < inputs.size(); ++i)
    if (inputs[i].name == name)
      return static_cast<int64_t>(i);
  return -1;
}

int64_t Signature::findOutput(std::string_view name) const {
  for (size_t i = 0; i < outputs.size(); ++i)
    if (outputs[i].name == name)
      return static_cast<int64_t>(i);
  return -1;
}

namespace {

Status parseTensorSpecs(const json &root, const char *key, bool isInput,
                        std::vector<TensorSpec> *out) {
  auto it = root.find(key);
  if (it == root.end() || !it->is_array())
    return Status::loadFailed(std::string("signature: '") + key +
                              "' must be an array");
  for (size_t i = 0; i < it->size(); ++i) {
    const json &entry = (*it)[i];
    std::string where =
        std::string("signature: ") + key + "[" + std::to_string(i) + "]";
    if (!entry.is_object())
      return Status::loadFailed(where + " must be an object");
    TensorSpec spec;
    auto name = entry.find("name");
    if (name == entry.end() || !name->is_string())
      return Status::loadFailed(where + ": 'name' must be a string");
    spec.name = name->get<std::string>();
    where += " ('" + spec.name + "')";
    auto dtype = entry.find("dtype");
    if (dtype == entry.end() || !dtype->is_string() ||
        !parseDType(dtype->get<std::string>(), &spec.dtype))
      return Status::loadFailed(where + ": unknown or missing 'dtype'");
    auto shape = entry.find("shape");
    if (shape == entry.end() || !shape->is_array())
      return Status::loadFailed(where + ": 'shape' must be an array");
    for (const json &d : *shape) {
      DimSpec dim;
      if (d.is_number_integer()) {
        dim.size = d.get<int64_t>();
        if (dim.size < 0)
          return Status::loadFailed(where + ": negative static dim");
      } else if (d.is_string()) {
        std::string s = d.get<std::string>();
        if (s.empty())
          return Status::loadFailed(where + ": empty dim name");
        if (s != "?")
          dim.symbol = s;
        else if (isInput)
          return Status::loadFailed(where + ": input dims cannot be '?'");
      } else if (d.is_null()) {
        if (isInput)
          return Status::loadFailed(where + ": input dims cannot be null");
      } else {
        return Status::loadFailed(where +
                                  ": dims must be integers or strings");
      }
      spec.shape.push_back(std::move(dim));
    }
    out->push_back(std::move(spec));
  }
  return Status::ok();
}

} // namespace

Status Signature::parse(std::string_view text, Signature *out) {
  json root = json::parse(text.begin(), text.end(), /*cb=*/nullptr,
                          /*allow_exceptions=*/false);
  if (root.is_discarded())
    return Status::loadFailed("signature: invalid JSON");
  if (!root.is_object())
    return Status::loadFailed("signature: top level must be an object");
  Signature sig;
  auto version = root.find("abi_version");
  if (version != root.end()) {
    if (!version->is_number_integer())
      return Status::loadFailed("signature: 'abi_version' must be an integer");
    sig.abiVersion = version->get<int32_t>();
  }
  auto model = root.find("model");
  if (model != root.end() && model->is_string())
    sig.model = model->get<std::string>();
  if (Status s = parseTensorSpecs(root, "inputs", true, &sig.inputs); !s)
    return s;
  if (Status s = parseTensorSpecs(root, "outputs", false, &sig.outputs); !s)
    return s;
  auto symbols = root.find("symbols");
  if (symbols != root.end() && !symbols->is_null()) {
    if (!symbols->is_array())
      return Status::loadFailed("signature: 'symbols' must be an array");
    for (const json &entry : *symbols) {
      SymbolSpec sym;
      if (!entry.is_object() || !entry.contains("name") ||
          !entry["name"].is_string())
        return Status::loadFailed("signature: symbols need a string 'name'");
      sym.name = entry["name"].get<std::string>();
      auto min = entry.find("min");
      if (min != entry.end() && !min->is_null()) {
        if (!min->is_number_integer())
          return Status::loadFailed("signature: symbol '" + sym.name +
                                    "': 'min' must be an integer or null");
        sym.min = min->get<int64_t>();
      }
      auto max = entry.find("max");
      if (max != entry.end() && !max->is_null()) {
        if (!max->is_number_integer())
          return Status::loadFailed("signature: symbol '" + sym.name +
                                    "': 'max' must be an integer or null");
        sym.max = max->get<int64_t>();
      }
      sig.symbols.push_back(std::move(sym));
    }
  }
  *out = std::move(sig);
  return Status::ok();
}

Status Executable::load(const std::string &path,
                        std::shared_ptr<const Executable> *out) {
  if (!out)
    return Status::invalidArgument("Executable::load: out must not be null");
  try {
    return loadImpl(path, out);
  } catch (const std::exception &e) {
    return Status::loadFailed("'" + path + "': " + e.what());
  }
}

Status Executable::loadImpl(const std::string &path,
                            std::shared_ptr<const Executable> *out) {
  dlerror();
  // A bare file name would make dlopen search the library path instead of
  // the current directory.
  std::string openPath =
      path.find('/') == std::string::npos ? "./" + path : path;
  void *handle = dlopen(openPath.c_str(), RTLD_LOCAL | RTLD_NOW);
  if (!handle) {
    const char *err = dlerror();
    return Status::loadFailed("cannot load '" + path +
                              "': " + (err ? err : "unknown dlopen error"));
  }
  std::shared_ptr<Executable> exe(new Executable());
  exe->path_ = path;
  exe->handle_ = handle; // Closed by ~Executable on every error path below.

  auto versionFn = reinterpret_cast<disc_model_abi_version_fn>(
      dlsym(handle, "disc_model_abi_version"));
  auto signatureFn = reinterpret_cast<disc_model_signature_fn>(
      dlsym(handle, "disc_model_signature"));
  void *runFn = dlsym(handle, "disc_model_run");
  if (!versionFn || !signatureFn || !runFn) {
    const char *missing = !versionFn     ? "disc_model_abi_version"
                          : !signatureFn ? "disc_model_signature"
                                         : "disc_model_run";
    return Status::loadFailed("'" + path + "' does not export '" + missing +
                              "'; is it a DISC model?");
  }
  int32_t version = versionFn();
  if (version != DISC_MODEL_ABI_VERSION)
    return Status::loadFailed("'" + path + "' has model ABI version " +
                              std::to_string(version) + ", runtime expects " +
                              std::to_string(DISC_MODEL_ABI_VERSION));
  const char *sigText = signatureFn();
  if (!sigText)
    return Status::loadFailed("'" + path + "': disc_model_signature() is null");
  exe->signatureJson_ = sigText;
  if (Status s = Signature::parse(exe->signatureJson_, &exe->signature_); !s)
    return Status::loadFailed("'" + path + "': " + s.message());
  exe->runFn_ = runFn;
  *out = std::move(exe);
  return Status::ok();
}

Executable::~Executable() {
  if (handle_)
    dlclose(handle_);
}

} // namespace disc
