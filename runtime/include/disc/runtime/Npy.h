//===- Npy.h - NumPy .npy images of Tensors ---------------------*- C++ -*-===//
//
// Reading and writing NumPy `.npy` files (format 1.0/2.0/3.0): the format of
// a session's saved training state (Session::saveState / loadState) and of
// disc-run's inputs, references and outputs. Every function returns a
// Status (InvalidArgument for malformed or unsupported files) and never
// crashes on truncated or corrupt input.
//
// Part of the C++ API; "disc/runtime/Runtime.h" includes every part.
//
//===----------------------------------------------------------------------===//
#ifndef DISC_RUNTIME_NPY_H
#define DISC_RUNTIME_NPY_H

#include "disc/runtime/Status.h"
#include "disc/runtime/Tensor.h"

#include <cstddef>
#include <string>
#include <string_view>

namespace disc {

/// Parses a NumPy .npy image of `size` bytes at `data` (format 1.0/2.0/3.0,
/// little-endian or byte-order-free dtypes of DType, C order) into a new
/// Tensor. Errors: InvalidArgument for a bad magic, a truncated header or
/// data, Fortran order, a big-endian or unsupported dtype;
/// ResourceExhausted when the tensor cannot be allocated.
Status parseNpy(const void *data, size_t size, Tensor *out);
/// Reads the .npy file `path` (see parseNpy). Errors: InvalidArgument
/// "cannot open '<path>'", or parseNpy's message prefixed with the path.
Status readNpy(const std::string &path, Tensor *out);
/// Serializes `t` as a .npy image: format 1.0 (2.0 if the header needs
/// it), C order, little-endian, the data 64-byte aligned in the file.
std::string encodeNpy(const Tensor &t);
/// Writes `t` to `path` as .npy (created or truncated). Errors:
/// InvalidArgument "cannot open '<path>' for writing" / "cannot write".
Status writeNpy(const std::string &path, const Tensor &t);

/// The file name a tensor named `name` is saved under: `name` with every
/// character outside [A-Za-z0-9_.-] replaced by '_', then ".npy"
/// ("opt/m:0" -> "opt_m_0.npy").
std::string npyFileName(std::string_view name);

} // namespace disc

#endif // DISC_RUNTIME_NPY_H
