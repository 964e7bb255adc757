//===- TensorIO.h - .npy / ONNX TensorProto readers and input generators --===//
//
// Used by disc-run, the embedding example and the tests. Every function
// returns a Status (InvalidArgument for malformed or unsupported files) and
// never crashes on truncated or corrupt input.
//
//===----------------------------------------------------------------------===//
#ifndef DISC_TOOLS_TENSORIO_H
#define DISC_TOOLS_TENSORIO_H

#include "disc/runtime/Runtime.h"

#include <cstdint>
#include <string>
#include <vector>

namespace disc::io {

/// Parses a NumPy .npy image (format 1.0/2.0/3.0, little-endian or
/// byte-order-free dtypes, C order). Errors: bad magic, truncated header or
/// data, Fortran order, big-endian or unsupported dtype.
Status parseNpy(const void *data, size_t size, Tensor *out);
/// Reads a .npy file (see parseNpy).
Status readNpy(const std::string &path, Tensor *out);
/// Serializes `t` as a .npy format 1.0 image (2.0 if the header needs it).
std::string encodeNpy(const Tensor &t);
/// Writes `t` to `path` as .npy. Errors: cannot open/write the file.
Status writeNpy(const std::string &path, const Tensor &t);

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
