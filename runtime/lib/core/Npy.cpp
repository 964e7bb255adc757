//===- Npy.cpp - NumPy .npy images of Tensors -----------------------------===//
//
// See disc/runtime/Npy.h. Shared by the session's saved state and by
// disc-run (runtime/tools/disc-run/TensorIO.h).
//
//===----------------------------------------------------------------------===//

#include "disc/runtime/Npy.h"

#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>

namespace disc {

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
  case DType::BFloat16: // NumPy has no bfloat16: the bits, as uint16.
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
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return Status::invalidArgument("cannot open '" + path + "'");
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad())
    return Status::invalidArgument("cannot read '" + path + "'");
  contents = ss.str();
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

std::string npyFileName(std::string_view name) {
  std::string file;
  file.reserve(name.size() + 4);
  for (char c : name) {
    bool keep = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
                (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-';
    file += keep ? c : '_';
  }
  return file + ".npy";
}

} // namespace disc
