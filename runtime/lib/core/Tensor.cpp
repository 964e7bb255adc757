//===- Tensor.cpp - Status, element types and host tensors ----------------===//

#include "disc/runtime/Runtime.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>

namespace disc {

//===----------------------------------------------------------------------===//
// Status
//===----------------------------------------------------------------------===//

const char *statusCodeName(StatusCode code) {
  // By the numeric value of the code (Ok = 0 .. Internal = 4).
  static const char *const kNames[] = {"ok", "invalid argument",
                                       "resource exhausted", "load failed",
                                       "internal"};
  auto i = static_cast<int32_t>(code);
  return i >= 0 && i < 5 ? kNames[i] : "unknown";
}

std::string Status::toString() const {
  if (isOk())
    return "ok";
  return std::string(statusCodeName(code_)) + ": " + message_;
}

//===----------------------------------------------------------------------===//
// Element types
//===----------------------------------------------------------------------===//

namespace {
struct DTypeInfo {
  DType dtype;
  const char *name;
  int64_t size;
};
const DTypeInfo kDTypes[] = {
    {DType::Float16, "float16", 2},   {DType::Float32, "float32", 4},
    {DType::Float64, "float64", 8},   {DType::Int8, "int8", 1},
    {DType::Int16, "int16", 2},       {DType::Int32, "int32", 4},
    {DType::Int64, "int64", 8},       {DType::UInt8, "uint8", 1},
    {DType::UInt16, "uint16", 2},     {DType::UInt32, "uint32", 4},
    {DType::UInt64, "uint64", 8},     {DType::Bool, "bool", 1},
    {DType::BFloat16, "bfloat16", 2},
};
} // namespace

const char *dtypeName(DType dtype) {
  for (const DTypeInfo &info : kDTypes)
    if (info.dtype == dtype)
      return info.name;
  return "unknown";
}

bool parseDType(std::string_view name, DType *out) {
  for (const DTypeInfo &info : kDTypes) {
    if (name == info.name) {
      *out = info.dtype;
      return true;
    }
  }
  return false;
}

int64_t dtypeSize(DType dtype) {
  for (const DTypeInfo &info : kDTypes)
    if (info.dtype == dtype)
      return info.size;
  return 1;
}

bool isFloatingPoint(DType dtype) {
  return dtype == DType::Float16 || dtype == DType::Float32 ||
         dtype == DType::Float64 || dtype == DType::BFloat16;
}

bool isSigned(DType dtype) {
  switch (dtype) {
  case DType::Float16:
  case DType::BFloat16:
  case DType::Float32:
  case DType::Float64:
  case DType::Int8:
  case DType::Int16:
  case DType::Int32:
  case DType::Int64:
    return true;
  default:
    return false;
  }
}

float bfloat16ToFloat(uint16_t b) {
  uint32_t bits = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

uint16_t floatToBFloat16(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  if ((bits & 0x7fffffffu) > 0x7f800000u) // NaN: keep it quiet.
    return static_cast<uint16_t>((bits >> 16) | 0x40u);
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>(bits >> 16);
}

float halfToFloat(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  uint32_t bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else { // Subnormal: normalize.
      exp = 127 - 15 + 1;
      while ((mant & 0x400u) == 0) {
        mant <<= 1;
        --exp;
      }
      mant &= 0x3ffu;
      bits = sign | (exp << 23) | (mant << 13);
    }
  } else if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (mant << 13);
  } else {
    bits = sign | ((exp + 127 - 15) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &bits, sizeof(f));
  return f;
}

uint16_t floatToHalf(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof(bits));
  uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
  uint32_t absBits = bits & 0x7fffffffu;
  if (absBits >= 0x7f800000u) // Inf or NaN.
    return sign | 0x7c00u | (absBits > 0x7f800000u ? 0x200u : 0u);
  if (absBits >= 0x477ff000u) // Rounds to >= 65520: overflow to inf.
    return sign | 0x7c00u;
  if (absBits < 0x38800000u) { // Subnormal half or zero.
    if (absBits < 0x33000000u)
      return sign;
    uint32_t exp = absBits >> 23;
    uint32_t mant = (absBits & 0x7fffffu) | 0x800000u;
    // Value = mant * 2^(exp-150); the half subnormal unit is 2^-24.
    uint32_t shift = 126 - exp; // In [14, 24].
    uint32_t halfMant = mant >> shift;
    uint32_t rem = mant & ((1u << shift) - 1);
    uint32_t halfway = 1u << (shift - 1);
    if (rem > halfway || (rem == halfway && (halfMant & 1u)))
      ++halfMant;
    return sign | static_cast<uint16_t>(halfMant);
  }
  uint32_t exp = (absBits >> 23) - 127 + 15;
  uint32_t mant = absBits & 0x7fffffu;
  uint32_t h = (exp << 10) | (mant >> 13);
  uint32_t rem = mant & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1u)))
    ++h; // May carry into the exponent, which is correct.
  return sign | static_cast<uint16_t>(h);
}

std::string shapeToString(const std::vector<int64_t> &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i)
      s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

int64_t numElementsOf(const std::vector<int64_t> &shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0)
      return -1;
    if (d != 0 && n > std::numeric_limits<int64_t>::max() / d)
      return -1;
    n *= d;
  }
  return n;
}

//===----------------------------------------------------------------------===//
// Tensor
//===----------------------------------------------------------------------===//

namespace {
/// 64-byte aligned, zero-filled host buffer owned by a shared_ptr.
std::shared_ptr<void> allocateBuffer(int64_t bytes) {
  void *p = nullptr;
  size_t size = bytes > 0 ? static_cast<size_t>(bytes) : 1;
  if (posix_memalign(&p, 64, size) != 0)
    return nullptr;
  std::memset(p, 0, size);
  return std::shared_ptr<void>(p, [](void *q) { std::free(q); });
}
} // namespace

Tensor Tensor::zeros(DType dtype, std::vector<int64_t> shape) {
  int64_t n = numElementsOf(shape);
  if (n < 0 || n > std::numeric_limits<int64_t>::max() / 8)
    return Tensor();
  std::shared_ptr<void> buffer = allocateBuffer(n * dtypeSize(dtype));
  if (!buffer)
    return Tensor();
  Tensor t;
  t.valid_ = true;
  t.dtype_ = dtype;
  t.shape_ = std::move(shape);
  t.data_ = buffer.get();
  t.owner_ = std::move(buffer);
  return t;
}

Tensor Tensor::fromData(DType dtype, std::vector<int64_t> shape,
                        const void *data) {
  Tensor t = zeros(dtype, std::move(shape));
  if (t.isValid() && data && t.byteSize() > 0)
    std::memcpy(t.data_, data, static_cast<size_t>(t.byteSize()));
  return t;
}

Tensor Tensor::adopt(DType dtype, std::vector<int64_t> shape, void *data,
                     std::shared_ptr<void> owner) {
  Tensor t;
  if (numElementsOf(shape) < 0)
    return t;
  t.valid_ = true;
  t.dtype_ = dtype;
  t.shape_ = std::move(shape);
  t.data_ = data;
  t.owner_ = std::move(owner);
  return t;
}

double Tensor::elementAsDouble(int64_t i) const {
  const char *p = static_cast<const char *>(data_);
  switch (dtype_) {
  case DType::Float16: {
    uint16_t h;
    std::memcpy(&h, p + 2 * i, 2);
    return halfToFloat(h);
  }
  case DType::BFloat16: {
    uint16_t h;
    std::memcpy(&h, p + 2 * i, 2);
    return bfloat16ToFloat(h);
  }
  case DType::Float32:
    return reinterpret_cast<const float *>(p)[i];
  case DType::Float64:
    return reinterpret_cast<const double *>(p)[i];
  case DType::Int8:
    return reinterpret_cast<const int8_t *>(p)[i];
  case DType::Int16:
    return reinterpret_cast<const int16_t *>(p)[i];
  case DType::Int32:
    return reinterpret_cast<const int32_t *>(p)[i];
  case DType::Int64:
    return static_cast<double>(reinterpret_cast<const int64_t *>(p)[i]);
  case DType::UInt8:
    return reinterpret_cast<const uint8_t *>(p)[i];
  case DType::UInt16:
    return reinterpret_cast<const uint16_t *>(p)[i];
  case DType::UInt32:
    return reinterpret_cast<const uint32_t *>(p)[i];
  case DType::UInt64:
    return static_cast<double>(reinterpret_cast<const uint64_t *>(p)[i]);
  case DType::Bool:
    return reinterpret_cast<const uint8_t *>(p)[i] ? 1.0 : 0.0;
  }
  return 0;
}

Tensor Tensor::clone() const {
  if (!valid_)
    return Tensor();
  return fromData(dtype_, shape_, data_);
}

} // namespace disc
