//===- FuzzInput.h - fuzz bytes to runtime inputs (shapes, dtypes, values) ===//
//
// Shared by the input-binding and compiled-model fuzz targets. A ByteReader
// consumes the fuzz input front to back and returns zeros once it runs out,
// so every input decodes to something. makeInputs() turns bytes into one
// tensor per signature input: usually what the signature asks for (dtype,
// rank, static dims, one size per named dim within its range), sometimes a
// deliberate mismatch, so that both the accept and the reject paths run.
//
//===----------------------------------------------------------------------===//
#ifndef DISC_TEST_FUZZ_FUZZINPUT_H
#define DISC_TEST_FUZZ_FUZZINPUT_H

#include "disc/runtime/Runtime.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <vector>

namespace disc::fuzz {

class ByteReader {
public:
  ByteReader(const uint8_t *data, size_t size) : data_(data), size_(size) {}
  uint8_t byte() { return pos_ < size_ ? data_[pos_++] : 0; }
  /// A value in [0, n) (n >= 1).
  uint32_t below(uint32_t n) {
    uint32_t v = byte();
    if (n > 256)
      v = (v << 8) | byte();
    return v % n;
  }
  bool flip(uint32_t oneIn) { return below(oneIn) == 0; }
  /// Copies up to `n` bytes into `out`; the rest is zero.
  void fill(void *out, size_t n) {
    size_t k = std::min(n, size_ - pos_);
    std::memcpy(out, data_ + pos_, k);
    std::memset(static_cast<char *>(out) + k, 0, n - k);
    pos_ += k;
  }
  std::string rest() {
    std::string s(reinterpret_cast<const char *>(data_ + pos_), size_ - pos_);
    pos_ = size_;
    return s;
  }

private:
  const uint8_t *data_;
  size_t size_;
  size_t pos_ = 0;
};

/// Largest number of elements a generated tensor gets (keeps runs fast).
constexpr int64_t kMaxElements = 1 << 14;

/// A size for a named dim: within [min, max] (max capped at `cap`) unless
/// the reader asks for an out-of-range value.
inline int64_t pickDim(ByteReader &r, const SymbolSpec *sym, int64_t cap) {
  int64_t lo = sym ? sym->min : 0;
  int64_t hi = sym && sym->max ? std::min(*sym->max, cap) : cap;
  if (r.flip(16))
    return static_cast<int64_t>(r.below(cap + 2)); // May be out of range.
  if (hi < lo)
    return lo;
  return lo + static_cast<int64_t>(r.below(static_cast<uint32_t>(hi - lo + 1)));
}

/// One tensor per input of `sig`, decoded from `r` (see the file comment).
/// Values are raw bytes from the reader, so floats include NaN/Inf and
/// integers any bit pattern; `smallInts` maps integer inputs to [-4, 8)
/// instead (indices, shapes and axes that mostly stay in range).
inline std::vector<Tensor> makeInputs(ByteReader &r, const Signature &sig,
                                      int64_t dimCap, bool smallInts) {
  std::map<std::string, int64_t> bound;
  std::vector<Tensor> inputs;
  for (const TensorSpec &spec : sig.inputs) {
    DType dtype = spec.dtype;
    if (r.flip(32))
      dtype = static_cast<DType>(r.below(12));
    std::vector<int64_t> shape;
    int64_t rank = spec.rank();
    if (r.flip(32))
      rank = r.below(5);
    for (int64_t d = 0; d < rank; ++d) {
      if (d >= spec.rank()) {
        shape.push_back(r.below(4));
        continue;
      }
      const DimSpec &dim = spec.shape[d];
      if (dim.isStatic()) {
        shape.push_back(r.flip(32) ? r.below(8) : dim.size);
        continue;
      }
      auto it = bound.find(dim.symbol);
      if (it != bound.end() && !r.flip(32)) {
        shape.push_back(it->second);
        continue;
      }
      int64_t v = pickDim(r, sig.findSymbol(dim.symbol), dimCap);
      bound.emplace(dim.symbol, v);
      shape.push_back(v);
    }
    int64_t n = numElementsOf(shape);
    if (n < 0 || n > kMaxElements)
      shape.assign(shape.size(), 1);
    Tensor t = Tensor::zeros(dtype, shape);
    if (!t.isValid())
      continue;
    if (smallInts && !isFloatingPoint(dtype) && dtype != DType::Bool) {
      for (int64_t i = 0; i < t.numElements(); ++i) {
        int64_t v = static_cast<int64_t>(r.below(12)) - 4;
        std::vector<char> bytes(dtypeSize(dtype));
        std::memcpy(bytes.data(), &v, bytes.size()); // Little-endian.
        std::memcpy(t.data<char>() + i * bytes.size(), bytes.data(),
                    bytes.size());
      }
    } else {
      r.fill(t.data(), static_cast<size_t>(t.byteSize()));
      if (dtype == DType::Bool)
        for (int64_t i = 0; i < t.numElements(); ++i)
          t.data<uint8_t>()[i] &= 1;
    }
    inputs.push_back(std::move(t));
  }
  // Now and then a missing or an extra input.
  if (r.flip(64) && !inputs.empty())
    inputs.pop_back();
  else if (r.flip(64))
    inputs.push_back(Tensor::zeros(DType::Float32, {1}));
  return inputs;
}

} // namespace disc::fuzz

#endif // DISC_TEST_FUZZ_FUZZINPUT_H
