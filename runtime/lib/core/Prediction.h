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

#include <cstdint>
#include <functional>
#include <map>
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
/// the signature has no predictable memory model. Errors: InvalidArgument
/// when a library call rejects its operands, Internal when an expression
/// cannot be evaluated or oneDNN fails.
Status predictPeakAt(const Signature &sig,
                     const std::map<std::string, int64_t> &dims,
                     const std::function<cpu::LibraryCalls &()> &library,
                     int64_t *bytes);

} // namespace disc::runtime
#pragma GCC visibility pop

#endif // DISC_RUNTIME_CORE_PREDICTION_H
