//===- main.cpp - A training loop over variable-length batches ------------===//
//
// usage: train_cpp STEP.so [--steps N] [--batch B]
//                  [--lengths T1,T2,... | --max-len M] [--seed S]
//                  [--vocab V] [--memory-limit BYTES|N%] [--threads N]
//                  [--load-params DIR] [--save-params DIR]
//                  [--dump-batches DIR]
//
// Runs a training loop in ONE disc::Session over a model compiled with
// `disc-compile --train` (docs/training.md) from a forward + loss ONNX
// model of a token sequence, such as the Llama decoder of
// examples/models/train_models.py:
//
//   python3 examples/models/train_models.py llama llama.onnx
//   disc-compile llama.onnx --train --loss loss --optimizer sgd --lr 0.1
//       -o step.so
//   train_cpp step.so --steps 20 --batch 2 --max-len 256 --seed 1
//       --memory-limit 60%
//
// The session holds the parameters (and the optimizer state) from one step
// to the next; every step has another sequence length T, so the model runs
// at a new shape each time without recompiling.
//
// The model: two run inputs (the inputs that are not training state),
// tokens and targets, integer (int64 or int32) [batch, seq] with the same
// dims; the inputs named "tokens" and "targets" when both exist, else the
// first and the second run input. It names a loss output (a scalar, or one
// element). The vocabulary size is --vocab, else the last dim of the first
// rank-3 run output (the logits [batch, seq, vocab]).
//
// Each step:
//   * T: the next of --lengths (cyclically), or else a draw from a
//     long-tailed distribution: lognormal with median max(8, M/8) and
//     sigma 1, rounded and clamped to [min(8, M), M] (most steps short,
//     a few near M);
//   * the batch: each row is an arithmetic sequence modulo the vocabulary,
//     x_t = (s + d*t) mod V with a random start s in [0, V) and step d in
//     [1, 8], t = 0..T; tokens = x_0..x_{T-1}, targets = x_1..x_T (the
//     tokens shifted by one), so the loss can fall;
//   * one Session::run; prints
//       step K: T=.. loss=.. time_ms=.. peak_bytes=.. predicted_peak_bytes=..
//         evictions=..
//     (time_ms: SessionStats::last_latency_ms; peak and predicted peak in
//     bytes of the run's intermediates and outputs, parameters excluded;
//     evictions: rematerialization candidates evicted under the limit).
// At the end: a "total:" line with the steps, tokens, time, tokens/s, the
// highest peak, all evictions and the first and last loss.
//
// Random numbers: splitmix64 seeded with --seed, so a seed gives the same
// lengths and batches on every platform. --dump-batches DIR writes each
// step's inputs to DIR/stepK.NAME.npy (K from 1) for a reference to replay.
//
// --memory-limit N%: N percent of the predicted peak (nothing evicted) of
// the step with the largest prediction, computed before the first step
// (Executable::predictPeakBytes on every step's shapes). A limit below the
// lowest peak that some step can reach by evicting every candidate
// (Executable::predictMinimumPeakBytes) exits 3 before training.
//
// Exit codes (as disc-run's): 0 ok, 2 bad arguments, model or input (also a
// --load-params folder that does not fit), 3 memory limit that cannot be
// held, 4 internal or model error.
//
// Build against an installed runtime (see CMakeLists.txt):
//   find_package(DiscRuntime 1 CONFIG REQUIRED)
//   target_link_libraries(train_cpp PRIVATE Disc::Runtime)
//
//===----------------------------------------------------------------------===//

#include "disc/runtime/Runtime.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace {

enum ExitCode {
  kExitOk = 0,
  kExitUsage = 2,
  kExitMemoryLimit = 3,
  kExitInternal = 4,
};

const char *kUsage =
    "usage: train_cpp STEP.so [--steps N] [--batch B]\n"
    "                 [--lengths T1,T2,... | --max-len M] [--seed S]\n"
    "                 [--vocab V] [--memory-limit BYTES|N%] [--threads N]\n"
    "                 [--load-params DIR] [--save-params DIR]\n"
    "                 [--dump-batches DIR]\n"
    "Runs N training steps (default 20) of STEP.so in one session, each at\n"
    "another sequence length, and prints the loss, time, peak bytes and\n"
    "evictions of each.\n"
    "  STEP.so: compiled with disc-compile --train --loss NAME; its run\n"
    "        inputs (those that are not training state) are tokens and\n"
    "        targets, int64 or int32 [batch, seq] (the inputs named\n"
    "        'tokens' and 'targets', else the first and the second); it\n"
    "        names a loss output with one element\n"
    "  --batch B: rows per step (default: the static batch dim, else 2)\n"
    "  --lengths T1,T2,...: the sequence length of each step, cyclically\n"
    "  --max-len M: else draw each length from a long-tailed distribution\n"
    "        (lognormal, median max(8, M/8), clamped to [min(8, M), M];\n"
    "        default M = 256)\n"
    "  --seed S: seeds the lengths and the token sequences (default 0)\n"
    "  --vocab V: token range [0, V) (default: the last dim of the logits,\n"
    "        the first rank-3 output)\n"
    "  --memory-limit BYTES|N%: limit on the bytes live during a step\n"
    "        (suffix k, m, g allowed); N%: N percent of the largest\n"
    "        predicted peak over all steps. A limit below the lowest peak a\n"
    "        step can reach by evicting every rematerialization candidate\n"
    "        exits 3 before the first step\n"
    "  --threads N: library-call threads (default: the OpenMP default)\n"
    "  --load-params DIR: set the state from DIR/NAME.npy before training\n"
    "  --save-params DIR: write the state to DIR/NAME.npy after the last\n"
    "        step (DIR is created)\n"
    "  --dump-batches DIR: write each step's inputs to DIR/stepK.NAME.npy\n"
    "exit codes: 0 ok, 2 bad usage/model/input, 3 memory limit that cannot\n"
    "            be held, 4 internal or model error\n";

struct Options {
  std::string modelPath;
  int64_t steps = 20;
  int64_t batch = -1; // -1: the static batch dim, else 2
  std::vector<int64_t> lengths;
  int64_t maxLen = 256;
  bool maxLenGiven = false;
  uint64_t seed = 0;
  int64_t vocab = -1; // -1: from the logits
  int64_t memoryLimit = 0;
  double memoryLimitPercent = -1; // < 0: not a percentage
  int64_t threads = 0;
  std::string loadParams;
  std::string saveParams;
  std::string dumpBatches;
};

/// An error with the exit code it maps to (kExitOk: none).
struct Failure {
  int code = kExitOk;
  std::string message;
  explicit operator bool() const { return code != kExitOk; }
};

Failure usageError(std::string msg) { return {kExitUsage, std::move(msg)}; }

int exitCodeFor(const disc::Status &s) {
  switch (s.code()) {
  case disc::StatusCode::Ok:
    return kExitOk;
  case disc::StatusCode::InvalidArgument:
  case disc::StatusCode::LoadFailed:
    return kExitUsage;
  case disc::StatusCode::ResourceExhausted:
    return kExitMemoryLimit;
  case disc::StatusCode::Internal:
    return kExitInternal;
  }
  return kExitInternal;
}

Failure statusFailure(const disc::Status &s, const std::string &prefix) {
  return {exitCodeFor(s), prefix + s.message()};
}

/// Parses all of `text` as a decimal integer; false for empty text,
/// trailing characters or overflow.
bool parseInt(const std::string &text, int64_t *out) {
  if (text.empty())
    return false;
  char *end = nullptr;
  errno = 0;
  long long v = std::strtoll(text.c_str(), &end, 10);
  if (errno || *end)
    return false;
  *out = v;
  return true;
}

/// BYTES with an optional k/m/g suffix (powers of 1024).
bool parseBytes(std::string text, int64_t *out) {
  int64_t scale = 1;
  if (!text.empty()) {
    char last = static_cast<char>(std::tolower(text.back()));
    if (last == 'k' || last == 'm' || last == 'g') {
      scale = last == 'k' ? (1 << 10) : last == 'm' ? (1 << 20) : (1 << 30);
      text.pop_back();
    }
  }
  int64_t v;
  if (!parseInt(text, &v) || v < 0 ||
      v > std::numeric_limits<int64_t>::max() / scale)
    return false;
  *out = v * scale;
  return true;
}

Failure parseArgs(int argc, char **argv, Options *opts) {
  std::vector<std::string> args(argv + 1, argv + argc);
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string &arg = args[i];
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
    if (key == "--steps") {
      if (!parseInt(value, &opts->steps) || opts->steps < 1)
        return usageError("bad --steps '" + value + "' (need >= 1)");
    } else if (key == "--batch") {
      if (!parseInt(value, &opts->batch) || opts->batch < 1)
        return usageError("bad --batch '" + value + "' (need >= 1)");
    } else if (key == "--lengths") {
      opts->lengths.clear();
      size_t start = 0;
      while (true) {
        size_t comma = value.find(',', start);
        std::string item =
            value.substr(start, comma == std::string::npos ? std::string::npos
                                                           : comma - start);
        int64_t t;
        if (!parseInt(item, &t) || t < 1)
          return usageError("bad --lengths '" + value +
                            "' (expected T1,T2,... with every T >= 1)");
        opts->lengths.push_back(t);
        if (comma == std::string::npos)
          break;
        start = comma + 1;
      }
    } else if (key == "--max-len") {
      if (!parseInt(value, &opts->maxLen) || opts->maxLen < 1)
        return usageError("bad --max-len '" + value + "' (need >= 1)");
      opts->maxLenGiven = true;
    } else if (key == "--seed") {
      int64_t s;
      if (!parseInt(value, &s) || s < 0)
        return usageError("bad --seed '" + value + "' (need >= 0)");
      opts->seed = static_cast<uint64_t>(s);
    } else if (key == "--vocab") {
      if (!parseInt(value, &opts->vocab) || opts->vocab < 1)
        return usageError("bad --vocab '" + value + "' (need >= 1)");
    } else if (key == "--memory-limit") {
      if (!value.empty() && value.back() == '%') {
        std::string num = value.substr(0, value.size() - 1);
        char *end = nullptr;
        double pct = std::strtod(num.c_str(), &end);
        if (num.empty() || *end != 0 || !(pct > 0) || pct > 1e6)
          return usageError("bad --memory-limit '" + value +
                            "' (expected BYTES or N% with N > 0)");
        opts->memoryLimitPercent = pct;
        opts->memoryLimit = 0;
      } else if (!parseBytes(value, &opts->memoryLimit)) {
        return usageError("bad --memory-limit '" + value +
                          "' (expected BYTES or N% with N > 0)");
      } else {
        opts->memoryLimitPercent = -1;
      }
    } else if (key == "--threads") {
      if (!parseInt(value, &opts->threads) || opts->threads < 0 ||
          opts->threads > 4096)
        return usageError("bad --threads '" + value + "'");
    } else if (key == "--load-params") {
      opts->loadParams = value;
    } else if (key == "--save-params") {
      opts->saveParams = value;
    } else if (key == "--dump-batches") {
      opts->dumpBatches = value;
    } else {
      return usageError("unknown option '" + key + "'");
    }
  }
  if (opts->modelPath.empty())
    return usageError("missing STEP.so");
  if (!opts->lengths.empty() && opts->maxLenGiven)
    return usageError("give --lengths or --max-len, not both");
  return {};
}

/// splitmix64: the same numbers for a seed on every platform (unlike the
/// <random> distributions).
class Rng {
public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  /// Uniform in [0, 1).
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  /// In [0, n), n >= 1 (modulo bias below 2^-40 for the sizes used here).
  int64_t below(int64_t n) {
    return static_cast<int64_t>(next() % static_cast<uint64_t>(n));
  }

private:
  uint64_t state_;
};

/// The sequence length of every step (see the file comment).
std::vector<int64_t> drawLengths(const Options &opts, Rng &rng) {
  std::vector<int64_t> out;
  const double pi = 3.14159265358979323846;
  const int64_t lo = std::min<int64_t>(8, opts.maxLen);
  const double median = std::max(8.0, static_cast<double>(opts.maxLen) / 8);
  for (int64_t k = 0; k < opts.steps; ++k) {
    if (!opts.lengths.empty()) {
      out.push_back(opts.lengths[k % opts.lengths.size()]);
      continue;
    }
    // Box-Muller: a standard normal z; T = median * e^z.
    double u1 = rng.uniform(), u2 = rng.uniform();
    double z = std::sqrt(-2 * std::log(1 - u1)) * std::cos(2 * pi * u2);
    double t = std::round(median * std::exp(z));
    out.push_back(static_cast<int64_t>(std::clamp(
        t, static_cast<double>(lo), static_cast<double>(opts.maxLen))));
  }
  return out;
}

/// Tokens and targets [batch, T] of `dtype` (see the file comment).
void makeBatch(disc::DType dtype, int64_t batch, int64_t t, int64_t vocab,
               Rng &rng, disc::Tensor *tokens, disc::Tensor *targets) {
  *tokens = disc::Tensor::zeros(dtype, {batch, t});
  *targets = disc::Tensor::zeros(dtype, {batch, t});
  for (int64_t b = 0; b < batch; ++b) {
    int64_t start = rng.below(vocab);
    int64_t stride = 1 + rng.below(8);
    for (int64_t i = 0; i < t; ++i) {
      int64_t x = (start + stride * i) % vocab;
      int64_t y = (start + stride * (i + 1)) % vocab;
      if (dtype == disc::DType::Int64) {
        tokens->data<int64_t>()[b * t + i] = x;
        targets->data<int64_t>()[b * t + i] = y;
      } else {
        tokens->data<int32_t>()[b * t + i] = static_cast<int32_t>(x);
        targets->data<int32_t>()[b * t + i] = static_cast<int32_t>(y);
      }
    }
  }
}

std::string formatDouble(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.9g", v);
  return buf;
}

std::string formatMs(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.3f", v);
  return buf;
}

/// The model's inputs and outputs as train_cpp uses them.
struct ModelIO {
  int64_t tokens = -1, targets = -1; // positions among the run inputs
  int64_t loss = -1;                 // position among the run outputs
  disc::DType dtype = disc::DType::Int64;
  int64_t staticBatch = -1;
};

Failure inspectModel(const disc::Executable &exe, const Options &opts,
                     ModelIO *io, int64_t *vocab) {
  const disc::Signature &sig = exe.signature();
  if (sig.numStates() == 0)
    return usageError("the model has no training state (compile it with "
                      "disc-compile --train --loss NAME)");
  const std::vector<int64_t> runIn = sig.runInputs();
  if (runIn.size() != 2)
    return usageError("the model takes " + std::to_string(runIn.size()) +
                      " run inputs; train_cpp needs 2 (tokens, targets)");
  io->tokens = 0;
  io->targets = 1;
  if (sig.inputs[runIn[0]].name == "targets" &&
      sig.inputs[runIn[1]].name == "tokens")
    std::swap(io->tokens, io->targets);
  for (int64_t pos : {io->tokens, io->targets}) {
    const disc::TensorSpec &spec = sig.inputs[runIn[pos]];
    if (spec.dtype != disc::DType::Int64 && spec.dtype != disc::DType::Int32)
      return usageError("input '" + spec.name + "' is " +
                        disc::dtypeName(spec.dtype) +
                        "; train_cpp needs int64 or int32 token ids");
    if (spec.rank() != 2)
      return usageError("input '" + spec.name + "' has rank " +
                        std::to_string(spec.rank()) +
                        "; train_cpp needs [batch, seq]");
  }
  const disc::TensorSpec &tok = sig.inputs[runIn[io->tokens]];
  if (sig.inputs[runIn[io->targets]].dtype != tok.dtype)
    return usageError("inputs '" + tok.name + "' and '" +
                      sig.inputs[runIn[io->targets]].name +
                      "' have different dtypes");
  io->dtype = tok.dtype;
  if (tok.shape[0].isStatic())
    io->staticBatch = tok.shape[0].size;

  const std::vector<int64_t> runOut = sig.runOutputs();
  if (sig.loss.empty())
    return usageError("the model names no loss output (compile it with "
                      "disc-compile --train --loss NAME)");
  for (size_t i = 0; i < runOut.size(); ++i)
    if (sig.outputs[runOut[i]].name == sig.loss)
      io->loss = static_cast<int64_t>(i);
  if (io->loss < 0)
    return usageError("the loss '" + sig.loss + "' is not a run output");

  *vocab = opts.vocab;
  if (*vocab < 0) {
    for (int64_t o : runOut) {
      const disc::TensorSpec &spec = sig.outputs[o];
      if (spec.rank() == 3 && spec.shape[2].isStatic() &&
          spec.shape[2].size > 0) {
        *vocab = spec.shape[2].size;
        break;
      }
    }
    if (*vocab < 0)
      return usageError("the model has no output [batch, seq, vocab] with a "
                        "static vocab; give --vocab");
  }
  return {};
}

int fail(const Failure &f) {
  std::cerr << "error: " << f.message << "\n";
  return f.code;
}

} // namespace

int main(int argc, char **argv) {
  Options opts;
  if (Failure f = parseArgs(argc, argv, &opts)) {
    fail(f);
    std::cerr << "(train_cpp --help lists the options)\n";
    return f.code;
  }

  // 1. Load the step and find its inputs, loss and vocabulary.
  std::shared_ptr<const disc::Executable> exe;
  if (disc::Status s = disc::Executable::load(opts.modelPath, &exe); !s)
    return fail(statusFailure(s, ""));
  const disc::Signature &sig = exe->signature();
  ModelIO io;
  int64_t vocab = 0;
  if (Failure f = inspectModel(*exe, opts, &io, &vocab))
    return fail(f);
  int64_t batch = opts.batch > 0       ? opts.batch
                  : io.staticBatch > 0 ? io.staticBatch
                                       : 2;

  // 2. Every step's length up front: checks the shapes against the
  //    signature (symbol ranges, static dims) and sizes a N% limit before
  //    the first step.
  Rng rng(opts.seed);
  const std::vector<int64_t> lengths = drawLengths(opts, rng);
  const std::set<int64_t> distinct(lengths.begin(), lengths.end());
  auto shapesFor = [&](int64_t t) {
    std::vector<std::vector<int64_t>> shapes(2);
    shapes[io.tokens] = {batch, t};
    shapes[io.targets] = {batch, t};
    return shapes;
  };
  for (int64_t t : distinct) {
    std::map<std::string, int64_t> dims;
    if (disc::Status s = sig.bindDims(shapesFor(t), &dims); !s)
      return fail(usageError("batch " + std::to_string(batch) + " x length " +
                             std::to_string(t) + ": " + s.message()));
  }
  disc::SessionOptions sessionOptions;
  sessionOptions.num_threads = static_cast<int32_t>(opts.threads);
  sessionOptions.memory_limit_bytes = opts.memoryLimit;
  if (opts.memoryLimitPercent > 0) {
    int64_t largest = -1, largestT = 0;
    for (int64_t t : distinct) {
      int64_t peak = -1;
      std::string why;
      if (disc::Status s = exe->predictPeakBytes(
              shapesFor(t), &peak, sessionOptions.num_threads, &why);
          !s)
        return fail(statusFailure(s, "length " + std::to_string(t) + ": "));
      if (peak < 0)
        return fail(usageError("--memory-limit N%: the model cannot predict "
                               "its peak at length " +
                               std::to_string(t) + " (" + why +
                               "); give BYTES"));
      if (peak > largest) {
        largest = peak;
        largestT = t;
      }
    }
    sessionOptions.memory_limit_bytes = std::max<int64_t>(
        1, static_cast<int64_t>(static_cast<double>(largest) *
                                opts.memoryLimitPercent / 100.0));
    std::cout << "memory limit: " << sessionOptions.memory_limit_bytes
              << " bytes (" << formatDouble(opts.memoryLimitPercent)
              << "% of the predicted peak " << largest << " at length "
              << largestT << ")\n";
  } else if (sessionOptions.memory_limit_bytes > 0) {
    std::cout << "memory limit: " << sessionOptions.memory_limit_bytes
              << " bytes\n";
  }
  if (sessionOptions.memory_limit_bytes > 0) {
    // The lowest peak each step can reach: a limit below it cannot be held.
    for (int64_t t : distinct) {
      int64_t minimum = -1;
      if (disc::Status s = exe->predictMinimumPeakBytes(shapesFor(t), &minimum);
          !s)
        return fail(statusFailure(s, "length " + std::to_string(t) + ": "));
      if (minimum > sessionOptions.memory_limit_bytes)
        return fail({kExitMemoryLimit,
                     "memory limit " +
                         std::to_string(sessionOptions.memory_limit_bytes) +
                         " bytes cannot be held: length " + std::to_string(t) +
                         " needs at least " + std::to_string(minimum) +
                         " bytes with every rematerialization candidate "
                         "evicted"});
    }
  }

  // 3. One session for every step: it holds the parameters.
  disc::Session session(exe, sessionOptions);
  if (!opts.loadParams.empty())
    if (disc::Status s = session.loadState(opts.loadParams); !s)
      return fail(statusFailure(s, "--load-params: "));
  if (!opts.dumpBatches.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(opts.dumpBatches, ec);
    if (ec)
      return fail(usageError("cannot create --dump-batches '" +
                             opts.dumpBatches + "': " + ec.message()));
  }
  const std::vector<int64_t> runIn = sig.runInputs();
  std::cout << "model " << opts.modelPath << ": inputs '"
            << sig.inputs[runIn[io.tokens]].name << "' and '"
            << sig.inputs[runIn[io.targets]].name << "' "
            << disc::dtypeName(io.dtype) << " [" << batch << ", T], vocab "
            << vocab << ", loss '" << sig.loss << "', " << sig.numStates()
            << " state tensors\n";

  double totalMs = 0, firstLoss = 0, lastLoss = 0;
  int64_t tokensSeen = 0, maxPeak = 0, evictions = 0;
  for (int64_t k = 0; k < opts.steps; ++k) {
    const int64_t t = lengths[k];
    const std::string step = "step " + std::to_string(k + 1);
    std::vector<disc::Tensor> inputs(2);
    makeBatch(io.dtype, batch, t, vocab, rng, &inputs[io.tokens],
              &inputs[io.targets]);
    if (!inputs[0].isValid() || !inputs[1].isValid())
      return fail({kExitMemoryLimit, step + ": cannot allocate the inputs [" +
                                         std::to_string(batch) + ", " +
                                         std::to_string(t) + "]"});
    if (!opts.dumpBatches.empty()) {
      for (size_t i = 0; i < 2; ++i) {
        std::string path = opts.dumpBatches + "/step" + std::to_string(k + 1) +
                           "." + sig.inputs[runIn[i]].name + ".npy";
        if (disc::Status s = disc::writeNpy(path, inputs[i]); !s)
          return fail(statusFailure(s, "--dump-batches: "));
      }
    }
    std::vector<disc::Tensor> outputs;
    if (disc::Status s = session.run(inputs, &outputs); !s)
      return fail(statusFailure(s, step + " (T=" + std::to_string(t) + "): "));
    const disc::Tensor &lossTensor = outputs[io.loss];
    if (lossTensor.numElements() != 1)
      return fail(usageError("the loss '" + sig.loss + "' has shape " +
                             disc::shapeToString(lossTensor.shape()) +
                             "; train_cpp needs one element"));
    const double loss = lossTensor.elementAsDouble(0);
    const disc::SessionStats &st = session.stats();
    std::cout << step << ": T=" << t << " loss=" << formatDouble(loss)
              << " time_ms=" << formatMs(st.last_latency_ms)
              << " peak_bytes=" << st.peak_bytes
              << " predicted_peak_bytes=" << st.predicted_peak_bytes
              << " evictions=" << st.remat_evictions << "\n";
    if (k == 0)
      firstLoss = loss;
    lastLoss = loss;
    totalMs += st.last_latency_ms;
    tokensSeen += batch * t;
    maxPeak = std::max(maxPeak, st.peak_bytes);
    evictions += st.remat_evictions;
  }
  std::cout << "total: steps=" << opts.steps << " tokens=" << tokensSeen
            << " time_ms=" << formatMs(totalMs) << " tokens_per_s="
            << formatDouble(totalMs > 0 ? tokensSeen * 1000.0 / totalMs : 0)
            << " max_peak_bytes=" << maxPeak << " evictions=" << evictions
            << " first_loss=" << formatDouble(firstLoss)
            << " last_loss=" << formatDouble(lastLoss) << "\n";

  if (!opts.saveParams.empty())
    if (disc::Status s = session.saveState(opts.saveParams); !s)
      return fail(statusFailure(s, "--save-params: "));
  return kExitOk;
}
