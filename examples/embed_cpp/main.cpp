//===- main.cpp - Embedding the DISC runtime in a C++ program -------------===//
//
// usage: embed_cpp_example MODEL.so [--dim NAME=VALUE]... [--memory-limit B]
//
// Loads the model, builds random inputs from its signature (named dims take
// the --dim values, default 1 or the symbol's minimum), runs it and prints
// the output shapes and session statistics.
//
//===----------------------------------------------------------------------===//

#include "TensorIO.h"
#include "disc/runtime/Runtime.h"

#include <cstdlib>
#include <iostream>
#include <map>

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

  // 2. Inputs from the signature: static dims as given, named dims from
  //    --dim (default: the symbol's minimum, at least 1).
  std::vector<disc::Tensor> inputs;
  for (size_t i = 0; i < sig.inputs.size(); ++i) {
    const disc::TensorSpec &spec = sig.inputs[i];
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
    disc::Tensor t;
    if (disc::Status s = disc::io::makeFilledTensor(
            spec.dtype, shape, disc::io::FillKind::Random, i, &t);
        !s) {
      std::cerr << "error: " << s.toString() << "\n";
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
  for (size_t i = 0; i < outputs.size(); ++i)
    std::cout << "output '" << sig.outputs[i].name
              << "': " << disc::dtypeName(outputs[i].dtype()) << " "
              << disc::shapeToString(outputs[i].shape()) << "\n";
  const disc::SessionStats &st = session.stats();
  std::cout << "latency_ms=" << st.last_latency_ms
            << " peak_bytes=" << st.peak_bytes
            << " num_allocs=" << st.num_allocs << "\n";
  return 0;
}
