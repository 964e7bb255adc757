//===- TensorIO.h - .npy / ONNX TensorProto readers and input generators --===//
//
// Used by disc-run, the embedding example and the tests. Every function
// returns a Status (InvalidArgument for malformed or unsupported files) and
// never crashes on truncated or corrupt input.
//
//===----------------------------------------------------------------------===//
#ifndef DISC_TOOLS_TENSORIO_H
#define DISC_TOOLS_TENSORIO_H

#include "disc/runtime/Npy.h"
#include "disc/runtime/Runtime.h"

#include <cstdint>
#include <string>
#include <vector>

namespace disc::io {

// The .npy reader and writer are the runtime library's (disc/runtime/Npy.h,
// shared with Session::saveState/loadState); disc-run and the tests keep
// calling them as io::parseNpy, io::readNpy, io::encodeNpy, io::writeNpy.
using disc::encodeNpy;
using disc::parseNpy;
using disc::readNpy;
using disc::writeNpy;

/// Parses a serialized onnx.TensorProto: raw_data or the typed repeated
/// fields (float_data, int32_data, int64_data, double_data, uint64_data).
/// `name`, if non-null, receives the proto's name. Errors: parse failure,
/// unsupported element type, external data, element count mismatch.
Status parseTensorProto(const void *data, size_t size, Tensor *out,
                        std::string *name = nullptr);
/// Reads an ONNX TensorProto .pb file (see parseTensorProto).
Status readTensorProto(const std::string &path, Tensor *out,
                       std::string *name = nullptr);

/// Reads `path` as .npy when it starts with the NumPy magic, otherwise as a
/// TensorProto.
Status readTensorFile(const std::string &path, Tensor *out);

/// Reads an optional tensor input (docs/runtime-abi.md: [count, dims...])
/// from `path`: a .npy file as it is; an ONNX OptionalProto .pb holding a
/// tensor becomes [1, dims...], an empty one [0, rest...] of `dtype`, with
/// `rest` the static dims of `spec` (1 for the others). Errors: a
/// malformed file, an OptionalProto holding something other than a tensor.
Status readOptionalTensorFile(const std::string &path,
                              const disc::TensorSpec &spec, Tensor *out);

/// Parses "2x3x224x224" (or "scalar" for rank 0) into dims.
Status parseShape(const std::string &text, std::vector<int64_t> *out);

enum class FillKind { Random, Zeros, Ones };

/// A generated tensor: Random = uniform [-1, 1) for floats, integers in
/// [0, 10) for int types, 0/1 for bool; deterministic in `seed`.
Status makeFilledTensor(DType dtype, const std::vector<int64_t> &shape,
                        FillKind kind, uint64_t seed, Tensor *out);

/// Reads a whole file into `out`. Errors: cannot open/read.
Status readFile(const std::string &path, std::string *out);

} // namespace disc::io

#endif // DISC_TOOLS_TENSORIO_H
