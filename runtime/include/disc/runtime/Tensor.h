//===- Tensor.h - Dense host tensors ----------------------------*- C++ -*-===//
//
// The tensors a Session takes and returns: dense, contiguous, row-major
// host buffers, reference counted, aligned to 64 bytes when the Tensor
// allocates them.
//
// Part of the C++ API; "disc/runtime/Runtime.h" includes every part.
//
//===----------------------------------------------------------------------===//
#ifndef DISC_RUNTIME_TENSOR_H
#define DISC_RUNTIME_TENSOR_H

#include "disc/runtime/DType.h"

#include <cstdint>
#include <memory>
#include <type_traits>
#include <vector>

namespace disc {

/// A dense, contiguous, row-major tensor on the host. The buffer is
/// reference counted: copying a Tensor is cheap and the copies share the
/// buffer (use `clone()` for a deep copy). Buffers are aligned to 64 bytes
/// when the Tensor allocates them.
/// Thread-safety: distinct Tensor objects may be used from different threads;
/// concurrent writes to a shared buffer must be synchronized by the caller.
class Tensor {
public:
  /// An empty tensor (float32, rank 0, no buffer); `isValid()` is false.
  Tensor() = default;

  /// A zero-filled tensor. Returns an empty tensor if the shape has a
  /// negative dim or the allocation fails.
  static Tensor zeros(DType dtype, std::vector<int64_t> shape);
  /// Copies numElements*dtypeSize bytes from `data` (row-major).
  static Tensor fromData(DType dtype, std::vector<int64_t> shape,
                         const void *data);
  /// Typed convenience: `Tensor::fromVector<float>({2, 2}, {1, 2, 3, 4})`.
  /// `values.size()` must equal the number of elements.
  template <typename T>
  static Tensor fromVector(std::vector<int64_t> shape,
                           const std::vector<T> &values);
  /// Wraps external memory: `data` stays valid until `owner` is released
  /// (the last copy of the Tensor is destroyed). `owner` may be null for
  /// memory the caller keeps alive for the Tensor's lifetime.
  static Tensor adopt(DType dtype, std::vector<int64_t> shape, void *data,
                      std::shared_ptr<void> owner);

  bool isValid() const { return valid_; }
  DType dtype() const { return dtype_; }
  const std::vector<int64_t> &shape() const { return shape_; }
  int64_t rank() const { return static_cast<int64_t>(shape_.size()); }
  int64_t numElements() const { return numElementsOf(shape_); }
  /// numElements() * dtypeSize(dtype()), in bytes.
  int64_t byteSize() const { return numElements() * dtypeSize(dtype_); }
  void *data() { return data_; }
  const void *data() const { return data_; }
  template <typename T>
  T *data() {
    return static_cast<T *>(data_);
  }
  template <typename T>
  const T *data() const {
    return static_cast<const T *>(data_);
  }
  /// Element `i` (flat row-major index) converted to double; for summaries.
  double elementAsDouble(int64_t i) const;
  /// Deep copy into a freshly allocated buffer.
  Tensor clone() const;

private:
  bool valid_ = false;
  DType dtype_ = DType::Float32;
  std::vector<int64_t> shape_;
  void *data_ = nullptr;
  std::shared_ptr<void> owner_;
};

/// The position of `T` among `First, Rest...` (their number when it is
/// none of them).
template <typename T, typename First, typename... Rest>
constexpr int32_t typeIndex() {
  if constexpr (std::is_same_v<T, First>)
    return 0;
  else if constexpr (sizeof...(Rest) == 0)
    return 1;
  else
    return 1 + typeIndex<T, Rest...>();
}

template <typename T>
Tensor Tensor::fromVector(std::vector<int64_t> shape,
                          const std::vector<T> &values) {
  // The element types in the order of DType's numeric values; Float16 has
  // no C++ type (void holds its place).
  constexpr int32_t index =
      typeIndex<T, void, float, double, int8_t, int16_t, int32_t, int64_t,
                uint8_t, uint16_t, uint32_t, uint64_t, bool>();
  static_assert(index < 12, "unsupported element type");
  const DType dt = static_cast<DType>(index);
  if (numElementsOf(shape) != static_cast<int64_t>(values.size()))
    return Tensor();
  if constexpr (std::is_same_v<T, bool>) {
    std::vector<uint8_t> bytes(values.begin(), values.end());
    return fromData(dt, std::move(shape), bytes.data());
  } else {
    return fromData(dt, std::move(shape), values.data());
  }
}

} // namespace disc

#endif // DISC_RUNTIME_TENSOR_H
