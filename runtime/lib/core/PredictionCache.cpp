//===- PredictionCache.cpp - Memory predictions by input shapes -----------===//

#include "PredictionCache.h"

#include "Prediction.h"

#include <algorithm>
#include <map>
#include <string>

namespace disc::runtime {

PredictionCache::PredictionCache(const Signature &signature,
                                 const SessionOptions &options,
                                 std::function<cpu::LibraryCalls &()> library)
    : signature_(signature), options_(options), library_(std::move(library)) {}

Status PredictionCache::lookup(const std::vector<Tensor> &inputs,
                               Prediction **out) {
  auto same = [&](const Prediction &p) {
    for (size_t i = 0; i < inputs.size(); ++i)
      if (p.shapes[i] != inputs[i].shape())
        return false;
    return true;
  };
  for (size_t i = 0; i < predictions_.size(); ++i) {
    if (!same(*predictions_[i]))
      continue;
    std::rotate(predictions_.begin(), predictions_.begin() + i,
                predictions_.begin() + i + 1);
    *out = predictions_.front().get();
    return Status::ok();
  }
  const Signature &sig = signature_;
  auto p = std::make_unique<Prediction>();
  for (const Tensor &t : inputs)
    p->shapes.push_back(t.shape());
  std::map<std::string, int64_t> dims;
  if (Status s = sig.bindDims(p->shapes, &dims); !s)
    return s;
  if (Status s = predictPeakAt(sig, dims, library_, &p->predicted,
                               &p->unpredictableReason);
      !s)
    return s;
  if (sig.remat.present && p->predicted >= 0) {
    RematProfile profile;
    if (Status s = rematProfileAt(sig, dims, library_, &profile); !s)
      return s;
    p->planner = std::make_unique<RematPlanner>(
        std::move(profile), options_.memory_limit_bytes,
        options_.remat_policy == RematPolicy::LargestFirst
            ? RematPolicyKind::LargestFirst
            : RematPolicyKind::DtrScore);
  }
  if (predictions_.size() >= kMaxPredictions)
    predictions_.pop_back();
  predictions_.insert(predictions_.begin(), std::move(p));
  *out = predictions_.front().get();
  return Status::ok();
}

} // namespace disc::runtime
