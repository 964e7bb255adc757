//===- Status.h - Status codes and Status -----------------------*- C++ -*-===//
//
// Every fallible call of the C++ API returns a `disc::Status`: a code (the
// numbers of the C API and of `disc_model_run`, docs/runtime-abi.md) and a
// message. No exception escapes the API.
//
// Part of the C++ API; "disc/runtime/Runtime.h" includes every part.
//
//===----------------------------------------------------------------------===//
#ifndef DISC_RUNTIME_STATUS_H
#define DISC_RUNTIME_STATUS_H

#include <cstdint>
#include <string>
#include <utility>

namespace disc {

/// Status codes; the numeric values are those of the C API and of
/// `disc_model_run` (docs/runtime-abi.md).
enum class StatusCode : int32_t {
  Ok = 0,
  InvalidArgument = 1,   ///< Bad input: count, rank, dtype, dim, range.
  ResourceExhausted = 2, ///< Out of memory or over the session memory limit.
  LoadFailed = 3,        ///< dlopen, missing symbol, ABI version, signature.
  Internal = 4,          ///< Model error or runtime bug.
};

/// Returns "ok", "invalid argument", ... for `code`.
const char *statusCodeName(StatusCode code);

/// A status code plus a human-readable message (empty when ok). Cheap to
/// copy. Thread-safety: a value type, no shared state.
class Status {
public:
  Status() = default;
  Status(StatusCode code, std::string message)
      : code_(code), message_(std::move(message)) {}
  static Status ok() { return Status(); }
  static Status invalidArgument(std::string msg) {
    return Status(StatusCode::InvalidArgument, std::move(msg));
  }
  static Status resourceExhausted(std::string msg) {
    return Status(StatusCode::ResourceExhausted, std::move(msg));
  }
  static Status loadFailed(std::string msg) {
    return Status(StatusCode::LoadFailed, std::move(msg));
  }
  static Status internal(std::string msg) {
    return Status(StatusCode::Internal, std::move(msg));
  }

  bool isOk() const { return code_ == StatusCode::Ok; }
  explicit operator bool() const { return isOk(); }
  StatusCode code() const { return code_; }
  const std::string &message() const { return message_; }
  /// "ok" or "<code name>: <message>".
  std::string toString() const;

private:
  StatusCode code_ = StatusCode::Ok;
  std::string message_;
};

} // namespace disc

#endif // DISC_RUNTIME_STATUS_H
