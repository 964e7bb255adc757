//===- RunErrors.h - What went wrong during a session's run -----*- C++ -*-===//
//
// The first error reported during a run, through `disc_ral_context.error`
// by the model (a run-time contract check) or by the runtime's own
// context entries (a library call, a device call, a rematerialization
// step): its status (1..4 of docs/runtime-abi.md; any other value counts
// as 4) and message. The first report wins: it names the check that
// stopped the run. Guarded by the session allocator's mutex, which the
// rematerialization steps hold while they decide.
//
// Internal to libdisc_runtime (hidden).
//
//===----------------------------------------------------------------------===//
#ifndef DISC_RUNTIME_LIB_CORE_RUNERRORS_H
#define DISC_RUNTIME_LIB_CORE_RUNERRORS_H

#include <cstdint>
#include <mutex>
#include <string>

#pragma GCC visibility push(hidden)
namespace disc::runtime {

class RunErrors {
public:
  explicit RunErrors(std::mutex &mutex) : mutex_(mutex) {}

  /// Forgets the errors of the last run.
  void reset() {
    status_ = 0;
    message_.clear();
  }
  /// Records `status` (> 0, else 4) and `message` (null: "model reported
  /// an error") unless an error was reported before.
  void report(int32_t status, const char *message) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (status_ != 0)
      return;
    status_ = status > 0 ? status : 4;
    message_ = message ? message : "model reported an error";
  }
  /// With the mutex held: status 4 unless an error was reported before,
  /// and `message` in any case (a failed offload names itself).
  void replaceLocked(std::string message) {
    status_ = status_ ? status_ : 4;
    message_ = std::move(message);
  }

  /// 0 when none was reported.
  int32_t status() const { return status_; }
  const std::string &message() const { return message_; }

private:
  std::mutex &mutex_;
  int32_t status_ = 0;
  std::string message_;
};

} // namespace disc::runtime
#pragma GCC visibility pop

#endif // DISC_RUNTIME_LIB_CORE_RUNERRORS_H
