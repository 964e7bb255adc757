//===- Prediction.h - Peak-memory prediction at bound dims ------*- C++ -*-===//
//
// The evaluation behind Executable::predictPeakBytes, with the library-call
// module passed in, so a session predicts with its own module: the
// primitives it creates for the temporaries are the ones its runs then
// use. Internal to the runtime library (hidden).
//
//===----------------------------------------------------------------------===//
#ifndef DISC_RUNTIME_CORE_PREDICTION_H
#define DISC_RUNTIME_CORE_PREDICTION_H

#include "disc/runtime/Signature.h"
#include "disc/runtime/Status.h"

#include "RematPlanner.h"

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>

#pragma GCC visibility push(hidden)
namespace disc::runtime {
namespace cpu {
class LibraryCalls;
} // namespace cpu

/// The predicted peak bytes (docs/memory.md) of a run of a model with
/// signature `sig` at the dims `dims` (Signature::bindDims of the input
/// shapes): the max of `sig.memory.peakBytes`, and of the live bytes at
/// each library call plus its temporaries as `library()` reports them
/// (its primitives are created and cached, not run; `library` is called
/// only when the model has library calls). `*bytes` is -1 when
/// the signature has no predictable memory model or one of its expressions
/// cannot be evaluated at `dims`; `*unpredictableReason` (when not null)
/// then says why. A prediction that cannot be made never fails: the run
/// goes on without one. Errors: InvalidArgument when a library call
/// rejects its operands, Internal when oneDNN fails.
Status predictPeakAt(const Signature &sig,
                     const std::map<std::string, int64_t> &dims,
                     const std::function<cpu::LibraryCalls &()> &library,
                     int64_t *bytes, std::string *unpredictableReason);

/// The live bytes while library call `call` runs at `dims`: its `at` plus
/// the temporaries `library()` reports for its operands (primitives
/// created, not run). `*peak` is unset when an expression cannot be
/// evaluated at `dims`. Errors: InvalidArgument when the call rejects its
/// operands, Internal (naming `where`) when oneDNN fails.
Status libraryCallPeak(const LibraryCallSpec &call,
                       const std::map<std::string, int64_t> &dims,
                       const std::function<cpu::LibraryCalls &()> &library,
                       const std::string &where, std::optional<int64_t> *peak);

/// The remat profile of the run at `dims` (evaluateRematProfile of
/// `sig.remat`), with the library-call temporaries added: a point per call
/// of the run (at its op) and, per candidate, the recompute peak at each
/// call of its recompute. Errors: Internal when an expression cannot be
/// evaluated, and those of libraryCallPeak.
Status rematProfileAt(const Signature &sig,
                      const std::map<std::string, int64_t> &dims,
                      const std::function<cpu::LibraryCalls &()> &library,
                      RematProfile *profile);

} // namespace disc::runtime
#pragma GCC visibility pop

#endif // DISC_RUNTIME_CORE_PREDICTION_H
