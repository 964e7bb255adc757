//===- main.cpp - Embedding the DISC runtime in a C++ program -------------===//
//
// usage: embed_cpp MODEL.so [--dim NAME=VALUE]... [--memory-limit BYTES]
//
// Loads a model compiled by disc-compile, builds its inputs from the
// signature (static dims as declared, named dims from --dim, default the
// symbol's minimum or 1), runs it and prints every output and the session
// statistics. Element k (row-major) of input i holds
// ((k + 3*i) mod 7 - 3) / 4 (float32/float64) or (k + 3*i) mod 7 - 3
// (int32/int64), so the results can be recomputed elsewhere.
//
// Build against an installed runtime (see CMakeLists.txt):
//   find_package(DiscRuntime 1 CONFIG REQUIRED)
//   target_link_libraries(embed_cpp PRIVATE Disc::Runtime)
//
//===----------------------------------------------------------------------===//

#include "disc/runtime/Runtime.h"

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <map>
#include <string>
#include <vector>

namespace {

/// The input pattern described in the file comment. Returns an invalid
/// Tensor for an element type this example does not fill.
disc::Tensor makeInput(disc::DType dtype, const std::vector<int64_t> &shape,
                       int64_t inputIndex) {
  disc::Tensor t = disc::Tensor::zeros(dtype, shape);
  if (!t.isValid())
    return t;
  for (int64_t k = 0; k < t.numElements(); ++k) {
    int64_t v = (k + 3 * inputIndex) % 7 - 3;
    switch (dtype) {
    case disc::DType::Float32:
      t.data<float>()[k] = static_cast<float>(v) / 4;
      break;
    case disc::DType::Float64:
      t.data<double>()[k] = static_cast<double>(v) / 4;
      break;
    case disc::DType::Int32:
      t.data<int32_t>()[k] = static_cast<int32_t>(v);
      break;
    case disc::DType::Int64:
      t.data<int64_t>()[k] = v;
      break;
    default:
      return disc::Tensor();
    }
  }
  return t;
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 2) {
    std::cerr << "usage: " << argv[0]
              << " MODEL.so [--dim NAME=VALUE]... [--memory-limit BYTES]\n";
    return 2;
  }
  std::map<std::string, int64_t> dims;
  disc::SessionOptions options;
  for (int i = 2; i < argc; ++i) {
    std::string arg = argv[i];
    if ((arg == "--dim" || arg == "--memory-limit") && i + 1 < argc) {
      std::string value = argv[++i];
      if (arg == "--memory-limit") {
        options.memory_limit_bytes = std::atoll(value.c_str());
        continue;
      }
      size_t eq = value.find('=');
      if (eq == std::string::npos) {
        std::cerr << "error: --dim expects NAME=VALUE\n";
        return 2;
      }
      dims[value.substr(0, eq)] = std::atoll(value.c_str() + eq + 1);
    } else {
      std::cerr << "error: unexpected argument '" << arg << "'\n";
      return 2;
    }
  }

  // 1. Load: an immutable Executable, shareable between sessions/threads.
  std::shared_ptr<const disc::Executable> exe;
  if (disc::Status s = disc::Executable::load(argv[1], &exe); !s) {
    std::cerr << "error: " << s.toString() << "\n";
    return 2;
  }
  const disc::Signature &sig = exe->signature();

  // 2. Inputs from the signature: static dims as declared, named dims from
  //    --dim (default: the symbol's minimum, at least 1). A training step's
  //    state inputs are the session's: a run takes the others.
  std::vector<disc::Tensor> inputs;
  const std::vector<int64_t> runInputs = sig.runInputs();
  for (size_t i = 0; i < runInputs.size(); ++i) {
    const disc::TensorSpec &spec = sig.inputs[runInputs[i]];
    std::vector<int64_t> shape;
    for (const disc::DimSpec &d : spec.shape) {
      if (d.isStatic()) {
        shape.push_back(d.size);
      } else if (dims.count(d.symbol)) {
        shape.push_back(dims[d.symbol]);
      } else {
        const disc::SymbolSpec *sym = sig.findSymbol(d.symbol);
        shape.push_back(sym && sym->min > 1 ? sym->min : 1);
      }
    }
    disc::Tensor t = makeInput(spec.dtype, shape, static_cast<int64_t>(i));
    if (!t.isValid()) {
      std::cerr << "error: input '" << spec.name << "': cannot fill "
                << disc::dtypeName(spec.dtype) << " "
                << disc::shapeToString(shape) << "\n";
      return 2;
    }
    std::cout << "input '" << spec.name << "': " << disc::dtypeName(t.dtype())
              << " " << disc::shapeToString(t.shape()) << "\n";
    inputs.push_back(std::move(t));
  }

  // 3. Run: one Session per thread; outputs own their buffers.
  disc::Session session(exe, options);
  std::vector<disc::Tensor> outputs;
  if (disc::Status s = session.run(inputs, &outputs); !s) {
    std::cerr << "error: " << s.toString() << "\n";
    return s.code() == disc::StatusCode::ResourceExhausted ? 3 : 4;
  }

  // 4. Outputs: name, dtype, shape and the first 16 values (a training
  //    step's state updates stay in the session).
  const std::vector<int64_t> runOutputs = sig.runOutputs();
  for (size_t i = 0; i < outputs.size(); ++i) {
    const disc::Tensor &out = outputs[i];
    std::cout << "output '" << sig.outputs[runOutputs[i]].name
              << "': " << disc::dtypeName(out.dtype()) << " "
              << disc::shapeToString(out.shape()) << " values:";
    for (int64_t k = 0; k < std::min<int64_t>(out.numElements(), 16); ++k)
      std::cout << " " << out.elementAsDouble(k);
    std::cout << "\n";
  }
  const disc::SessionStats &st = session.stats();
  std::cout << "latency_ms=" << st.last_latency_ms
            << " peak_bytes=" << st.peak_bytes
            << " num_allocs=" << st.num_allocs << "\n";
  return 0;
}
