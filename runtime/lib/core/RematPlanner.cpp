//===- RematPlanner.cpp - run-time rematerialization decisions ------------===//

#include "RematPlanner.h"

#include <algorithm>

namespace disc::runtime {

bool evaluateRematProfile(const RematSpec &spec,
                          const std::map<std::string, int64_t> &dims,
                          RematProfile *out, std::string *error) {
  auto eval = [&](const SizeExpr &e, const std::string &what, int64_t *v) {
    std::optional<int64_t> x = e.evaluate(dims);
    if (!x) {
      *error = what + " cannot be evaluated at these shapes";
      return false;
    }
    *v = *x;
    return true;
  };
  RematProfile p;
  for (size_t i = 0; i < spec.liveBefore.size(); ++i) {
    int64_t v;
    if (!eval(spec.liveBefore[i], "live_before[" + std::to_string(i) + "]", &v))
      return false;
    p.liveBefore.push_back(v);
    p.points.emplace_back();
    for (const SizeExpr &e : spec.points[i]) {
      if (!eval(e, "points[" + std::to_string(i) + "]", &v))
        return false;
      p.points.back().push_back(v);
    }
  }
  for (const SizeExpr &e : spec.exitPoints) {
    int64_t v;
    if (!eval(e, "exit_points", &v))
      return false;
    p.exitPoints.push_back(v);
  }
  for (size_t k = 0; k < spec.candidates.size(); ++k) {
    const RematCandidateSpec &c = spec.candidates[k];
    RematProfile::Candidate cand;
    std::string who = "candidate " + std::to_string(k);
    int64_t flops = 0;
    if (!eval(c.bytes, who + " bytes", &cand.bytes) ||
        !eval(c.recomputePeakBytes, who + " recompute_peak_bytes",
              &cand.recomputePeak) ||
        !eval(c.flops, who + " flops", &flops))
      return false;
    cand.flops = static_cast<double>(flops);
    if (!c.recomputePoints.empty()) {
      // The exact recompute peak: the largest of its points.
      cand.recomputePeak = 0;
      for (size_t j = 0; j < c.recomputePoints.size(); ++j) {
        int64_t v;
        if (!eval(c.recomputePoints[j],
                  who + " recompute_points[" + std::to_string(j) + "]", &v))
          return false;
        cand.recomputePeak = std::max(cand.recomputePeak, v);
      }
    }
    cand.evictAfter = c.evictAfter;
    cand.regenerateBefore = c.regenerateBefore;
    cand.regenerateOrder = c.regenerateOrder;
    p.candidates.push_back(cand);
  }
  *out = std::move(p);
  return true;
}

RematPlanner::RematPlanner(RematProfile profile, int64_t limitBytes,
                           RematPolicyKind policy)
    : profile_(std::move(profile)), limit_(limitBytes), policy_(policy),
      evicted_(profile_.candidates.size(), 0) {
  lowest_ = lowestSet();
  witness_ = lowest_;
}

void RematPlanner::reset() {
  evicted_.assign(profile_.candidates.size(), 0);
  witness_ = lowest_;
  next_ = 0;
  drift_ = 0;
}

int64_t RematPlanner::peak(const std::vector<char> &evicted) const {
  const auto &cands = profile_.candidates;
  int64_t n = static_cast<int64_t>(profile_.points.size());
  // Bytes evicted while op i runs: a difference array over the gaps.
  std::vector<int64_t> delta(n + 1, 0);
  for (size_t c = 0; c < cands.size(); ++c) {
    if (!evicted[c])
      continue;
    int64_t from = std::max<int64_t>(cands[c].evictAfter + 1, 0);
    int64_t to = std::min<int64_t>(cands[c].regenerateBefore, n);
    if (from < to) {
      delta[from] += cands[c].bytes;
      delta[to] -= cands[c].bytes;
    }
  }
  int64_t best = 0, away = 0;
  for (int64_t i = 0; i < n; ++i) {
    away += delta[i];
    for (int64_t p : profile_.points[i])
      best = std::max(best, p - away);
  }
  for (int64_t p : profile_.exitPoints)
    best = std::max(best, p);
  // Regenerate points: the buffer is back, the recompute runs on top; the
  // candidates regenerated later at the same op are still away.
  auto order = [&](size_t k) {
    return cands[k].regenerateOrder >= 0 ? cands[k].regenerateOrder
                                         : static_cast<int64_t>(k);
  };
  for (size_t c = 0; c < cands.size(); ++c) {
    if (!evicted[c])
      continue;
    int64_t r = cands[c].regenerateBefore;
    if (r < 0 || r >= n)
      continue;
    int64_t live = profile_.liveBefore[r] + cands[c].recomputePeak;
    for (size_t o = 0; o < cands.size(); ++o) {
      if (o == c || !evicted[o])
        continue;
      bool away = (cands[o].evictAfter < r && r < cands[o].regenerateBefore) ||
                  (cands[o].regenerateBefore == r && order(o) > order(c));
      if (away)
        live -= cands[o].bytes;
    }
    best = std::max(best, live);
  }
  return best;
}

int64_t RematPlanner::unconstrainedPeak() const {
  return peak(std::vector<char>(profile_.candidates.size(), 0));
}

std::vector<char> RematPlanner::lowestSet() const {
  size_t n = profile_.candidates.size();
  std::vector<char> none(n, 0), all(n, 1);
  // Greedy descent from nothing evicted: add the candidate that lowers the
  // peak most, while one does (evicting everything can be worse: the
  // recompute of a candidate regenerated near the peak adds its
  // intermediates there).
  std::vector<char> greedy = none;
  int64_t current = peak(greedy);
  for (;;) {
    int best = -1;
    int64_t bestPeak = current;
    for (size_t k = 0; k < n; ++k) {
      if (greedy[k])
        continue;
      greedy[k] = 1;
      int64_t p = peak(greedy);
      greedy[k] = 0;
      if (p < bestPeak)
        best = static_cast<int>(k), bestPeak = p;
    }
    if (best < 0)
      break;
    greedy[best] = 1;
    current = bestPeak;
  }
  std::vector<char> result = peak(all) < current ? all : greedy;
  return peak(result) < peak(none) ? result : none;
}

int64_t RematPlanner::minimumPeak() const { return peak(witness_); }

double RematPlanner::score(int id) const {
  const RematProfile::Candidate &c = profile_.candidates[id];
  if (policy_ == RematPolicyKind::LargestFirst)
    return static_cast<double>(c.bytes);
  double staleness = static_cast<double>(
      std::max<int64_t>(1, c.regenerateBefore - c.evictAfter));
  return static_cast<double>(c.bytes) * staleness / std::max(c.flops, 1.0);
}

bool RematPlanner::decideEvict(int id, int64_t liveBytes) {
  int n = static_cast<int>(profile_.candidates.size());
  if (id < 0 || id >= n)
    return false;
  // Decisions come in id order; a skipped id stays kept.
  next_ = std::max(next_, id + 1);
  if (limit_ <= 0)
    return false;
  const auto &cands = profile_.candidates;
  int64_t after = cands[id].evictAfter + 1;
  if (liveBytes >= 0 &&
      after < static_cast<int64_t>(profile_.liveBefore.size())) {
    // Predicted live bytes at this call: before the next op, with the
    // candidates evicted so far away (this one still held).
    int64_t predicted = profile_.liveBefore[after];
    for (int k = 0; k < id; ++k)
      if (evicted_[k] && cands[k].evictAfter < after &&
          after < cands[k].regenerateBefore)
        predicted -= cands[k].bytes;
    drift_ = std::max(drift_, liveBytes - predicted);
  }
  int64_t limit = limit_ - drift_;
  std::vector<char> trial = evicted_;
  trial[id] = 0;
  for (int k = id + 1; k < n; ++k)
    trial[k] = 0;
  int64_t current = peak(trial);
  bool want = false;
  if (current > limit) {
    // Plan by the policy's score: repeatedly evict the best-scoring
    // candidate (this one or a later one) that lowers the projected peak,
    // until it fits. This one goes if the plan takes it.
    while (current > limit) {
      int pick = -1;
      int64_t pickPeak = current;
      for (int k = id; k < n; ++k) {
        if (trial[k])
          continue;
        trial[k] = 1;
        int64_t p = peak(trial);
        trial[k] = 0;
        if (p < current && (pick < 0 || score(k) > score(pick)))
          pick = k, pickPeak = p;
      }
      if (pick < 0)
        break;
      trial[pick] = 1;
      current = pickPeak;
      if (pick == id) {
        want = true;
        break;
      }
    }
  }
  // The decision must leave a completion that fits: the witness (a set
  // that fits, consistent with the decisions so far) with this decision,
  // or this decision with every later candidate evicted, or with none.
  // Otherwise follow the witness. Starting from the lowest set, every run
  // whose limit is at least minimumPeak() stays within it.
  std::vector<std::vector<char>> completions(3, evicted_);
  for (int k = id + 1; k < n; ++k) {
    completions[0][k] = witness_[k];
    completions[1][k] = 1;
    completions[2][k] = 0;
  }
  for (std::vector<char> &c : completions) {
    c[id] = want;
    if (peak(c) <= limit) {
      witness_ = c;
      evicted_[id] = want;
      return want;
    }
  }
  evicted_[id] = witness_[id];
  return witness_[id];
}

} // namespace disc::runtime
