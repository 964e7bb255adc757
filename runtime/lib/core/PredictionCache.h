//===- PredictionCache.h - A session's memory predictions by shapes -*- C++
//-*-===//
//
// The memory prediction of a session at one set of input shapes
// (docs/memory.md): the peak with nothing evicted, the lowest peak
// reachable by rematerialization, and the planner of the runs at those
// shapes (reset before each; null without candidates). Kept per shapes, most
// recently used first and at most kMaxPredictions of them, so a run at
// shapes seen before evaluates no expression and creates no primitive for
// its prediction.
//
// Thread safety: as the session, one thread at a time.
//
// Internal to libdisc_runtime (hidden).
//
//===----------------------------------------------------------------------===//
#ifndef DISC_RUNTIME_LIB_CORE_PREDICTIONCACHE_H
#define DISC_RUNTIME_LIB_CORE_PREDICTIONCACHE_H

#include "disc/runtime/Session.h"
#include "disc/runtime/Signature.h"
#include "disc/runtime/Tensor.h"

#include "RematPlanner.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#pragma GCC visibility push(hidden)
namespace disc::runtime {

namespace cpu {
class LibraryCalls;
} // namespace cpu

class PredictionCache {
public:
  struct Prediction {
    std::vector<std::vector<int64_t>> shapes;
    /// Peak bytes with nothing evicted; -1 when not predictable.
    int64_t predicted = -1;
    /// Why `predicted` is -1; empty otherwise.
    std::string unpredictableReason;
    std::unique_ptr<RematPlanner> planner;
    /// The lowest peak reachable by evicting candidates; -1 as above.
    /// Searched on first call (RematPlanner::lowestSet), then kept.
    int64_t minimum() {
      if (!minimumKnown) {
        minimumValue = predicted;
        if (planner && predicted >= 0)
          minimumValue = std::min(predicted, planner->minimumPeak());
        minimumKnown = true;
      }
      return minimumValue;
    }

  private:
    int64_t minimumValue = -1;
    bool minimumKnown = false;
  };
  static constexpr size_t kMaxPredictions = 32;

  /// Predictions for the model of `signature`, planned for `options`
  /// (memory limit, remat policy), library-call temporaries from
  /// `library()`: the session's module, so the primitives made here serve
  /// its runs. `signature` and `options` must outlive the cache.
  PredictionCache(const Signature &signature, const SessionOptions &options,
                  std::function<cpu::LibraryCalls &()> library);

  /// The prediction at the shapes of `inputs` (validated), computed on the
  /// first run at these shapes. Errors as Executable::predictPeakBytes;
  /// Internal, "remat: ...", when the remat profile cannot be evaluated.
  Status lookup(const std::vector<Tensor> &inputs, Prediction **out);

private:
  const Signature &signature_;
  const SessionOptions &options_;
  std::function<cpu::LibraryCalls &()> library_;
  /// Most recently used first.
  std::vector<std::unique_ptr<Prediction>> predictions_;
};

} // namespace disc::runtime
#pragma GCC visibility pop

#endif // DISC_RUNTIME_LIB_CORE_PREDICTIONCACHE_H
