//===- fuzz_tensor_io.cpp - fuzz target: .npy / TensorProto / shape parsers
//===//
//
// Feeds arbitrary bytes to the readers disc-run uses for --input files
// (runtime/tools/disc-run/TensorIO.h), dispatching as readTensorFile does:
// the NumPy magic selects parseNpy, anything else parseTensorProto. Short
// inputs also go through parseShape ("2x3x4"). Properties checked besides
// "no crash": an accepted .npy survives encodeNpy -> parseNpy unchanged, and
// an accepted tensor's byte size matches its shape.
//
//===----------------------------------------------------------------------===//
#include "TensorIO.h"

#include <cstdlib>
#include <cstring>

using namespace disc;

static void check(bool cond) {
  if (!cond)
    std::abort();
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  Tensor t;
  if (size >= 6 && std::memcmp(data, "\x93NUMPY", 6) == 0) {
    if (io::parseNpy(data, size, &t)) {
      check(t.isValid() && t.numElements() >= 0);
      std::string bytes = io::encodeNpy(t);
      Tensor back;
      check(static_cast<bool>(io::parseNpy(bytes.data(), bytes.size(), &back)));
      check(back.dtype() == t.dtype() && back.shape() == t.shape());
      check(t.byteSize() == 0 ||
            std::memcmp(back.data(), t.data(), t.byteSize()) == 0);
    }
  } else {
    std::string name;
    if (io::parseTensorProto(data, size, &t, &name))
      check(t.isValid() && t.numElements() >= 0 &&
            (t.byteSize() == 0 || t.data() != nullptr));
  }
  if (size < 64) {
    std::vector<int64_t> shape;
    if (io::parseShape(std::string(reinterpret_cast<const char *>(data), size),
                       &shape))
      check(numElementsOf(shape) >= 0);
  }
  return 0;
}
