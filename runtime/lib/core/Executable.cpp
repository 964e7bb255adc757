//===- Executable.cpp - Loading model.so and parsing its signature --------===//

#include "disc/runtime/Runtime.h"

#include "../cpu/LibraryCalls.h"
#include "disc/runtime/abi.h"

#include "../cuda/Device.h"
#include "Prediction.h"
#include "RematPlanner.h"

#include <dlfcn.h>
#include <link.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <climits>

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

std::vector<int64_t> TensorSpec::staticShape() const {
  std::vector<int64_t> dims;
  dims.reserve(shape.size());
  for (const DimSpec &d : shape)
    dims.push_back(d.size);
  return dims;
}

int64_t Signature::numStates() const {
  int64_t n = 0;
  for (const TensorSpec &spec : inputs)
    n += spec.isState;
  return n;
}

std::vector<int64_t> Signature::runInputs() const {
  std::vector<int64_t> indices;
  for (size_t i = 0; i < inputs.size(); ++i)
    if (!inputs[i].isState)
      indices.push_back(static_cast<int64_t>(i));
  return indices;
}

std::vector<int64_t> Signature::runOutputs() const {
  std::vector<int64_t> indices;
  for (size_t i = 0; i < outputs.size(); ++i)
    if (outputs[i].updates.empty())
      indices.push_back(static_cast<int64_t>(i));
  return indices;
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
        return Status::loadFailed(where + ": dims must be integers or strings");
      }
      spec.shape.push_back(std::move(dim));
    }
    if (auto opt = entry.find("optional"); opt != entry.end()) {
      if (!isInput || !opt->is_boolean() || spec.shape.empty())
        return Status::loadFailed(where + ": 'optional' must be a boolean " +
                                  "of an input of rank >= 1");
      spec.optional = opt->get<bool>();
    }
    // Training state (docs/runtime-abi.md, "Training state").
    if (auto state = entry.find("state"); state != entry.end()) {
      if (!isInput || !state->is_boolean())
        return Status::loadFailed(where + ": 'state' must be a boolean " +
                                  "of an input");
      spec.isState = state->get<bool>();
    }
    if (auto init = entry.find("init"); init != entry.end()) {
      if (!spec.isState || !init->is_string() || init->empty())
        return Status::loadFailed(where + ": 'init' must be a non-empty " +
                                  "string of a state input");
      spec.init = init->get<std::string>();
    } else if (spec.isState) {
      spec.init = "zeros";
    }
    if (spec.isState)
      for (size_t d = 0; d < spec.shape.size(); ++d)
        if (!spec.shape[d].isStatic())
          return Status::loadFailed(where + ": a state input needs a " +
                                    "static shape, dim " + std::to_string(d) +
                                    " is '" + spec.shape[d].toString() + "'");
    if (auto updates = entry.find("updates"); updates != entry.end()) {
      if (isInput || !updates->is_string() || updates->empty())
        return Status::loadFailed(where + ": 'updates' must be a non-empty " +
                                  "string of an output");
      spec.updates = updates->get<std::string>();
    }
    out->push_back(std::move(spec));
  }
  return Status::ok();
}

/// Checks the training fields across entries: each `updates` names a state
/// input, once, with the state's dtype, rank and static dims; `loss`
/// names an output.
Status checkTrainingFields(const Signature &sig) {
  std::vector<bool> updated(sig.inputs.size(), false);
  for (const TensorSpec &out : sig.outputs) {
    if (out.updates.empty())
      continue;
    std::string where =
        "signature: output '" + out.name + "' updates '" + out.updates + "'";
    int64_t i = sig.findInput(out.updates);
    if (i < 0 || !sig.inputs[i].isState)
      return Status::loadFailed(where + ", which is not a state input");
    if (updated[i])
      return Status::loadFailed(where + ", which another output updates too");
    updated[i] = true;
    const TensorSpec &state = sig.inputs[i];
    bool same = out.dtype == state.dtype && out.rank() == state.rank();
    for (int64_t d = 0; same && d < out.rank(); ++d)
      same =
          !out.shape[d].isStatic() || out.shape[d].size == state.shape[d].size;
    if (!same) {
      auto describe = [](const TensorSpec &t) {
        std::string dims;
        for (const DimSpec &d : t.shape)
          dims += (dims.empty() ? "" : ", ") + d.toString();
        return std::string(dtypeName(t.dtype)) + " [" + dims + "]";
      };
      return Status::loadFailed(where + ": the output is " + describe(out) +
                                ", the state " + describe(state));
    }
  }
  if (!sig.loss.empty()) {
    int64_t loss = sig.findOutput(sig.loss);
    if (loss < 0)
      return Status::loadFailed("signature: 'loss' names '" + sig.loss +
                                "', which is not an output");
    if (!sig.outputs[loss].updates.empty())
      return Status::loadFailed("signature: 'loss' names '" + sig.loss +
                                "', an output that updates a state");
  }
  return Status::ok();
}

/// Parses a memory-model expression: an integer, a dim name, or
/// [OP, EXPR, EXPR] (docs/runtime-abi.md).
bool parseSizeExpr(const json &j, SizeExpr *out, int depth = 0) {
  if (depth > 256)
    return false;
  if (j.is_number_integer()) {
    out->kind = SizeExpr::Kind::Constant;
    out->value = j.get<int64_t>();
    return true;
  }
  if (j.is_string()) {
    out->kind = SizeExpr::Kind::Symbol;
    out->symbol = j.get<std::string>();
    return !out->symbol.empty();
  }
  if (!j.is_array() || j.size() != 3 || !j[0].is_string())
    return false;
  static const std::pair<const char *, SizeExpr::Kind> ops[] = {
      {"+", SizeExpr::Kind::Add},
      {"*", SizeExpr::Kind::Mul},
      {"floordiv", SizeExpr::Kind::FloorDiv},
      {"ceildiv", SizeExpr::Kind::CeilDiv},
      {"mod", SizeExpr::Kind::Mod}};
  std::string op = j[0].get<std::string>();
  bool found = false;
  for (const auto &entry : ops)
    if (op == entry.first) {
      out->kind = entry.second;
      found = true;
    }
  if (!found)
    return false;
  out->operands.resize(2);
  return parseSizeExpr(j[1], &out->operands[0], depth + 1) &&
         parseSizeExpr(j[2], &out->operands[1], depth + 1);
}

/// Sets `*out` to the string member `key` of object `o`; leaves it when
/// the member is missing or not a string (optional signature fields).
void readStringField(const json &o, const char *key, std::string *out) {
  auto it = o.find(key);
  if (it != o.end() && it->is_string())
    *out = it->get<std::string>();
}

/// Parses a "library_calls" array (docs/runtime-abi.md) into `out`.
/// Errors: LoadFailed, prefixed with `where`.
Status parseLibraryCalls(const json &calls, const std::string &where,
                         std::vector<LibraryCallSpec> *out) {
  auto bad = [&](size_t i, const std::string &what) {
    return Status::loadFailed(where + "library_calls[" + std::to_string(i) +
                              "]: " + what);
  };
  if (!calls.is_array())
    return Status::loadFailed(where + "'library_calls' must be an array");
  for (size_t i = 0; i < calls.size(); ++i) {
    const json &c = calls[i];
    LibraryCallSpec spec;
    if (!c.is_object() || !c.contains("call") || !c["call"].is_number_integer())
      return bad(i, "needs an integer 'call'");
    spec.call = c["call"].get<int32_t>();
    if (!c.contains("at") || !parseSizeExpr(c["at"], &spec.at))
      return bad(i, "'at' is not an expression");
    if (auto x = c.find("index"); x != c.end() && x->is_number_integer())
      spec.index = x->get<int64_t>();
    if (!c.contains("operands") || !c["operands"].is_array())
      return bad(i, "needs an 'operands' array");
    for (const json &o : c["operands"]) {
      if (!o.is_object() || !o.contains("sizes") || !o.contains("strides") ||
          !o["sizes"].is_array() || !o["strides"].is_array() ||
          o["sizes"].size() != o["strides"].size())
        return bad(i, "operands need 'sizes' and 'strides' of one rank");
      std::vector<SizeExpr> sz(o["sizes"].size()), st(sz.size());
      for (size_t d = 0; d < sz.size(); ++d)
        if (!parseSizeExpr(o["sizes"][d], &sz[d]) ||
            !parseSizeExpr(o["strides"][d], &st[d]))
          return bad(i, "an operand dim is not an expression");
      spec.sizes.push_back(std::move(sz));
      spec.strides.push_back(std::move(st));
    }
    if (!c.contains("attrs") || !c["attrs"].is_array())
      return bad(i, "needs an 'attrs' array");
    for (const json &a : c["attrs"]) {
      if (!a.is_number_integer())
        return bad(i, "attrs must be integers");
      spec.attrs.push_back(a.get<int64_t>());
    }
    out->push_back(std::move(spec));
  }
  return Status::ok();
}

Status parseMemorySpec(const json &j, MemorySpec *out) {
  if (!j.is_object())
    return Status::loadFailed("signature: 'memory' must be an object");
  out->present = true;
  auto predictable = j.find("predictable");
  if (predictable == j.end() || !predictable->is_boolean())
    return Status::loadFailed(
        "signature: memory: 'predictable' must be a boolean");
  out->predictable = predictable->get<bool>();
  if (auto r = j.find("reason"); r != j.end() && r->is_string())
    out->reason = r->get<std::string>();
  if (auto n = j.find("num_allocs"); n != j.end() && n->is_number_integer())
    out->numAllocs = n->get<int64_t>();
  if (auto u = j.find("upper_bound"); u != j.end()) {
    if (!u->is_boolean())
      return Status::loadFailed(
          "signature: memory: 'upper_bound' must be a boolean");
    out->upperBound = u->get<bool>();
  }
  if (auto r = j.find("bound_reason"); r != j.end() && r->is_string())
    out->boundReason = r->get<std::string>();
  if (!out->predictable)
    return Status::ok();
  auto peak = j.find("peak_bytes");
  if (peak == j.end() || !peak->is_array() || peak->empty())
    return Status::loadFailed(
        "signature: memory: 'peak_bytes' must be a non-empty array");
  for (size_t i = 0; i < peak->size(); ++i) {
    SizeExpr e;
    if (!parseSizeExpr((*peak)[i], &e))
      return Status::loadFailed("signature: memory: peak_bytes[" +
                                std::to_string(i) + "] is not an expression");
    out->peakBytes.push_back(std::move(e));
  }
  if (auto t = j.find("peak_bytes_text"); t != j.end() && t->is_array())
    for (const json &x : *t)
      if (x.is_string())
        out->peakBytesText.push_back(x.get<std::string>());
  if (auto calls = j.find("library_calls"); calls != j.end())
    if (Status st = parseLibraryCalls(
            *calls, "signature: memory: ", &out->libraryCalls);
        !st)
      return st;
  return Status::ok();
}

Status parseRematSpec(const json &j, RematSpec *out) {
  auto bad = [](const std::string &what) {
    return Status::loadFailed("signature: remat: " + what);
  };
  if (!j.is_object())
    return bad("must be an object");
  auto cands = j.find("candidates");
  if (cands == j.end() || !cands->is_array())
    return bad("'candidates' must be an array");
  auto exprList = [&](const json &a, const std::string &name,
                      std::vector<SizeExpr> *list) -> Status {
    if (!a.is_array())
      return bad("'" + name + "' must be an array");
    for (size_t i = 0; i < a.size(); ++i) {
      SizeExpr e;
      if (!parseSizeExpr(a[i], &e))
        return bad(name + "[" + std::to_string(i) + "] is not an expression");
      list->push_back(std::move(e));
    }
    return Status::ok();
  };
  bool lists = j.contains("live_before") && j.contains("points") &&
               j["points"].is_array() && j.contains("exit_points");
  // Without candidates the live bytes per program point are optional (the
  // timeline's prediction, docs/memory.md "Timeline") and `present` stays
  // false: there is nothing to rematerialize.
  if (cands->empty() && !lists)
    return Status::ok();
  if (!lists)
    return bad("'live_before', 'points' and 'exit_points' are required");
  if (Status s = exprList(j["live_before"], "live_before", &out->liveBefore);
      !s)
    return s;
  for (const json &pts : j["points"]) {
    out->points.emplace_back();
    if (Status s = exprList(pts, "points", &out->points.back()); !s)
      return s;
  }
  if (Status s = exprList(j["exit_points"], "exit_points", &out->exitPoints);
      !s)
    return s;
  if (out->points.size() != out->liveBefore.size())
    return bad("'points' and 'live_before' differ in length");
  if (cands->empty())
    return Status::ok();
  int64_t n = static_cast<int64_t>(out->points.size());
  for (const json &c : *cands) {
    RematCandidateSpec spec;
    if (!c.is_object() || !c.contains("evict_after") ||
        !c["evict_after"].is_number_integer() ||
        !c.contains("regenerate_before") ||
        !c["regenerate_before"].is_number_integer() || !c.contains("bytes") ||
        !parseSizeExpr(c["bytes"], &spec.bytes) ||
        !c.contains("recompute_peak_bytes") ||
        !parseSizeExpr(c["recompute_peak_bytes"], &spec.recomputePeakBytes) ||
        !c.contains("flops") || !parseSizeExpr(c["flops"], &spec.flops))
      return bad("candidate " + std::to_string(out->candidates.size()) +
                 " needs evict_after, regenerate_before, bytes, "
                 "recompute_peak_bytes and flops");
    spec.evictAfter = c["evict_after"].get<int64_t>();
    spec.regenerateBefore = c["regenerate_before"].get<int64_t>();
    if (spec.evictAfter < 0 || spec.regenerateBefore <= spec.evictAfter ||
        spec.regenerateBefore >= n)
      return bad("candidate " + std::to_string(out->candidates.size()) +
                 " has points outside the op range");
    if (auto t = c.find("recompute_points"); t != c.end() && t->is_array())
      for (const json &e : *t) {
        spec.recomputePoints.emplace_back();
        if (!parseSizeExpr(e, &spec.recomputePoints.back()))
          return bad("candidate " + std::to_string(out->candidates.size()) +
                     " has a bad recompute_points entry");
      }
    spec.regenerateOrder = static_cast<int64_t>(out->candidates.size());
    if (auto t = c.find("regenerate_order");
        t != c.end() && t->is_number_integer())
      spec.regenerateOrder = t->get<int64_t>();
    if (auto t = c.find("producer"); t != c.end() && t->is_string())
      spec.producer = t->get<std::string>();
    if (auto t = c.find("bytes_text"); t != c.end() && t->is_string())
      spec.bytesText = t->get<std::string>();
    if (auto t = c.find("flops_text"); t != c.end() && t->is_string())
      spec.flopsText = t->get<std::string>();
    if (auto t = c.find("reads"); t != c.end() && t->is_array())
      for (const json &r : *t) {
        if (!r.is_number_integer() || r.get<int64_t>() < 0 ||
            r.get<int64_t>() >= static_cast<int64_t>(cands->size()))
          return bad("candidate " + std::to_string(out->candidates.size()) +
                     " reads an unknown candidate");
        spec.reads.push_back(r.get<int64_t>());
      }
    if (auto t = c.find("library_calls"); t != c.end())
      if (Status st = parseLibraryCalls(
              *t,
              "signature: remat: candidate " +
                  std::to_string(out->candidates.size()) + ": ",
              &spec.libraryCalls);
          !st)
        return st;
    out->candidates.push_back(std::move(spec));
  }
  out->present = true;
  return Status::ok();
}

} // namespace

std::optional<int64_t>
SizeExpr::evaluate(const std::map<std::string, int64_t> &dims) const {
  switch (kind) {
  case Kind::Constant:
    return value;
  case Kind::Symbol: {
    auto it = dims.find(symbol);
    if (it == dims.end())
      return std::nullopt;
    return it->second;
  }
  default:
    break;
  }
  if (operands.size() != 2)
    return std::nullopt;
  std::optional<int64_t> l = operands[0].evaluate(dims);
  std::optional<int64_t> r = operands[1].evaluate(dims);
  if (!l || !r)
    return std::nullopt;
  int64_t a = *l, b = *r, v = 0;
  switch (kind) {
  case Kind::Add:
    if (__builtin_add_overflow(a, b, &v))
      return std::nullopt;
    return v;
  case Kind::Mul:
    if (__builtin_mul_overflow(a, b, &v))
      return std::nullopt;
    return v;
  case Kind::FloorDiv:
  case Kind::CeilDiv: {
    if (b == 0 || (a == INT64_MIN && b == -1))
      return std::nullopt;
    int64_t q = a / b;
    bool inexact = a % b != 0;
    if (kind == Kind::FloorDiv)
      return (inexact && ((a < 0) != (b < 0))) ? q - 1 : q;
    return (inexact && ((a < 0) == (b < 0))) ? q + 1 : q;
  }
  case Kind::Mod: {
    if (b == 0 || (a == INT64_MIN && b == -1))
      return std::nullopt;
    int64_t m = a % b;
    return m < 0 ? m + (b < 0 ? -b : b) : m;
  }
  default:
    return std::nullopt;
  }
}

Status Signature::bindDims(const std::vector<std::vector<int64_t>> &shapes,
                           std::map<std::string, int64_t> *out) const {
  out->clear();
  // A model with state: the shapes of the run inputs, with the static
  // shapes of the state inputs put in their places.
  std::vector<std::vector<int64_t>> expanded;
  int64_t numState = numStates();
  if (numState > 0 &&
      shapes.size() == inputs.size() - static_cast<size_t>(numState)) {
    size_t next = 0;
    for (const TensorSpec &spec : inputs)
      expanded.push_back(spec.isState ? spec.staticShape() : shapes[next++]);
  }
  const std::vector<std::vector<int64_t>> &inputShapes =
      expanded.empty() ? shapes : expanded;
  if (inputShapes.size() != inputs.size())
    return Status::invalidArgument(
        "expected " +
        std::to_string(static_cast<int64_t>(inputs.size()) - numState) +
        " input shapes " +
        (numState > 0
             ? "(" + std::to_string(inputs.size()) + " with the state inputs) "
             : std::string()) +
        "but got " + std::to_string(inputShapes.size()));
  std::map<std::string, std::pair<size_t, size_t>> where;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const TensorSpec &spec = inputs[i];
    const std::vector<int64_t> &shape = inputShapes[i];
    std::string who = "input '" + spec.name + "'";
    if (static_cast<int64_t>(shape.size()) != spec.rank())
      return Status::invalidArgument(
          who + ": expected rank " + std::to_string(spec.rank()) +
          " but got rank " + std::to_string(shape.size()));
    for (size_t d = 0; d < shape.size(); ++d) {
      const DimSpec &dim = spec.shape[d];
      int64_t got = shape[d];
      std::string at = who + " dim " + std::to_string(d);
      if (got < 0)
        return Status::invalidArgument(at + ": negative size " +
                                       std::to_string(got));
      if (dim.isStatic()) {
        if (got != dim.size)
          return Status::invalidArgument(at + ": expected " +
                                         std::to_string(dim.size) +
                                         " but got " + std::to_string(got));
        continue;
      }
      if (!dim.isSymbolic())
        continue;
      at += " ('" + dim.symbol + "')";
      auto it = out->find(dim.symbol);
      if (it != out->end()) {
        if (it->second != got) {
          auto [pi, pd] = where[dim.symbol];
          return Status::invalidArgument(
              at + ": got " + std::to_string(got) + " but input '" +
              inputs[pi].name + "' dim " + std::to_string(pd) + " has '" +
              dim.symbol + "' = " + std::to_string(it->second));
        }
        continue;
      }
      if (const SymbolSpec *sym = findSymbol(dim.symbol))
        if (got < sym->min || (sym->max && got > *sym->max))
          return Status::invalidArgument(
              at + ": got " + std::to_string(got) + ", outside the range [" +
              std::to_string(sym->min) + ", " +
              (sym->max ? std::to_string(*sym->max) + "]"
                        : std::string("inf)")) +
              " of '" + dim.symbol + "'");
      (*out)[dim.symbol] = got;
      where[dim.symbol] = {i, d};
    }
  }
  return Status::ok();
}

Status Executable::predictPeakBytes(
    const std::vector<std::vector<int64_t>> &inputShapes,
    int64_t *bytes) const {
  return predictPeakBytes(inputShapes, bytes, 0);
}

Status Executable::predictPeakBytes(
    const std::vector<std::vector<int64_t>> &inputShapes, int64_t *bytes,
    int32_t numThreads) const {
  return predictPeakBytes(inputShapes, bytes, numThreads, nullptr);
}

Status Executable::predictPeakBytes(
    const std::vector<std::vector<int64_t>> &inputShapes, int64_t *bytes,
    int32_t numThreads, std::string *unpredictableReason) const {
  if (!bytes)
    return Status::invalidArgument("predictPeakBytes: bytes must not be null");
  std::map<std::string, int64_t> dims;
  if (Status s = signature_.bindDims(inputShapes, &dims); !s)
    return s;
  std::optional<runtime::cpu::LibraryCalls> library;
  return runtime::predictPeakAt(
      signature_, dims,
      [&]() -> runtime::cpu::LibraryCalls & {
        if (!library)
          library.emplace(/*maxPrimitives=*/64, numThreads,
                          /*winograd=*/signature_.numStates() == 0);
        return *library;
      },
      bytes, unpredictableReason);
}

Status runtime::libraryCallPeak(
    const LibraryCallSpec &c, const std::map<std::string, int64_t> &dims,
    const std::function<cpu::LibraryCalls &()> &library,
    const std::string &where, std::optional<int64_t> *peak) {
  peak->reset();
  std::optional<int64_t> at = c.at.evaluate(dims);
  if (!at)
    return Status::ok();
  std::vector<std::vector<int64_t>> words(c.sizes.size());
  std::vector<void *> operands;
  std::vector<int32_t> ranks;
  for (size_t o = 0; o < c.sizes.size(); ++o) {
    std::vector<int64_t> &w = words[o];
    w = {0, 0, 0};
    for (const std::vector<SizeExpr> *part : {&c.sizes[o], &c.strides[o]})
      for (const SizeExpr &e : *part) {
        std::optional<int64_t> v = e.evaluate(dims);
        if (!v)
          return Status::ok();
        w.push_back(*v);
      }
    operands.push_back(w.data());
    ranks.push_back(static_cast<int32_t>(c.sizes[o].size()));
  }
  int64_t temps = 0;
  std::string error;
  int32_t st = library().temporaryBytes(
      c.call, static_cast<int32_t>(operands.size()), operands.data(),
      ranks.data(), static_cast<int32_t>(c.attrs.size()), c.attrs.data(),
      &temps, error);
  if (st == 1)
    return Status::invalidArgument(error);
  if (st != 0)
    return Status::internal("memory model: " + where + ": " + error);
  *peak = *at + temps;
  return Status::ok();
}

Status
runtime::predictPeakAt(const Signature &sig,
                       const std::map<std::string, int64_t> &dims,
                       const std::function<cpu::LibraryCalls &()> &library,
                       int64_t *bytes, std::string *unpredictableReason) {
  const MemorySpec &mem = sig.memory;
  *bytes = -1;
  if (!mem.present || !mem.predictable) {
    if (unpredictableReason)
      *unpredictableReason = mem.present ? mem.reason : "no memory model";
    return Status::ok();
  }
  // An expression that cannot be evaluated at these dims (a division by
  // zero, a size that overflows) leaves the run without a prediction; it
  // never fails the run.
  auto unpredictable = [&](const std::string &what) {
    if (unpredictableReason)
      *unpredictableReason =
          "memory model: " + what + " cannot be evaluated at these shapes";
    return Status::ok();
  };
  int64_t best = 0;
  for (size_t i = 0; i < mem.peakBytes.size(); ++i) {
    std::optional<int64_t> v = mem.peakBytes[i].evaluate(dims);
    if (!v)
      return unpredictable("peak_bytes[" + std::to_string(i) + "]");
    best = std::max(best, *v);
  }
  // Library calls: the live bytes at the call plus what oneDNN takes for
  // these shapes (its primitives are created, not run).
  for (size_t i = 0; i < mem.libraryCalls.size(); ++i) {
    std::string where = "library_calls[" + std::to_string(i) + "]";
    std::optional<int64_t> at;
    if (Status s =
            libraryCallPeak(mem.libraryCalls[i], dims, library, where, &at);
        !s)
      return s;
    if (!at)
      return unpredictable(where);
    best = std::max(best, *at);
  }
  *bytes = best;
  return Status::ok();
}

Status
runtime::rematProfileAt(const Signature &sig,
                        const std::map<std::string, int64_t> &dims,
                        const std::function<cpu::LibraryCalls &()> &library,
                        RematProfile *profile) {
  std::string error;
  if (!evaluateRematProfile(sig.remat, dims, profile, &error))
    return Status::internal("remat: " + error);
  // Library-call temporaries: at each call of the run, and at each call of
  // a recompute, so the minimum peak and every eviction decision count
  // them.
  for (const LibraryCallSpec &c : sig.memory.libraryCalls) {
    if (c.index < 0 || c.index >= static_cast<int64_t>(profile->points.size()))
      continue;
    std::optional<int64_t> at;
    if (Status s = libraryCallPeak(c, dims, library, "library call", &at); !s)
      return s;
    if (at)
      profile->points[c.index].push_back(*at);
  }
  for (size_t k = 0; k < sig.remat.candidates.size(); ++k) {
    std::string who = "remat: candidate " + std::to_string(k);
    for (const LibraryCallSpec &c : sig.remat.candidates[k].libraryCalls) {
      std::optional<int64_t> at;
      if (Status s = libraryCallPeak(c, dims, library, who, &at); !s)
        return s;
      if (!at)
        return Status::internal(who + ": a library call cannot be evaluated "
                                      "at these shapes");
      RematProfile::Candidate &cand = profile->candidates[k];
      cand.recomputePeak = std::max(cand.recomputePeak, *at);
    }
  }
  return Status::ok();
}

Status Executable::predictMinimumPeakBytes(
    const std::vector<std::vector<int64_t>> &inputShapes,
    int64_t *bytes) const {
  if (Status s = predictPeakBytes(inputShapes, bytes); !s || *bytes < 0)
    return s;
  if (!signature_.remat.present)
    return Status::ok();
  std::map<std::string, int64_t> dims;
  if (Status s = signature_.bindDims(inputShapes, &dims); !s)
    return s;
  std::optional<runtime::cpu::LibraryCalls> library;
  runtime::RematProfile profile;
  if (Status s = runtime::rematProfileAt(
          signature_, dims,
          [&]() -> runtime::cpu::LibraryCalls & {
            if (!library)
              library.emplace(/*maxPrimitives=*/64, 0,
                              /*winograd=*/signature_.numStates() == 0);
            return *library;
          },
          &profile);
      !s)
    return s;
  runtime::RematPlanner planner(std::move(profile), 0,
                                runtime::RematPolicyKind::LargestFirst);
  *bytes = std::min(*bytes, planner.minimumPeak());
  return Status::ok();
}

namespace {

/// The optional integer `key` ("min" or "max") of the entry of symbol
/// `name`: unset when absent or null. Errors: LoadFailed for another type.
Status parseBound(const json &entry, const char *key, const std::string &name,
                  std::optional<int64_t> *out) {
  auto it = entry.find(key);
  if (it == entry.end() || it->is_null())
    return Status::ok();
  if (!it->is_number_integer())
    return Status::loadFailed("signature: symbol '" + name + "': '" + key +
                              "' must be an integer or null");
  *out = it->get<int64_t>();
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
  if (auto target = root.find("target"); target != root.end()) {
    if (!target->is_string() || (*target != "cpu" && *target != "cuda"))
      return Status::loadFailed(
          "signature: 'target' must be \"cpu\" or \"cuda\"");
    sig.target = target->get<std::string>();
  }
  if (auto arch = root.find("gpu_arch");
      arch != root.end() && arch->is_string())
    sig.gpuArch = arch->get<std::string>();
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
      std::optional<int64_t> min;
      if (Status s = parseBound(entry, "min", sym.name, &min); !s)
        return s;
      sym.min = min.value_or(sym.min);
      if (Status s = parseBound(entry, "max", sym.name, &sym.max); !s)
        return s;
      sig.symbols.push_back(std::move(sym));
    }
  }
  if (auto memory = root.find("memory");
      memory != root.end() && !memory->is_null())
    if (Status s = parseMemorySpec(*memory, &sig.memory); !s)
      return s;
  if (auto remat = root.find("remat"); remat != root.end() && !remat->is_null())
    if (Status s = parseRematSpec(*remat, &sig.remat); !s)
      return s;
  if (auto points = root.find("trace_points");
      points != root.end() && !points->is_null()) {
    if (!points->is_array())
      return Status::loadFailed("signature: 'trace_points' must be an array");
    for (const json &p : *points) {
      if (!p.is_object())
        return Status::loadFailed(
            "signature: 'trace_points' entries must be objects");
      TracePointSpec t;
      readStringField(p, "name", &t.name);
      readStringField(p, "op_type", &t.opType);
      readStringField(p, "kind", &t.kind);
      if (auto op = p.find("op"); op != p.end() && op->is_number_integer())
        t.op = op->get<int64_t>();
      sig.tracePoints.push_back(std::move(t));
    }
  }
  if (auto kernels = root.find("kernels");
      kernels != root.end() && kernels->is_array()) {
    for (const json &k : *kernels) {
      if (!k.is_object())
        return Status::loadFailed(
            "signature: 'kernels' entries must be objects");
      KernelSpec spec;
      readStringField(k, "name", &spec.name);
      readStringField(k, "node", &spec.node);
      readStringField(k, "runs", &spec.runs);
      if (auto lib = k.find("library"); lib != k.end() && lib->is_boolean())
        spec.library = lib->get<bool>();
      sig.kernels.push_back(std::move(spec));
    }
  }
  if (auto loss = root.find("loss"); loss != root.end() && !loss->is_null()) {
    if (!loss->is_string() || loss->empty())
      return Status::loadFailed("signature: 'loss' must be an output name");
    sig.loss = loss->get<std::string>();
  }
  if (Status s = checkTrainingFields(sig); !s)
    return s;
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
      dlsym(handle, DISC_MODEL_ABI_VERSION_SYMBOL));
  auto signatureFn = reinterpret_cast<disc_model_signature_fn>(
      dlsym(handle, DISC_MODEL_SIGNATURE_SYMBOL));
  void *runFn = dlsym(handle, DISC_MODEL_RUN_SYMBOL);
  if (!versionFn || !signatureFn || !runFn) {
    const char *missing = !versionFn     ? DISC_MODEL_ABI_VERSION_SYMBOL
                          : !signatureFn ? DISC_MODEL_SIGNATURE_SYMBOL
                                         : DISC_MODEL_RUN_SYMBOL;
    return Status::loadFailed("'" + path + "' does not export '" + missing +
                              "'; is it a DISC model?");
  }
  int32_t version = versionFn();
  // Version 2 to 4 models use a prefix of the current context.
  if (version < 2 || version > DISC_MODEL_ABI_VERSION)
    return Status::loadFailed("'" + path + "' has model ABI version " +
                              std::to_string(version) + ", runtime expects " +
                              std::to_string(DISC_MODEL_ABI_VERSION));
  const char *sigText = signatureFn();
  if (!sigText)
    return Status::loadFailed("'" + path + "': disc_model_signature() is null");
  exe->signatureJson_ = sigText;
  if (Status s = Signature::parse(exe->signatureJson_, &exe->signature_); !s)
    return Status::loadFailed("'" + path + "': " + s.message());
  if (exe->signature_.target == "cuda") {
    // A CUDA model needs the driver and a device; say so now rather than
    // at the first run (docs/cuda.md).
    std::string why;
    if (!runtime::cuda::probeDevice(&why))
      return Status::loadFailed("'" + path + "' is a CUDA model (" +
                                exe->signature_.gpuArch + "): " + why);
  }
  // Initial values of the state inputs: exported data symbols of model.so.
  const Signature &sig = exe->signature_;
  exe->stateInit_.assign(sig.inputs.size(), nullptr);
  for (size_t i = 0; i < sig.inputs.size(); ++i) {
    const TensorSpec &spec = sig.inputs[i];
    if (!spec.isState || spec.init == "zeros")
      continue;
    std::string who = "'" + path + "': state input '" + spec.name + "'";
    void *value = dlsym(handle, spec.init.c_str());
    if (!value)
      return Status::loadFailed(who + ": the model does not export its " +
                                "initial value '" + spec.init + "'");
    int64_t bytes = numElementsOf(spec.staticShape()) * dtypeSize(spec.dtype);
    Dl_info info;
    void *entry = nullptr;
    const auto *sym = dladdr1(value, &info, &entry, RTLD_DL_SYMENT)
                          ? static_cast<const ElfW(Sym) *>(entry)
                          : nullptr;
    if (sym && sym->st_size != 0 &&
        static_cast<uint64_t>(sym->st_size) < static_cast<uint64_t>(bytes))
      return Status::loadFailed(who + ": its initial value '" + spec.init +
                                "' has " + std::to_string(sym->st_size) +
                                " bytes, the state needs " +
                                std::to_string(bytes));
    exe->stateInit_[i] = value;
  }
  exe->runFn_ = runFn;
  *out = std::move(exe);
  return Status::ok();
}

const void *Executable::stateInitValue(int64_t index) const {
  if (index < 0 || index >= static_cast<int64_t>(stateInit_.size()))
    return nullptr;
  return stateInit_[index];
}

Executable::~Executable() {
  if (handle_)
    dlclose(handle_);
}

} // namespace disc
