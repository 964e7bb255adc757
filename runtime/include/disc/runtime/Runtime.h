//===- Runtime.h - DISC runtime C++ API: tensors, executables, sessions ---===//
//
// Loads a compiled `model.so` (see docs/runtime-abi.md), validates inputs
// against its signature and runs it with a tracked, optionally limited,
// allocator. No exception escapes this API: every fallible call returns a
// `disc::Status`. See docs/runtime-api.md for a guided tour.
//
// The umbrella header of the C++ API, which has one header per type:
//
//   Status.h      StatusCode, Status
//   DType.h       DType, element sizes and names, shape helpers
//   Tensor.h      Tensor
//   Signature.h   Signature and its specs (inputs, memory model, remat)
//   Executable.h  Executable (loading, memory predictions)
//   Session.h     SessionOptions, SessionStats, Session (and its training
//                 state)
//   Npy.h         NumPy .npy reading and writing
//
//===----------------------------------------------------------------------===//
#ifndef DISC_RUNTIME_RUNTIME_H
#define DISC_RUNTIME_RUNTIME_H

#include "disc/runtime/DType.h"
#include "disc/runtime/Executable.h"
#include "disc/runtime/Npy.h"
#include "disc/runtime/Session.h"
#include "disc/runtime/Signature.h"
#include "disc/runtime/Status.h"
#include "disc/runtime/Tensor.h"
#include "disc/runtime/Trace.h"

// What this header included when it declared the whole API itself, so that
// code relying on it keeps compiling.
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#endif // DISC_RUNTIME_RUNTIME_H
