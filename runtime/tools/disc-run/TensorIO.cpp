//===- TensorIO.cpp - .npy / ONNX TensorProto readers and generators ------===//

#include "TensorIO.h"

#include <onnx/onnx-data_pb.h>
#include <onnx/onnx_pb.h>

#include <cstring>
#include <fstream>
#include <limits>
#include <random>
#include <sstream>

namespace disc::io {

Status readFile(const std::string &path, std::string *out) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return Status::invalidArgument("cannot open '" + path + "'");
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad())
    return Status::invalidArgument("cannot read '" + path + "'");
  *out = ss.str();
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// ONNX TensorProto
//===----------------------------------------------------------------------===//

namespace {

bool onnxToDType(int32_t type, DType *out) {
  using TP = onnx::TensorProto;
  switch (type) {
  case TP::FLOAT:
    *out = DType::Float32;
    return true;
  case TP::UINT8:
    *out = DType::UInt8;
    return true;
  case TP::INT8:
    *out = DType::Int8;
    return true;
  case TP::UINT16:
    *out = DType::UInt16;
    return true;
  case TP::INT16:
    *out = DType::Int16;
    return true;
  case TP::INT32:
    *out = DType::Int32;
    return true;
  case TP::INT64:
    *out = DType::Int64;
    return true;
  case TP::BOOL:
    *out = DType::Bool;
    return true;
  case TP::FLOAT16:
    *out = DType::Float16;
    return true;
  case TP::BFLOAT16:
    *out = DType::BFloat16;
    return true;
  case TP::DOUBLE:
    *out = DType::Float64;
    return true;
  case TP::UINT32:
    *out = DType::UInt32;
    return true;
  case TP::UINT64:
    *out = DType::UInt64;
    return true;
  default:
    return false;
  }
}

/// Stores `value` as element `i` of `t` (narrowing as the dtype says).
template <typename V>
void storeElement(Tensor &t, int64_t i, V value) {
  char *p = static_cast<char *>(t.data());
  switch (t.dtype()) {
  case DType::Float32:
    reinterpret_cast<float *>(p)[i] = static_cast<float>(value);
    break;
  case DType::Float64:
    reinterpret_cast<double *>(p)[i] = static_cast<double>(value);
    break;
  case DType::Float16: // int32_data holds the raw bits.
  case DType::BFloat16:
    reinterpret_cast<uint16_t *>(p)[i] = static_cast<uint16_t>(value);
    break;
  case DType::Int8:
    reinterpret_cast<int8_t *>(p)[i] = static_cast<int8_t>(value);
    break;
  case DType::Int16:
    reinterpret_cast<int16_t *>(p)[i] = static_cast<int16_t>(value);
    break;
  case DType::Int32:
    reinterpret_cast<int32_t *>(p)[i] = static_cast<int32_t>(value);
    break;
  case DType::Int64:
    reinterpret_cast<int64_t *>(p)[i] = static_cast<int64_t>(value);
    break;
  case DType::UInt8:
    reinterpret_cast<uint8_t *>(p)[i] = static_cast<uint8_t>(value);
    break;
  case DType::UInt16:
    reinterpret_cast<uint16_t *>(p)[i] = static_cast<uint16_t>(value);
    break;
  case DType::UInt32:
    reinterpret_cast<uint32_t *>(p)[i] = static_cast<uint32_t>(value);
    break;
  case DType::UInt64:
    reinterpret_cast<uint64_t *>(p)[i] = static_cast<uint64_t>(value);
    break;
  case DType::Bool:
    reinterpret_cast<uint8_t *>(p)[i] = value != 0 ? 1 : 0;
    break;
  }
}

template <typename Field>
Status fillFromField(const Field &field, const char *fieldName, int64_t n,
                     Tensor &t) {
  if (static_cast<int64_t>(field.size()) != n)
    return Status::invalidArgument(
        std::string("TensorProto: ") + fieldName + " has " +
        std::to_string(field.size()) + " values but shape " +
        shapeToString(t.shape()) + " needs " + std::to_string(n));
  for (int64_t i = 0; i < n; ++i)
    storeElement(t, i, field.Get(static_cast<int>(i)));
  return Status::ok();
}

} // namespace

Status parseTensorProto(const void *data, size_t size, Tensor *out,
                        std::string *name) {
  if (size > static_cast<size_t>(std::numeric_limits<int>::max()))
    return Status::invalidArgument("TensorProto: file too large");
  onnx::TensorProto proto;
  if (!proto.ParseFromArray(data, static_cast<int>(size)))
    return Status::invalidArgument("not a valid ONNX TensorProto");
  if (proto.data_location() == onnx::TensorProto::EXTERNAL)
    return Status::invalidArgument(
        "TensorProto: external data is not supported");
  if (proto.has_segment())
    return Status::invalidArgument("TensorProto: segments are not supported");
  DType dtype;
  if (!proto.has_data_type() || !onnxToDType(proto.data_type(), &dtype))
    return Status::invalidArgument(
        "TensorProto: unsupported or missing data_type " +
        std::to_string(proto.data_type()));
  std::vector<int64_t> shape(proto.dims().begin(), proto.dims().end());
  int64_t n = numElementsOf(shape);
  if (n < 0 || n > std::numeric_limits<int64_t>::max() / 8)
    return Status::invalidArgument("TensorProto: invalid dims " +
                                   shapeToString(shape));
  int64_t elem = dtypeSize(dtype);
  if (proto.has_raw_data()) {
    const std::string &raw = proto.raw_data();
    if (static_cast<uint64_t>(raw.size()) != static_cast<uint64_t>(n * elem))
      return Status::invalidArgument(
          "TensorProto: raw_data has " + std::to_string(raw.size()) +
          " bytes but shape " + shapeToString(shape) + " of " +
          dtypeName(dtype) + " needs " + std::to_string(n * elem));
  } else {
    // Check the count before allocating, so a corrupt dims field cannot
    // make us allocate a huge buffer.
    int64_t count = 0;
    switch (dtype) {
    case DType::Float32:
      count = proto.float_data_size();
      break;
    case DType::Float64:
      count = proto.double_data_size();
      break;
    case DType::Int64:
      count = proto.int64_data_size();
      break;
    case DType::UInt32:
    case DType::UInt64:
      count = proto.uint64_data_size();
      break;
    default:
      count = proto.int32_data_size();
      break;
    }
    if (count != n)
      return Status::invalidArgument(
          "TensorProto: has " + std::to_string(count) +
          " typed values but shape " + shapeToString(shape) + " needs " +
          std::to_string(n));
  }
  Tensor t = Tensor::zeros(dtype, shape);
  if (!t.isValid())
    return Status::resourceExhausted("TensorProto: cannot allocate tensor");
  if (proto.has_raw_data()) {
    if (n > 0)
      std::memcpy(t.data(), proto.raw_data().data(),
                  static_cast<size_t>(n * elem));
  } else {
    Status s;
    switch (dtype) {
    case DType::Float32:
      s = fillFromField(proto.float_data(), "float_data", n, t);
      break;
    case DType::Float64:
      s = fillFromField(proto.double_data(), "double_data", n, t);
      break;
    case DType::Int64:
      s = fillFromField(proto.int64_data(), "int64_data", n, t);
      break;
    case DType::UInt32:
    case DType::UInt64:
      s = fillFromField(proto.uint64_data(), "uint64_data", n, t);
      break;
    default:
      s = fillFromField(proto.int32_data(), "int32_data", n, t);
      break;
    }
    if (!s)
      return s;
  }
  if (name)
    *name = proto.name();
  *out = std::move(t);
  return Status::ok();
}

Status readTensorProto(const std::string &path, Tensor *out,
                       std::string *name) {
  std::string contents;
  if (Status s = readFile(path, &contents); !s)
    return s;
  if (Status s = parseTensorProto(contents.data(), contents.size(), out, name);
      !s)
    return Status(s.code(), "'" + path + "': " + s.message());
  return Status::ok();
}

Status readTensorFile(const std::string &path, Tensor *out) {
  std::string contents;
  if (Status s = readFile(path, &contents); !s)
    return s;
  Status s;
  // The NumPy magic.
  if (contents.size() >= 6 && std::memcmp(contents.data(), "\x93NUMPY", 6) == 0)
    s = parseNpy(contents.data(), contents.size(), out);
  else
    s = parseTensorProto(contents.data(), contents.size(), out);
  if (!s)
    return Status(s.code(), "'" + path + "': " + s.message());
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// Generated inputs
//===----------------------------------------------------------------------===//

Status parseShape(const std::string &text, std::vector<int64_t> *out) {
  out->clear();
  if (text == "scalar")
    return Status::ok();
  if (text.empty())
    return Status::invalidArgument("empty shape (use 'scalar' for rank 0)");
  size_t pos = 0;
  while (true) {
    size_t end = text.find('x', pos);
    std::string part = text.substr(
        pos, end == std::string::npos ? std::string::npos : end - pos);
    if (part.empty() || part.size() > 18 ||
        part.find_first_not_of("0123456789") != std::string::npos)
      return Status::invalidArgument("bad shape '" + text +
                                     "' (expected e.g. 2x3x224 or scalar)");
    out->push_back(std::stoll(part));
    if (end == std::string::npos)
      break;
    pos = end + 1;
  }
  if (numElementsOf(*out) < 0)
    return Status::invalidArgument("shape '" + text + "' is too large");
  return Status::ok();
}

Status makeFilledTensor(DType dtype, const std::vector<int64_t> &shape,
                        FillKind kind, uint64_t seed, Tensor *out) {
  Tensor t = Tensor::zeros(dtype, shape);
  if (!t.isValid())
    return Status::resourceExhausted("cannot allocate a tensor of shape " +
                                     shapeToString(shape));
  int64_t n = t.numElements();
  std::mt19937_64 rng(seed);
  for (int64_t i = 0; i < n; ++i) {
    uint64_t bits = kind == FillKind::Random ? rng() : 0;
    double real = 0;
    int64_t integer = 0;
    if (kind == FillKind::Random) {
      // Uniform [-1, 1) from the top 53 bits; small ints in [0, 10).
      real = static_cast<double>(bits >> 11) * 0x1.0p-53 * 2.0 - 1.0;
      integer = static_cast<int64_t>((bits >> 11) % 10);
    } else if (kind == FillKind::Ones) {
      real = 1;
      integer = 1;
    }
    switch (dtype) {
    case DType::Float16:
      t.data<uint16_t>()[i] = floatToHalf(static_cast<float>(real));
      break;
    case DType::BFloat16:
      t.data<uint16_t>()[i] = floatToBFloat16(static_cast<float>(real));
      break;
    case DType::Float32:
    case DType::Float64:
      storeElement(t, i, real);
      break;
    case DType::Bool:
      storeElement(t, i, kind == FillKind::Random ? (integer & 1) : integer);
      break;
    default:
      storeElement(t, i, integer);
      break;
    }
  }
  *out = std::move(t);
  return Status::ok();
}

Status readOptionalTensorFile(const std::string &path,
                              const disc::TensorSpec &spec, Tensor *out) {
  std::string contents;
  if (Status s = readFile(path, &contents); !s)
    return s;
  if (contents.size() >= 6 && std::memcmp(contents.data(), "\x93NUMPY", 6) == 0)
    return parseNpy(contents.data(), contents.size(), out);
  onnx::OptionalProto proto;
  if (contents.size() > static_cast<size_t>(std::numeric_limits<int>::max()) ||
      !proto.ParseFromArray(contents.data(), static_cast<int>(contents.size())))
    return Status::invalidArgument("'" + path +
                                   "': not a valid ONNX OptionalProto");
  if (proto.has_tensor_value()) {
    std::string bytes = proto.tensor_value().SerializeAsString();
    Tensor t;
    if (Status s = parseTensorProto(bytes.data(), bytes.size(), &t); !s)
      return Status(s.code(), "'" + path + "': " + s.message());
    std::vector<int64_t> shape = {1};
    shape.insert(shape.end(), t.shape().begin(), t.shape().end());
    *out = Tensor::fromData(t.dtype(), std::move(shape), t.data());
    return Status::ok();
  }
  if (proto.has_sparse_tensor_value() || proto.has_sequence_value() ||
      proto.has_map_value() || proto.has_optional_value())
    return Status::invalidArgument(
        "'" + path +
        "': the OptionalProto holds something other than a "
        "tensor");
  std::vector<int64_t> shape = {0};
  for (size_t i = 1; i < spec.shape.size(); ++i)
    shape.push_back(spec.shape[i].isStatic() ? spec.shape[i].size : 1);
  *out = Tensor::zeros(spec.dtype, std::move(shape));
  return Status::ok();
}

} // namespace disc::io
