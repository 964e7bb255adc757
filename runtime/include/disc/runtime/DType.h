//===- DType.h - Element types and shapes -----------------------*- C++ -*-===//
//
// The element types of the model ABI (`disc_dtype` in c_api.h), their
// signature spellings and sizes in bytes, IEEE half conversions, and the
// helpers on shapes (dims in elements) the rest of the API uses.
//
// Part of the C++ API; "disc/runtime/Runtime.h" includes every part.
//
//===----------------------------------------------------------------------===//
#ifndef DISC_RUNTIME_DTYPE_H
#define DISC_RUNTIME_DTYPE_H

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace disc {

/// Element types of the ABI. The numeric values are those of the C API
/// (`disc_dtype` in c_api.h).
enum class DType : int32_t {
  Float16 = 0,
  Float32,
  Float64,
  Int8,
  Int16,
  Int32,
  Int64,
  UInt8,
  UInt16,
  UInt32,
  UInt64,
  Bool,
  /// bfloat16 (the upper half of an IEEE float32).
  BFloat16,
};

/// Signature spelling: "float32", "int64", "bool", ...
const char *dtypeName(DType dtype);
/// Parses a signature spelling; returns false for an unknown name.
bool parseDType(std::string_view name, DType *out);
/// Size of one element in bytes (bool: 1).
int64_t dtypeSize(DType dtype);
bool isFloatingPoint(DType dtype);
bool isSigned(DType dtype);

/// IEEE half <-> float conversions (round to nearest even).
float halfToFloat(uint16_t h);
uint16_t floatToHalf(float f);
/// bfloat16 <-> float conversions (to bfloat16: round to nearest even, NaN
/// stays a quiet NaN).
float bfloat16ToFloat(uint16_t b);
uint16_t floatToBFloat16(float f);

/// "[2, 3, 4]"; "[]" for a scalar.
std::string shapeToString(const std::vector<int64_t> &shape);
/// Product of the dims (1 for a scalar); -1 on a negative dim or overflow.
int64_t numElementsOf(const std::vector<int64_t> &shape);

} // namespace disc

#endif // DISC_RUNTIME_DTYPE_H
