//===- fuzz_compiled_models.cpp - fuzz target: compiled models, random inputs
//===//
//
// Loads every model.so in $DISC_FUZZ_MODELS (scripts/fuzz.sh compiles the
// small models of test/fuzz/make_models.py with disc-compile, instrumented
// with --sanitize=address) and runs one of them per input with shapes and
// values decoded from the fuzz bytes (FuzzInput.h): sizes of named dims in
// their ranges (up to 12) or deliberately wrong, raw float bits (NaN, Inf,
// denormals), small or raw integers. Properties: the run succeeds with one
// valid tensor per output whose static dims match the signature, or fails
// with a message; no sanitizer report in the runtime or the model.
//
//===----------------------------------------------------------------------===//
#include "FuzzInput.h"

#include "disc/runtime/Runtime.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

using namespace disc;

static void check(bool cond) {
  if (!cond)
    std::abort();
}

static std::vector<std::shared_ptr<const Executable>> &executables() {
  static std::vector<std::shared_ptr<const Executable>> exes;
  return exes;
}

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  const char *dir = std::getenv("DISC_FUZZ_MODELS");
  if (!dir) {
    std::fprintf(stderr, "set DISC_FUZZ_MODELS to a directory of model.so "
                         "files (scripts/fuzz.sh does)\n");
    std::abort();
  }
  std::vector<std::string> paths;
  for (const auto &entry : std::filesystem::directory_iterator(dir))
    if (entry.path().extension() == ".so")
      paths.push_back(entry.path().string());
  std::sort(paths.begin(), paths.end());
  for (const std::string &path : paths) {
    std::shared_ptr<const Executable> exe;
    Status s = Executable::load(path, &exe);
    if (!s) {
      std::fprintf(stderr, "cannot load %s: %s\n", path.c_str(),
                   s.toString().c_str());
      std::abort();
    }
    executables().push_back(exe);
  }
  if (executables().empty()) {
    std::fprintf(stderr, "no model.so in %s\n", dir);
    std::abort();
  }
  std::fprintf(stderr, "fuzz_compiled_models: %zu models\n",
               executables().size());
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fuzz::ByteReader r(data, size);
  const auto &exe = executables()[r.byte() % executables().size()];
  bool smallInts = !r.flip(8);
  std::vector<Tensor> inputs =
      fuzz::makeInputs(r, exe->signature(), /*dimCap=*/12, smallInts);
  Session session(exe);
  std::vector<Tensor> outputs;
  Status s = session.run(inputs, &outputs);
  const Signature &sig = exe->signature();
  if (s) {
    check(outputs.size() == sig.outputs.size());
    for (size_t i = 0; i < outputs.size(); ++i) {
      const Tensor &t = outputs[i];
      check(t.isValid() && t.dtype() == sig.outputs[i].dtype &&
            t.rank() == sig.outputs[i].rank() &&
            (t.byteSize() == 0 || t.data()));
      for (int64_t d = 0; d < t.rank(); ++d)
        check(!sig.outputs[i].shape[d].isStatic() ||
              sig.outputs[i].shape[d].size == t.shape()[d]);
    }
  } else {
    check(outputs.empty() && !s.message().empty());
  }
  check(session.stats().current_bytes == 0);
  return 0;
}
