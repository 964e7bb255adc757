//===- disc-run.cpp - Run a compiled DISC model.so and check its outputs --===//
//
// disc-run MODEL.so [--input NAME=FILE]... [--compare NAME=FILE]...
//   [--rtol R] [--atol A] [--repeat N] [--report FILE.json]
//   [--output-dir DIR] [--memory-limit BYTES|N%] [--seed S]
//   [--remat-policy largest|dtr] [--evict-by auto|recompute|offload]
//   [--threads N] [--steps N] [--load-params DIR] [--save-params DIR]
//   [--trace FILE.json] [--memory-plot FILE.svg] [--cuda-graphs N]
//   [--subnormals flush|keep]
//
// Exit codes: 0 ok, 1 comparison failed, 2 bad usage / input / load failure,
// 3 memory limit exceeded, 4 internal or model error. See
// docs/runtime-api.md.
//
//===----------------------------------------------------------------------===//

#include "TensorIO.h"
#include "disc/runtime/Runtime.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <initializer_list>
#include <iostream>
#include <limits>
#include <map>
#include <regex>
#include <set>
#include <sys/stat.h>
#include <utility>

using namespace disc;
using json = nlohmann::json;

namespace {

enum ExitCode {
  kExitOk = 0,
  kExitCompareFailed = 1,
  kExitUsage = 2,
  kExitMemoryLimit = 3,
  kExitInternal = 4,
};

const char *kUsage =
    "usage: disc-run MODEL.so [--input NAME=FILE]... [--compare NAME=FILE]...\n"
    "                [--rtol R] [--atol A] [--repeat N] [--report FILE.json]\n"
    "                [--output-dir DIR] [--memory-limit BYTES|N%] [--seed S]\n"
    "                [--remat-policy largest|dtr] [--threads N]\n"
    "                [--evict-by auto|recompute|offload]\n"
    "                [--steps N] [--load-params DIR] [--save-params DIR]\n"
    "                [--trace FILE.json] [--memory-plot FILE.svg]\n"
    "                [--cuda-graphs N] [--subnormals flush|keep]\n"
    "  --memory-limit N%: N percent of the predicted peak for these inputs\n"
    "        (nothing evicted); a limit below the lowest peak reachable with\n"
    "        every rematerialization candidate evicted exits 3 before running\n"
    "  --evict-by: CUDA models: recompute an evicted candidate, offload it\n"
    "        to host memory, or pick the cheaper (auto, default)\n"
    "  FILE: ONNX TensorProto .pb or NumPy .npy; inputs may also be\n"
    "        DIMS:random | DIMS:zeros | DIMS:ones with DIMS like 2x3x224 or\n"
    "        'scalar'. NAME may be '#i' for the i-th input/output.\n"
    "  Training steps (a model compiled with --train): the session holds\n"
    "        the state inputs (parameters, optimizer state); --input gives\n"
    "        the others and the outputs that update a state are not shown.\n"
    "  --steps N: N runs on the same inputs in one session, each updating\n"
    "        the state (default 1); prints the loss, time, peak bytes and\n"
    "        evictions of each step, also in the --report ('steps')\n"
    "  --load-params DIR: set the state from DIR/NAME.npy before the first\n"
    "        step (NAME: the state's name, characters other than\n"
    "        [A-Za-z0-9._-] as '_'); a missing folder or file, or another\n"
    "        dtype or shape, exits 2\n"
    "  --save-params DIR: write the state to DIR/NAME.npy after the last\n"
    "        step (DIR is created)\n"
    "  --trace FILE.json: the timeline of the last run as a Chrome/Perfetto\n"
    "        trace (kernels and library calls by ONNX node, live and\n"
    "        predicted bytes, evict/regenerate/offload events)\n"
    "  --memory-plot FILE.svg: live bytes of the last run over the program\n"
    "        points, with the prediction, the limit, the evictions and the\n"
    "        buffers live at the peak\n"
    "  --cuda-graphs N: CUDA models: keep up to N CUDA graphs, one per\n"
    "        distinct input shapes (default 8; 0: plain launches only). The\n"
    "        second run at the same shapes is captured, later ones replay\n"
    "        the graph with one launch; not under --memory-limit, --trace\n"
    "        or --memory-plot\n"
    "  --subnormals flush|keep: CPU models: subnormal floats read and are\n"
    "        written as zero during a run (flush, default), or IEEE gradual\n"
    "        underflow (keep)\n"
    "exit codes: 0 ok, 1 comparison failed, 2 bad usage/input/load failure,\n"
    "            3 memory limit exceeded, 4 internal or model error\n";

struct Options {
  std::string modelPath;
  std::vector<std::pair<std::string, std::string>> inputs;
  std::vector<std::pair<std::string, std::string>> compares;
  double rtol = 1e-3;
  double atol = 1e-4;
  int64_t repeat = 1;
  std::string reportPath;
  std::string outputDir;
  int64_t memoryLimit = 0;
  /// --memory-limit N%: percent of the predicted peak; < 0 when unset.
  double memoryLimitPercent = -1;
  RematPolicy rematPolicy = RematPolicy::LargestFirst;
  DeviceEviction eviction = DeviceEviction::Auto;
  uint64_t seed = 0;
  int64_t threads = 0; // library-call threads, 0 = OpenMP default
  /// Training: runs in one session (each updates the state), and the state
  /// folders read before the first and written after the last.
  int64_t steps = 1;
  std::string loadParams;
  std::string saveParams;
  /// --trace / --memory-plot: files of the last run's timeline.
  std::string tracePath;
  std::string plotPath;
  /// --cuda-graphs: SessionOptions::cuda_graph_cache_size; < 0 when unset.
  int64_t cudaGraphs = -1;
  /// --subnormals: SessionOptions::flush_subnormals.
  bool flushSubnormals = true;
};

/// An error with the exit code it maps to.
struct Failure {
  int code = kExitOk;
  std::string message;
  explicit operator bool() const { return code != kExitOk; }
};

Failure usageError(std::string msg) { return {kExitUsage, std::move(msg)}; }

int exitCodeFor(const Status &s) {
  switch (s.code()) {
  case StatusCode::Ok:
    return kExitOk;
  case StatusCode::InvalidArgument:
  case StatusCode::LoadFailed:
    return kExitUsage;
  case StatusCode::ResourceExhausted:
    return kExitMemoryLimit;
  case StatusCode::Internal:
    return kExitInternal;
  }
  return kExitInternal;
}

/// Parses all of `text` with `parse` (strtoll- or strtod-like: the value,
/// the end of the number through its second argument, errno on overflow);
/// false for empty text, trailing characters or an out-of-range value.
template <typename T, typename Parse>
bool parseNumber(const std::string &text, T *out, Parse parse) {
  if (text.empty())
    return false;
  char *end = nullptr;
  errno = 0;
  T v = parse(text.c_str(), &end);
  if (errno || *end)
    return false;
  *out = v;
  return true;
}

/// Sets `*out` to the value `text` names among `choices`; false when it
/// names none.
template <typename T>
bool parseChoice(const std::string &text,
                 std::initializer_list<std::pair<const char *, T>> choices,
                 T *out) {
  for (const auto &[name, value] : choices) {
    if (text == name) {
      *out = value;
      return true;
    }
  }
  return false;
}

bool parseInt(const std::string &text, int64_t *out) {
  return parseNumber(text, out, [](const char *s, char **end) -> int64_t {
    return std::strtoll(s, end, 10);
  });
}

/// A non-negative number (not NaN).
bool parseDouble(const std::string &text, double *out) {
  double v = 0;
  if (!parseNumber(
          text, &v,
          [](const char *s, char **end) { return std::strtod(s, end); }) ||
      !(v >= 0))
    return false;
  *out = v;
  return true;
}

/// "1000", "64k", "512M", "2G" (powers of 1024).
bool parseBytes(const std::string &text, int64_t *out) {
  if (text.empty())
    return false;
  std::string digits = text;
  int64_t scale = 1;
  char last = static_cast<char>(std::tolower(text.back()));
  if (last == 'k' || last == 'm' || last == 'g') {
    scale = last == 'k' ? (1 << 10) : last == 'm' ? (1 << 20) : (1 << 30);
    digits.pop_back();
  }
  int64_t v;
  if (!parseInt(digits, &v) || v < 0 ||
      v > std::numeric_limits<int64_t>::max() / scale)
    return false;
  *out = v * scale;
  return true;
}

Failure parseArgs(int argc, char **argv, Options *opts) {
  std::vector<std::string> args(argv + 1, argv + argc);
  for (size_t i = 0; i < args.size(); ++i) {
    std::string arg = args[i];
    if (arg == "-h" || arg == "--help") {
      std::cout << kUsage;
      std::exit(kExitOk);
    }
    if (arg.rfind("--", 0) != 0) {
      if (!opts->modelPath.empty())
        return usageError("unexpected argument '" + arg + "'");
      opts->modelPath = arg;
      continue;
    }
    std::string key = arg, value;
    size_t eq = arg.find('=');
    if (eq != std::string::npos) {
      key = arg.substr(0, eq);
      value = arg.substr(eq + 1);
    } else {
      if (i + 1 >= args.size())
        return usageError("option '" + arg + "' needs a value");
      value = args[++i];
    }
    auto splitPair =
        [&](std::vector<std::pair<std::string, std::string>> &dst) -> Failure {
      size_t p = value.find('=');
      if (p == std::string::npos || p == 0 || p + 1 == value.size())
        return usageError(key + " expects NAME=VALUE, got '" + value + "'");
      dst.emplace_back(value.substr(0, p), value.substr(p + 1));
      return {};
    };
    if (key == "--input") {
      if (Failure f = splitPair(opts->inputs))
        return f;
    } else if (key == "--compare") {
      if (Failure f = splitPair(opts->compares))
        return f;
    } else if (key == "--rtol") {
      if (!parseDouble(value, &opts->rtol))
        return usageError("bad --rtol '" + value + "'");
    } else if (key == "--atol") {
      if (!parseDouble(value, &opts->atol))
        return usageError("bad --atol '" + value + "'");
    } else if (key == "--repeat") {
      if (!parseInt(value, &opts->repeat) || opts->repeat < 1)
        return usageError("bad --repeat '" + value + "' (need >= 1)");
    } else if (key == "--report") {
      opts->reportPath = value;
    } else if (key == "--output-dir") {
      opts->outputDir = value;
    } else if (key == "--memory-limit") {
      if (!value.empty() && value.back() == '%') {
        char *end = nullptr;
        std::string num = value.substr(0, value.size() - 1);
        double pct = std::strtod(num.c_str(), &end);
        if (num.empty() || *end != 0 || !(pct > 0) || pct > 1e6)
          return usageError("bad --memory-limit '" + value +
                            "' (expected BYTES or N% with N > 0)");
        opts->memoryLimitPercent = pct;
      } else if (!parseBytes(value, &opts->memoryLimit)) {
        return usageError("bad --memory-limit '" + value + "'");
      }
    } else if (key == "--remat-policy") {
      if (!parseChoice(value,
                       {{"largest", RematPolicy::LargestFirst},
                        {"dtr", RematPolicy::DtrScore}},
                       &opts->rematPolicy))
        return usageError("bad --remat-policy '" + value +
                          "' (expected largest or dtr)");
    } else if (key == "--evict-by") {
      if (!parseChoice(value,
                       {{"auto", DeviceEviction::Auto},
                        {"recompute", DeviceEviction::Recompute},
                        {"offload", DeviceEviction::Offload}},
                       &opts->eviction))
        return usageError("bad --evict-by '" + value +
                          "' (expected auto, recompute or offload)");
    } else if (key == "--threads") {
      if (!parseInt(value, &opts->threads) || opts->threads < 1 ||
          opts->threads > 4096)
        return usageError("bad --threads '" + value + "' (need 1..4096)");
    } else if (key == "--steps") {
      if (!parseInt(value, &opts->steps) || opts->steps < 1)
        return usageError("bad --steps '" + value + "' (need >= 1)");
    } else if (key == "--load-params") {
      if (value.empty())
        return usageError("--load-params needs a folder");
      opts->loadParams = value;
    } else if (key == "--save-params") {
      if (value.empty())
        return usageError("--save-params needs a folder");
      opts->saveParams = value;
    } else if (key == "--subnormals") {
      if (!parseChoice(value, {{"flush", true}, {"keep", false}},
                       &opts->flushSubnormals))
        return usageError("bad --subnormals '" + value +
                          "' (expected flush or keep)");
    } else if (key == "--cuda-graphs") {
      if (!parseInt(value, &opts->cudaGraphs) || opts->cudaGraphs < 0 ||
          opts->cudaGraphs > 4096)
        return usageError("bad --cuda-graphs '" + value + "' (need 0..4096)");
    } else if (key == "--trace") {
      if ((opts->tracePath = value).empty())
        return usageError("--trace needs a file");
    } else if (key == "--memory-plot") {
      if ((opts->plotPath = value).empty())
        return usageError("--memory-plot needs a file");
    } else if (key == "--seed") {
      int64_t s;
      if (!parseInt(value, &s))
        return usageError("bad --seed '" + value + "'");
      opts->seed = static_cast<uint64_t>(s);
    } else {
      return usageError("unknown option '" + key + "'");
    }
  }
  if (opts->modelPath.empty())
    return usageError("no MODEL.so given");
  if (opts->steps > 1 && opts->repeat > 1)
    return usageError("give --steps or --repeat, not both (each run of a "
                      "training step updates the state)");
  return {};
}

/// Resolves NAME or "#i" against the entries `indices` of `specs` (the run
/// inputs or outputs); the position in `indices`, or -1 if unknown.
int64_t resolveName(const std::string &name,
                    const std::vector<TensorSpec> &specs,
                    const std::vector<int64_t> &indices) {
  if (!name.empty() && name[0] == '#') {
    int64_t idx;
    if (parseInt(name.substr(1), &idx) && idx >= 0 &&
        idx < static_cast<int64_t>(indices.size()))
      return idx;
    return -1;
  }
  for (size_t i = 0; i < indices.size(); ++i)
    if (specs[indices[i]].name == name)
      return static_cast<int64_t>(i);
  return -1;
}

std::string listNames(const std::vector<TensorSpec> &specs,
                      const std::vector<int64_t> &indices) {
  std::string s;
  for (int64_t i : indices)
    s += (s.empty() ? "'" : ", '") + specs[i].name + "'";
  return s.empty() ? "(none)" : s;
}

/// A uint16 tensor read for a bfloat16 input or output holds the bfloat16
/// bits: NumPy has no bfloat16 dtype, and ONNX's test data up to 1.12
/// stores bfloat16 tensors as UINT16.
void relabelBFloat16Bits(DType expected, Tensor &t) {
  if (expected == DType::BFloat16 && t.dtype() == DType::UInt16)
    t = Tensor::fromData(DType::BFloat16, t.shape(), t.data());
}

/// Builds one input from FILE or DIMS:random|zeros|ones.
Failure loadInput(const TensorSpec &spec, const std::string &value,
                  uint64_t seed, Tensor *out) {
  static const std::regex generated(
      R"(^(scalar|[0-9]+(x[0-9]+)*):(random|zeros|ones)$)");
  std::smatch m;
  if (std::regex_match(value, m, generated)) {
    std::vector<int64_t> shape;
    if (Status s = io::parseShape(m[1].str(), &shape); !s)
      return usageError("input '" + spec.name + "': " + s.message());
    std::string kind = m[3].str();
    io::FillKind fill = kind == "random"  ? io::FillKind::Random
                        : kind == "zeros" ? io::FillKind::Zeros
                                          : io::FillKind::Ones;
    if (Status s = io::makeFilledTensor(spec.dtype, shape, fill, seed, out); !s)
      return {exitCodeFor(s), "input '" + spec.name + "': " + s.message()};
    return {};
  }
  Status s = spec.optional ? io::readOptionalTensorFile(value, spec, out)
                           : io::readTensorFile(value, out);
  if (!s)
    return usageError("input '" + spec.name + "': " + s.message());
  relabelBFloat16Bits(spec.dtype, *out);
  return {};
}

struct CompareResult {
  bool compared = false;
  bool passed = true;
  double maxAbsErr = 0;
  double maxRelErr = 0;
  int64_t mismatches = 0;
  int64_t firstMismatch = -1;
  std::string note; // Why it failed before comparing values.
};

/// numpy.allclose semantics for floats (NaN == NaN, infinities exact);
/// exact equality for integers and bool.
CompareResult compareTensors(const Tensor &got, const Tensor &ref, double rtol,
                             double atol) {
  CompareResult r;
  r.compared = true;
  if (got.shape() != ref.shape()) {
    r.passed = false;
    r.note = "shape mismatch: got " + shapeToString(got.shape()) +
             ", reference " + shapeToString(ref.shape());
    return r;
  }
  bool gotFloat = isFloatingPoint(got.dtype());
  bool refFloat = isFloatingPoint(ref.dtype());
  if (gotFloat != refFloat) {
    r.passed = false;
    r.note = std::string("dtype mismatch: got ") + dtypeName(got.dtype()) +
             ", reference " + dtypeName(ref.dtype());
    return r;
  }
  int64_t n = got.numElements();
  bool exact = !gotFloat;
  bool bothInt64ish =
      exact && (got.dtype() == DType::Int64 || got.dtype() == DType::UInt64 ||
                ref.dtype() == DType::Int64 || ref.dtype() == DType::UInt64);
  for (int64_t i = 0; i < n; ++i) {
    double a = got.elementAsDouble(i);
    double b = ref.elementAsDouble(i);
    bool ok;
    double absErr, relErr = 0;
    if (exact) {
      if (bothInt64ish && got.dtype() == ref.dtype() &&
          dtypeSize(got.dtype()) == 8)
        ok = static_cast<const int64_t *>(got.data())[i] ==
             static_cast<const int64_t *>(ref.data())[i];
      else
        ok = a == b;
      absErr = std::fabs(a - b);
      if (b != 0)
        relErr = absErr / std::fabs(b);
    } else if (std::isnan(a) || std::isnan(b)) {
      ok = std::isnan(a) && std::isnan(b);
      absErr = ok ? 0 : std::numeric_limits<double>::infinity();
      relErr = absErr;
    } else if (std::isinf(a) || std::isinf(b)) {
      ok = a == b;
      absErr = ok ? 0 : std::numeric_limits<double>::infinity();
      relErr = absErr;
    } else {
      absErr = std::fabs(a - b);
      ok = absErr <= atol + rtol * std::fabs(b);
      if (b != 0)
        relErr = absErr / std::fabs(b);
    }
    r.maxAbsErr = std::max(r.maxAbsErr, absErr);
    r.maxRelErr = std::max(r.maxRelErr, relErr);
    if (!ok) {
      if (r.firstMismatch < 0)
        r.firstMismatch = i;
      ++r.mismatches;
      r.passed = false;
    }
  }
  return r;
}

std::string formatValue(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.6g", v);
  return buf;
}

/// "min=.. max=.. mean=.. values=[...]".
std::string summarize(const Tensor &t) {
  int64_t n = t.numElements();
  if (n == 0)
    return "(empty)";
  double lo = std::numeric_limits<double>::infinity(), hi = -lo, sum = 0;
  int64_t nans = 0;
  for (int64_t i = 0; i < n; ++i) {
    double v = t.elementAsDouble(i);
    if (std::isnan(v)) {
      ++nans;
      continue;
    }
    lo = std::min(lo, v);
    hi = std::max(hi, v);
    sum += v;
  }
  std::string s;
  if (nans < n)
    s = "min=" + formatValue(lo) + " max=" + formatValue(hi) +
        " mean=" + formatValue(sum / static_cast<double>(n - nans));
  if (nans)
    s += (s.empty() ? "" : " ") + std::string("nan=") + std::to_string(nans);
  s += " values=[";
  int64_t shown = std::min<int64_t>(n, 6);
  for (int64_t i = 0; i < shown; ++i)
    s += (i ? ", " : "") + formatValue(t.elementAsDouble(i));
  s += n > shown ? ", ...]" : "]";
  return s;
}

std::string sanitizeName(const std::string &name, size_t index) {
  std::string s;
  for (char c : name)
    s += (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' ||
          c == '.')
             ? c
             : '_';
  if (s.empty() || s == "." || s == "..")
    s = "output_" + std::to_string(index);
  return s;
}

double median(std::vector<double> v) {
  if (v.empty())
    return 0;
  std::sort(v.begin(), v.end());
  size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

/// Numbers in the report: non-finite values become strings ("inf", "nan")
/// so the JSON stays valid.
json jsonNumber(double v) {
  if (std::isfinite(v))
    return v;
  return std::isnan(v) ? "nan" : (v > 0 ? "inf" : "-inf");
}

bool writeReport(const std::string &path, const json &report) {
  std::ofstream f(path);
  if (!f)
    return false;
  f << report.dump(2) << "\n";
  return static_cast<bool>(f);
}

int runMain(int argc, char **argv) {
  Options opts;
  json report = {{"passed", false}};
  auto fail = [&](const Failure &f) {
    std::cerr << "disc-run: error: " << f.message << "\n";
    if (!opts.reportPath.empty()) {
      report["passed"] = false;
      report["error"] = f.message;
      report["exit_code"] = f.code;
      writeReport(opts.reportPath, report);
    }
    return f.code;
  };
  if (Failure f = parseArgs(argc, argv, &opts)) {
    std::cerr << kUsage;
    return fail(f);
  }

  std::shared_ptr<const Executable> exe;
  if (Status s = Executable::load(opts.modelPath, &exe); !s)
    return fail({kExitUsage, s.message()});
  const Signature &sig = exe->signature();
  // The inputs a run takes and the outputs it returns: for a training step,
  // all but the state the session holds.
  const std::vector<int64_t> runIn = sig.runInputs();
  const std::vector<int64_t> runOut = sig.runOutputs();

  // Inputs.
  std::vector<Tensor> inputs(runIn.size());
  std::vector<bool> given(runIn.size(), false);
  for (const auto &[name, value] : opts.inputs) {
    int64_t idx = resolveName(name, sig.inputs, runIn);
    if (idx < 0) {
      int64_t any = sig.findInput(name);
      if (any >= 0 && sig.inputs[any].isState)
        return fail(usageError("input '" + name +
                               "' is training state the session holds; "
                               "set it with --load-params DIR"));
      return fail(usageError("unknown input '" + name + "'; model inputs: " +
                             listNames(sig.inputs, runIn)));
    }
    const TensorSpec &spec = sig.inputs[runIn[idx]];
    if (given[idx])
      return fail(usageError("input '" + spec.name + "' given twice"));
    uint64_t seed = opts.seed * 1000003ull + static_cast<uint64_t>(runIn[idx]);
    if (Failure f = loadInput(spec, value, seed, &inputs[idx]))
      return fail(f);
    given[idx] = true;
  }
  std::string missing;
  for (size_t i = 0; i < runIn.size(); ++i) {
    if (given[i])
      continue;
    const TensorSpec &spec = sig.inputs[runIn[i]];
    std::string shape;
    for (const DimSpec &d : spec.shape)
      shape += (shape.empty() ? "" : ", ") + d.toString();
    missing += (missing.empty() ? "" : ", ") + std::string("'") + spec.name +
               "' (" + dtypeName(spec.dtype) + " [" + shape + "])";
  }
  if (!missing.empty())
    return fail(usageError("missing input " + missing +
                           "; pass --input NAME=FILE or NAME=DIMS:random"));

  // References.
  std::map<int64_t, Tensor> refs;
  for (const auto &[name, file] : opts.compares) {
    int64_t idx = resolveName(name, sig.outputs, runOut);
    if (idx < 0) {
      int64_t any = sig.findOutput(name);
      if (any >= 0 && !sig.outputs[any].updates.empty())
        return fail(usageError("--compare: output '" + name +
                               "' updates state '" + sig.outputs[any].updates +
                               "' and is not returned; --save-params DIR "
                               "writes the state"));
      return fail(
          usageError("--compare: unknown output '" + name +
                     "'; model outputs: " + listNames(sig.outputs, runOut)));
    }
    Tensor ref;
    if (Status s = io::readTensorFile(file, &ref); !s)
      return fail(usageError("reference for output '" +
                             sig.outputs[runOut[idx]].name +
                             "': " + s.message()));
    relabelBFloat16Bits(sig.outputs[runOut[idx]].dtype, ref);
    refs[idx] = std::move(ref);
  }
  if (!opts.outputDir.empty()) {
    struct stat st;
    if (stat(opts.outputDir.c_str(), &st) != 0 &&
        mkdir(opts.outputDir.c_str(), 0755) != 0)
      return fail(
          usageError("cannot create --output-dir '" + opts.outputDir + "'"));
  }

  // Run.
  SessionOptions sessionOptions;
  sessionOptions.memory_limit_bytes = opts.memoryLimit;
  sessionOptions.remat_policy = opts.rematPolicy;
  sessionOptions.device_eviction = opts.eviction;
  if (opts.memoryLimitPercent > 0) {
    std::vector<std::vector<int64_t>> shapes;
    for (const Tensor &t : inputs)
      shapes.push_back(t.shape());
    int64_t peak = -1;
    std::string why;
    if (Status s = exe->predictPeakBytes(
            shapes, &peak, static_cast<int32_t>(opts.threads), &why);
        !s)
      return fail({exitCodeFor(s), s.message()});
    if (peak < 0)
      return fail(usageError(
          "--memory-limit N%: the model cannot predict its peak for these "
          "inputs (" +
          why + "); give BYTES"));
    sessionOptions.memory_limit_bytes = std::max<int64_t>(
        1, static_cast<int64_t>(static_cast<double>(peak) *
                                opts.memoryLimitPercent / 100.0));
  }
  sessionOptions.num_threads = static_cast<int32_t>(opts.threads);
  sessionOptions.record_trace =
      !opts.tracePath.empty() || !opts.plotPath.empty();
  sessionOptions.flush_subnormals = opts.flushSubnormals;
  if (opts.cudaGraphs >= 0)
    sessionOptions.cuda_graph_cache_size =
        static_cast<int32_t>(opts.cudaGraphs);
  Session session(exe, sessionOptions);
  // The timeline of the last run, also of one that failed.
  auto writeTrace = [&]() -> Failure {
    if (!opts.tracePath.empty())
      if (Status s = writeChromeTrace(session.lastTrace(), opts.tracePath); !s)
        return usageError(s.message());
    if (!opts.plotPath.empty())
      if (Status s = writeMemoryPlot(session.lastTrace(), opts.plotPath); !s)
        return usageError(s.message());
    return {};
  };
  if ((!opts.loadParams.empty() || !opts.saveParams.empty()) &&
      sig.numStates() == 0)
    return fail(
        usageError(std::string(opts.loadParams.empty() ? "--save-params"
                                                       : "--load-params") +
                   ": the model has no training state"));
  if (!opts.loadParams.empty())
    if (Status s = session.loadState(opts.loadParams); !s)
      return fail({exitCodeFor(s), "--load-params: " + s.message()});
  // The loss among the outputs a run returns (-1: none).
  int64_t lossIndex = -1;
  for (size_t i = 0; i < runOut.size(); ++i)
    if (!sig.loss.empty() && sig.outputs[runOut[i]].name == sig.loss)
      lossIndex = static_cast<int64_t>(i);
  // The loss as a number when it has one element, else null.
  auto lossOf = [&](const std::vector<Tensor> &outs) -> json {
    if (lossIndex < 0 || outs[lossIndex].numElements() != 1)
      return nullptr;
    return jsonNumber(outs[lossIndex].elementAsDouble(0));
  };
  std::vector<Tensor> outputs;
  std::vector<double> latencies;
  json stepsJson = json::array();
  // CUDA graph replay: runs captured into a graph, runs that replayed one.
  int64_t graphCaptures = 0, graphReplays = 0;
  int64_t runs = std::max(opts.repeat, opts.steps);
  for (int64_t r = 0; r < runs; ++r) {
    outputs.clear();
    Status s = session.run(inputs, &outputs);
    if (!s && sessionOptions.record_trace)
      (void)writeTrace();
    if (!s)
      return fail({exitCodeFor(s),
                   (opts.steps > 1 ? "step " + std::to_string(r + 1) + ": "
                                   : std::string()) +
                       s.message()});
    const SessionStats &st = session.stats();
    latencies.push_back(st.last_latency_ms);
    graphCaptures += st.cuda_graph_captures;
    graphReplays += st.cuda_graph_replays;
    if (opts.steps > 1) {
      json loss = lossOf(outputs);
      std::cout << "step " << r + 1 << ": loss="
                << (loss.is_number()   ? formatValue(loss.get<double>())
                    : loss.is_string() ? loss.get<std::string>()
                                       : "n/a")
                << " latency_ms=" << formatValue(st.last_latency_ms)
                << " peak_bytes=" << st.peak_bytes
                << " evictions=" << st.remat_evictions << "\n";
      stepsJson.push_back({{"step", r + 1},
                           {"loss", loss},
                           {"latency_ms", st.last_latency_ms},
                           {"peak_bytes", st.peak_bytes},
                           {"evictions", st.remat_evictions}});
    }
  }
  const SessionStats &stats = session.stats();
  if (sessionOptions.record_trace)
    if (Failure f = writeTrace())
      return fail(f);
  if (!opts.saveParams.empty())
    if (Status s = session.saveState(opts.saveParams); !s)
      return fail({exitCodeFor(s), "--save-params: " + s.message()});

  // Report outputs.
  bool allPassed = true;
  json outputsJson = json::array();
  std::set<std::string> usedFiles;
  for (size_t i = 0; i < outputs.size(); ++i) {
    const Tensor &t = outputs[i];
    const std::string &name = sig.outputs[runOut[i]].name;
    std::cout << "output " << i << " '" << name << "': " << dtypeName(t.dtype())
              << " " << shapeToString(t.shape()) << " " << summarize(t) << "\n";
    json entry = {{"name", name},           {"dtype", dtypeName(t.dtype())},
                  {"shape", t.shape()},     {"max_abs_err", nullptr},
                  {"max_rel_err", nullptr}, {"compared", false},
                  {"passed", true}};
    auto ref = refs.find(static_cast<int64_t>(i));
    if (ref != refs.end()) {
      CompareResult c = compareTensors(t, ref->second, opts.rtol, opts.atol);
      entry["compared"] = true;
      entry["passed"] = c.passed;
      if (c.note.empty()) {
        entry["max_abs_err"] = jsonNumber(c.maxAbsErr);
        entry["max_rel_err"] = jsonNumber(c.maxRelErr);
      } else {
        entry["error"] = c.note;
      }
      std::cout << "  compare '" << name << "': ";
      if (!c.note.empty()) {
        std::cout << c.note;
      } else {
        std::cout << "max_abs_err=" << formatValue(c.maxAbsErr)
                  << " max_rel_err=" << formatValue(c.maxRelErr);
        if (!c.passed)
          std::cout << " mismatches=" << c.mismatches << "/" << t.numElements()
                    << " first at flat index " << c.firstMismatch << " (got "
                    << formatValue(t.elementAsDouble(c.firstMismatch))
                    << ", expected "
                    << formatValue(ref->second.elementAsDouble(c.firstMismatch))
                    << ")";
      }
      std::cout << " (rtol=" << opts.rtol << " atol=" << opts.atol << ") "
                << (c.passed ? "PASSED" : "FAILED") << "\n";
      allPassed &= c.passed;
    }
    if (!opts.outputDir.empty()) {
      std::string file = sanitizeName(name, i);
      if (!usedFiles.insert(file).second)
        file += "_" + std::to_string(i);
      usedFiles.insert(file);
      std::string path = opts.outputDir + "/" + file + ".npy";
      if (Status s = io::writeNpy(path, t); !s)
        return fail(usageError(s.message()));
      entry["file"] = path;
    }
    outputsJson.push_back(entry);
  }
  // The compiler's prediction for these input shapes (docs/memory.md), as
  // the session evaluated it before the runs: null when the model cannot
  // predict its peak before running.
  int64_t predicted = stats.predicted_peak_bytes;
  json predictedJson = predicted >= 0 ? json(predicted) : json(nullptr);
  // Why there is no prediction (the run went on without one).
  std::string unpredictable;
  if (predicted < 0) {
    std::vector<std::vector<int64_t>> shapes;
    for (const Tensor &t : inputs)
      shapes.push_back(t.shape());
    int64_t ignored = -1;
    (void)exe->predictPeakBytes(
        shapes, &ignored, static_cast<int32_t>(opts.threads), &unpredictable);
  }
  double med = median(latencies);
  std::cout << "latency_ms: " << formatValue(med) << " (median of "
            << latencies.size() << ")  peak_bytes: " << stats.peak_bytes
            << "  predicted_peak_bytes: "
            << (predicted < 0 ? "unknown (" + unpredictable + ")"
                : stats.predicted_peak_is_upper_bound
                    ? std::to_string(predicted) + " (upper bound)"
                    : std::to_string(predicted))
            << "  allocs: " << stats.num_allocs;
  if (stats.leaked_allocs)
    std::cout << "  leaked_allocs: " << stats.leaked_allocs;
  if (graphCaptures + graphReplays > 0)
    std::cout << "  cuda_graphs: " << graphCaptures << " captured, "
              << graphReplays << " replayed";
  if (sessionOptions.memory_limit_bytes > 0)
    std::cout << "  limit: " << sessionOptions.memory_limit_bytes
              << "  evictions: " << stats.remat_evictions
              << "  regenerations: " << stats.remat_regenerations
              << "  offloads: " << stats.remat_offloads;
  std::cout << "\n";
  if (!refs.empty())
    std::cout << (allPassed ? "PASSED" : "FAILED") << "\n";

  report = {
      {"model", opts.modelPath},
      {"latency_ms", med},
      {"latencies_ms", latencies},
      {"peak_bytes", stats.peak_bytes},
      {"predicted_peak_bytes", predictedJson},
      {"predicted_peak_is_upper_bound", stats.predicted_peak_is_upper_bound},
      {"unpredictable_reason", unpredictable},
      {"reserved_peak_bytes", stats.reserved_peak_bytes},
      {"num_allocs", stats.num_allocs},
      {"memory_limit_bytes", sessionOptions.memory_limit_bytes},
      {"remat_policy",
       opts.rematPolicy == RematPolicy::LargestFirst ? "largest" : "dtr"},
      {"minimum_peak_bytes", stats.remat_minimum_peak_bytes >= 0
                                 ? json(stats.remat_minimum_peak_bytes)
                                 : json(nullptr)},
      {"remat_candidates",
       static_cast<int64_t>(exe->signature().remat.candidates.size())},
      {"evictions", stats.remat_evictions},
      {"regenerations", stats.remat_regenerations},
      {"bytes_recomputed", stats.remat_bytes_recomputed},
      {"recompute_ms", stats.remat_recompute_ms},
      {"offloads", stats.remat_offloads},
      {"bytes_offloaded", stats.remat_bytes_offloaded},
      {"offload_ms", stats.remat_offload_ms},
      {"leaked_allocs", stats.leaked_allocs},
      {"cuda_graph_cache_size", sessionOptions.cuda_graph_cache_size},
      {"cuda_graph_captures", graphCaptures},
      {"cuda_graph_replays", graphReplays},
      {"outputs", outputsJson},
      {"passed", allPassed}};
  // Run-time check counts the compiler recorded in the signature.
  json sigJson = json::parse(exe->signatureJson(), nullptr,
                             /*allow_exceptions=*/false);
  if (sigJson.is_object() && sigJson.contains("runtime_checks"))
    report["runtime_checks"] = sigJson["runtime_checks"];
  // Training: the loss of the last run, and each step with --steps.
  if (!sig.loss.empty())
    report["loss"] = lossOf(outputs);
  if (opts.steps > 1)
    report["steps"] = stepsJson;
  if (!opts.reportPath.empty() && !writeReport(opts.reportPath, report)) {
    std::cerr << "disc-run: error: cannot write report '" << opts.reportPath
              << "'\n";
    return kExitUsage;
  }
  return allPassed ? kExitOk : kExitCompareFailed;
}

} // namespace

int main(int argc, char **argv) {
  try {
    return runMain(argc, argv);
  } catch (const std::exception &e) {
    std::cerr << "disc-run: error: internal: " << e.what() << "\n";
    return kExitInternal;
  }
}
