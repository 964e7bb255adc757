//===- fuzz_input_binding.cpp - fuzz target: signatures and input binding -===//
//
// Two surfaces of the runtime that take outside data:
//  - Signature::parse on arbitrary JSON (a model's disc_model_signature());
//  - input binding: Session::run / disc_session_run with tensors of fuzzed
//    dtype, rank, dims and values against the runtime's test fixtures
//    (test/unittests/runtime/fixtures: add_model, alias_model), with and
//    without a memory limit, positionally, by name and through the C API.
// Properties: a successful run returns one valid tensor per signature output
// and leaves no live bytes; a rejected run returns an error message.
//
//===----------------------------------------------------------------------===//
#include "FuzzInput.h"

#include "disc/runtime/Runtime.h"
#include "disc/runtime/c_api.h"

#include <cstdlib>

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
  for (const char *path : {DISC_FIXTURE_ADD, DISC_FIXTURE_ALIAS}) {
    std::shared_ptr<const Executable> exe;
    Status s = Executable::load(path, &exe);
    if (!s) {
      std::fprintf(stderr, "cannot load fixture %s: %s\n", path,
                   s.toString().c_str());
      std::abort();
    }
    executables().push_back(exe);
  }
  return 0;
}

static void runCApi(const std::shared_ptr<const Executable> &exe,
                    const std::vector<Tensor> &inputs, int64_t limit) {
  disc_executable_t *cexe = nullptr;
  if (disc_executable_load(exe->path().c_str(), &cexe) != DISC_STATUS_OK)
    std::abort();
  disc_session_options_t options{limit};
  disc_session_t *session = nullptr;
  check(disc_session_create(cexe, &options, &session) == DISC_STATUS_OK);
  std::vector<disc_tensor_t *> in;
  for (const Tensor &t : inputs) {
    disc_tensor_t *ct = nullptr;
    if (disc_tensor_create(static_cast<disc_dtype>(t.dtype()), t.shape().data(),
                           t.rank(), t.data(), &ct) == DISC_STATUS_OK)
      in.push_back(ct);
  }
  int64_t numOut = disc_executable_num_outputs(cexe);
  std::vector<disc_tensor_t *> out(numOut, nullptr);
  disc_status_code rc =
      disc_session_run(session, in.data(), in.size(), out.data(), numOut);
  if (rc == DISC_STATUS_OK) {
    for (disc_tensor_t *t : out) {
      check(t != nullptr && disc_tensor_num_elements(t) >= 0);
      disc_tensor_destroy(t);
    }
  } else {
    check(disc_last_error_message() && *disc_last_error_message());
  }
  for (disc_tensor_t *t : in)
    disc_tensor_destroy(t);
  disc_session_destroy(session);
  disc_executable_release(cexe);
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fuzz::ByteReader r(data, size);
  uint8_t mode = r.byte();
  if (mode < 64) {
    Signature sig;
    std::string json = r.rest();
    if (Signature::parse(json, &sig)) {
      for (const TensorSpec &t : sig.inputs)
        for (const DimSpec &d : t.shape)
          (void)d.toString();
      (void)sig.findInput("x");
    }
    return 0;
  }
  const auto &exe = executables()[mode % executables().size()];
  int64_t limit = r.flip(4) ? static_cast<int64_t>(r.below(4096)) : 0;
  std::vector<Tensor> inputs =
      fuzz::makeInputs(r, exe->signature(), /*dimCap=*/80, false);
  uint8_t how = r.byte() % 3;
  if (how == 2) {
    runCApi(exe, inputs, limit);
    return 0;
  }
  Session session(exe, SessionOptions{limit});
  std::vector<Tensor> outputs;
  Status s;
  if (how == 0) {
    s = session.run(inputs, &outputs);
  } else {
    std::map<std::string, Tensor> named;
    for (size_t i = 0; i < inputs.size(); ++i) {
      std::string name = i < exe->signature().inputs.size()
                             ? exe->signature().inputs[i].name
                             : "extra";
      if (r.flip(32))
        name += "_";
      named[name] = inputs[i];
    }
    s = session.run(named, &outputs);
  }
  if (s) {
    check(outputs.size() == exe->signature().outputs.size());
    for (const Tensor &t : outputs)
      check(t.isValid() && (t.byteSize() == 0 || t.data()));
  } else {
    check(outputs.empty() && !s.message().empty());
  }
  check(session.stats().current_bytes == 0);
  return 0;
}
