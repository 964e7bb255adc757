//===- TensorIO.cpp - .npy / ONNX TensorProto readers and generators ------===//

#include "TensorIO.h"

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
// .npy
//===----------------------------------------------------------------------===//

namespace {

const char kNpyMagic[] = "\x93NUMPY";

/// Maps a descr like "<f4" to a dtype. Returns an error message or "".
std::string npyDescrToDType(const std::string &descr, DType *out) {
  if (descr.size() < 3)
    return "unsupported dtype '" + descr + "'";
  char order = descr[0];
  std::string kind = descr.substr(1);
  if (order == '>') {
    // Single-byte types have no byte order; accept them whatever the flag.
    if (kind != "i1" && kind != "u1" && kind != "b1")
      return "big-endian dtype '" + descr + "' is not supported";
  } else if (order != '<' && order != '|' && order != '=') {
    return "unsupported dtype '" + descr + "'";
  }
  static const struct {
    const char *kind;
    DType dtype;
  } table[] = {
      {"f2", DType::Float16}, {"f4", DType::Float32}, {"f8", DType::Float64},
      {"i1", DType::Int8},    {"i2", DType::Int16},   {"i4", DType::Int32},
      {"i8", DType::Int64},   {"u1", DType::UInt8},   {"u2", DType::UInt16},
      {"u4", DType::UInt32},  {"u8", DType::UInt64},  {"b1", DType::Bool}};
  for (const auto &entry : table) {
    if (kind == entry.kind) {
      *out = entry.dtype;
      return "";
    }
  }
  return "unsupported dtype '" + descr + "'";
}

const char *dtypeToNpyDescr(DType dtype) {
  switch (dtype) {
  case DType::Float16:
    return "<f2";
  case DType::Float32:
    return "<f4";
  case DType::Float64:
    return "<f8";
  case DType::Int8:
    return "|i1";
  case DType::Int16:
    return "<i2";
  case DType::Int32:
    return "<i4";
  case DType::Int64:
    return "<i8";
  case DType::UInt8:
    return "|u1";
  case DType::UInt16:
    return "<u2";
  case DType::UInt32:
    return "<u4";
  case DType::UInt64:
    return "<u8";
  case DType::Bool:
    return "|b1";
  }
  return "|u1";
}

/// Finds `'key':` in the header dict and returns the position after ':'.
size_t findKey(const std::string &header, const std::string &key) {
  for (const char *quote : {"'", "\""}) {
    std::string pattern = quote + key + quote;
    size_t pos = header.find(pattern);
    if (pos == std::string::npos)
      continue;
    pos = header.find(':', pos + pattern.size());
    if (pos != std::string::npos)
      return pos + 1;
  }
  return std::string::npos;
}

size_t skipSpaces(const std::string &s, size_t pos) {
  while (pos < s.size() && (s[pos] == ' ' || s[pos] == '\t'))
    ++pos;
  return pos;
}

} // namespace

Status parseNpy(const void *data, size_t size, Tensor *out) {
  const char *bytes = static_cast<const char *>(data);
  if (size < 10 || std::memcmp(bytes, kNpyMagic, 6) != 0)
    return Status::invalidArgument("not a .npy file (bad magic)");
  uint8_t major = static_cast<uint8_t>(bytes[6]);
  size_t headerLen, headerStart;
  if (major == 1) {
    headerLen = static_cast<uint8_t>(bytes[8]) |
                (static_cast<size_t>(static_cast<uint8_t>(bytes[9])) << 8);
    headerStart = 10;
  } else if (major == 2 || major == 3) {
    if (size < 12)
      return Status::invalidArgument(".npy: truncated header");
    headerLen = 0;
    for (int i = 0; i < 4; ++i)
      headerLen |= static_cast<size_t>(static_cast<uint8_t>(bytes[8 + i]))
                   << (8 * i);
    headerStart = 12;
  } else {
    return Status::invalidArgument(".npy: unsupported format version " +
                                   std::to_string(major));
  }
  if (headerLen > size - headerStart)
    return Status::invalidArgument(".npy: truncated header");
  std::string header(bytes + headerStart, headerLen);

  // 'descr': '<f4'
  size_t pos = findKey(header, "descr");
  if (pos == std::string::npos)
    return Status::invalidArgument(".npy: header has no 'descr'");
  pos = skipSpaces(header, pos);
  if (pos >= header.size() || (header[pos] != '\'' && header[pos] != '"'))
    return Status::invalidArgument(".npy: structured dtypes are not supported");
  char quote = header[pos];
  size_t end = header.find(quote, pos + 1);
  if (end == std::string::npos)
    return Status::invalidArgument(".npy: malformed 'descr'");
  std::string descr = header.substr(pos + 1, end - pos - 1);
  DType dtype = DType::Float32;
  if (std::string err = npyDescrToDType(descr, &dtype); !err.empty())
    return Status::invalidArgument(".npy: " + err);

  // 'fortran_order': False
  pos = findKey(header, "fortran_order");
  if (pos == std::string::npos)
    return Status::invalidArgument(".npy: header has no 'fortran_order'");
  pos = skipSpaces(header, pos);
  if (header.compare(pos, 4, "True") == 0)
    return Status::invalidArgument(
        ".npy: Fortran-order arrays are not supported; save a C-order array "
        "(numpy.ascontiguousarray)");
  if (header.compare(pos, 5, "False") != 0)
    return Status::invalidArgument(".npy: malformed 'fortran_order'");

  // 'shape': (3, 4,)
  pos = findKey(header, "shape");
  if (pos == std::string::npos)
    return Status::invalidArgument(".npy: header has no 'shape'");
  pos = skipSpaces(header, pos);
  if (pos >= header.size() || header[pos] != '(')
    return Status::invalidArgument(".npy: malformed 'shape'");
  end = header.find(')', pos);
  if (end == std::string::npos)
    return Status::invalidArgument(".npy: malformed 'shape'");
  std::vector<int64_t> shape;
  std::string dims = header.substr(pos + 1, end - pos - 1);
  size_t i = 0;
  while (i < dims.size()) {
    i = skipSpaces(dims, i);
    if (i >= dims.size())
      break;
    if (dims[i] < '0' || dims[i] > '9')
      return Status::invalidArgument(".npy: malformed 'shape'");
    int64_t v = 0;
    while (i < dims.size() && dims[i] >= '0' && dims[i] <= '9') {
      if (v > (std::numeric_limits<int64_t>::max() - 9) / 10)
        return Status::invalidArgument(".npy: dim too large");
      v = v * 10 + (dims[i++] - '0');
    }
    // Python 2 style "3L".
    if (i < dims.size() && dims[i] == 'L')
      ++i;
    shape.push_back(v);
    i = skipSpaces(dims, i);
    if (i < dims.size()) {
      if (dims[i] != ',')
        return Status::invalidArgument(".npy: malformed 'shape'");
      ++i;
    }
  }
  int64_t n = numElementsOf(shape);
  if (n < 0 || n > std::numeric_limits<int64_t>::max() / 8)
    return Status::invalidArgument(".npy: shape too large");
  size_t dataStart = headerStart + headerLen;
  uint64_t need = static_cast<uint64_t>(n) * dtypeSize(dtype);
  if (need > size - dataStart)
    return Status::invalidArgument(".npy: truncated data: shape " +
                                   shapeToString(shape) + " needs " +
                                   std::to_string(need) + " bytes, file has " +
                                   std::to_string(size - dataStart));
  Tensor t = Tensor::fromData(dtype, shape, bytes + dataStart);
  if (!t.isValid())
    return Status::resourceExhausted(".npy: cannot allocate " +
                                     std::to_string(need) + " bytes");
  *out = std::move(t);
  return Status::ok();
}

Status readNpy(const std::string &path, Tensor *out) {
  std::string contents;
  if (Status s = readFile(path, &contents); !s)
    return s;
  if (Status s = parseNpy(contents.data(), contents.size(), out); !s)
    return Status(s.code(), "'" + path + "': " + s.message());
  return Status::ok();
}

std::string encodeNpy(const Tensor &t) {
  std::string dict = "{'descr': '";
  dict += dtypeToNpyDescr(t.dtype());
  dict += "', 'fortran_order': False, 'shape': (";
  for (int64_t i = 0; i < t.rank(); ++i)
    dict += (i ? ", " : "") + std::to_string(t.shape()[i]);
  dict += t.rank() == 1 ? ",)" : ")"; // "()", "(3,)", "(3, 4)".
  dict += ", }";
  // Pad with spaces and a newline so that data starts 64-byte aligned.
  bool v2 = dict.size() + 11 > 65535;
  size_t prefix = v2 ? 12 : 10;
  size_t total = prefix + dict.size() + 1;
  size_t padded = (total + 63) / 64 * 64;
  dict.append(padded - total, ' ');
  dict += '\n';
  std::string out(kNpyMagic, 6);
  out += static_cast<char>(v2 ? 2 : 1);
  out += static_cast<char>(0);
  size_t len = dict.size();
  for (size_t i = 0; i < (v2 ? 4u : 2u); ++i)
    out += static_cast<char>((len >> (8 * i)) & 0xff);
  out += dict;
  if (t.byteSize() > 0 && t.data())
    out.append(static_cast<const char *>(t.data()),
               static_cast<size_t>(t.byteSize()));
  return out;
}

Status writeNpy(const std::string &path, const Tensor &t) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f)
    return Status::invalidArgument("cannot open '" + path + "' for writing");
  std::string bytes = encodeNpy(t);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  f.close();
  if (!f)
    return Status::invalidArgument("cannot write '" + path + "'");
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
  if (contents.size() >= 6 && std::memcmp(contents.data(), kNpyMagic, 6) == 0)
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

} // namespace disc::io
