//===- RematPlanner.cpp - run-time rematerialization decisions ------------===//

#include "RematPlanner.h"

#include <algorithm>
#include <functional>
#include <limits>

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
    for (int64_t r : c.reads)
      if (r >= 0 && r < static_cast<int64_t>(spec.candidates.size()) &&
          r != static_cast<int64_t>(k))
        cand.reads.push_back(static_cast<int>(r));
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
  // The candidates regenerated before each op (in regeneration order) and
  // evicted after each op; points outside the ops are ignored.
  size_t n = profile_.points.size();
  regenerateAt_.assign(n, {});
  evictAfter_.assign(n, {});
  const auto &cands = profile_.candidates;
  for (size_t k = 0; k < cands.size(); ++k) {
    const RematProfile::Candidate &c = cands[k];
    if (c.evictAfter < 0 || c.regenerateBefore <= c.evictAfter ||
        c.regenerateBefore >= static_cast<int64_t>(n))
      continue;
    evictAfter_[c.evictAfter].push_back(static_cast<int>(k));
    regenerateAt_[c.regenerateBefore].push_back(static_cast<int>(k));
  }
  auto order = [&](int k) {
    return cands[k].regenerateOrder >= 0 ? cands[k].regenerateOrder
                                         : static_cast<int64_t>(k);
  };
  for (std::vector<int> &at : regenerateAt_)
    std::stable_sort(at.begin(), at.end(),
                     [&](int a, int b) { return order(a) < order(b); });
  int64_t gap = std::numeric_limits<int64_t>::min();
  for (size_t i = 0; i < n; ++i) {
    if (regenerateAt_[i].empty() && evictAfter_[i].empty()) {
      for (int64_t p : profile_.points[i])
        gap = std::max(gap, p);
      continue;
    }
    eventOps_.push_back(static_cast<int64_t>(i));
    gapMax_.push_back(gap);
    gap = std::numeric_limits<int64_t>::min();
  }
  gapMax_.push_back(gap);
}

void RematPlanner::plan() const {
  if (planned_)
    return;
  lowest_ = lowestSet();
  witness_ = lowest_;
  planned_ = true;
}

void RematPlanner::reset() {
  evicted_.assign(profile_.candidates.size(), 0);
  if (planned_)
    witness_ = lowest_;
  next_ = 0;
  drift_ = 0;
  replayed_ = 0;
}

int64_t RematPlanner::peak(const std::vector<char> &evicted) const {
  return simulate(evicted, -1, nullptr);
}

int64_t RematPlanner::simulate(const std::vector<char> &plan, int64_t stopAt,
                               int64_t *awayAtStop) const {
  const auto &cands = profile_.candidates;
  // Reused from run to run (the planner simulates thousands of them).
  std::vector<char> &away = away_;
  away.assign(cands.size(), 0);
  int64_t awayBytes = 0, best = 0;
  // Regenerates candidate `id` (away) before op `r`: its buffer comes
  // back, then each candidate its recompute reads that is away (nested
  // regeneration, recursively), then the recompute runs. Returns the
  // highest bytes on top of the live bytes when it started; `*stays` gets
  // the bytes that stay back after it: its buffer, the nested ones the
  // plan keeps back until their own regenerate points, and what their
  // nested regenerations kept back (a nested one given back goes after
  // this recompute).
  auto regenerateIn = [&](auto &self, int id, int64_t r, size_t depth,
                          int64_t *stays) -> int64_t {
    const RematProfile::Candidate &c = cands[id];
    int64_t held = c.bytes, top = c.bytes;
    away[id] = 0;
    awayBytes -= c.bytes;
    std::vector<int> transient;
    // Reads are defined before their reader, so the nesting is at most as
    // deep as there are candidates (a deeper one is a malformed profile).
    if (depth <= cands.size())
      for (int d : c.reads) {
        const RematProfile::Candidate &dc = cands[d];
        if (!away[d] || dc.evictAfter >= r || dc.regenerateBefore <= r)
          continue;
        int64_t back = 0;
        top = std::max(top, held + self(self, d, r, depth + 1, &back));
        held += back;
        if (plan[d] == 2)
          transient.push_back(d);
      }
    top = std::max(top, held + c.recomputePeak);
    // Given up again once the recompute is done.
    for (int d : transient) {
      away[d] = 1;
      awayBytes += cands[d].bytes;
      held -= cands[d].bytes;
    }
    *stays = held;
    return top;
  };
  auto regenerate = [&](int id, int64_t r, size_t depth, int64_t *stays) {
    return regenerateIn(regenerateIn, id, r, depth, stays);
  };
  // The ops between two with a regenerate or an evict point see the same
  // bytes away: their highest point counts once (gapMax_).
  int64_t prev = -1;
  auto gapUntil = [&](size_t k, int64_t next) {
    if (gapMax_[k] != std::numeric_limits<int64_t>::min())
      best = std::max(best, gapMax_[k] - awayBytes);
    if (awayAtStop && stopAt > prev && stopAt < next)
      *awayAtStop = awayBytes;
  };
  for (size_t k = 0; k < eventOps_.size(); ++k) {
    int64_t i = eventOps_[k];
    gapUntil(k, i);
    // Regenerate points before op i, in regeneration order; one brought
    // back early by a nested regeneration is handed back at no cost.
    for (int id : regenerateAt_[i]) {
      if (!away[id])
        continue;
      int64_t base = profile_.liveBefore[i] - awayBytes, stays = 0;
      best = std::max(best, base + regenerate(id, i, 0, &stays));
    }
    if (i == stopAt && awayAtStop)
      *awayAtStop = awayBytes;
    for (int64_t p : profile_.points[i])
      best = std::max(best, p - awayBytes);
    for (int id : evictAfter_[i])
      if (plan[id]) {
        away[id] = 1;
        awayBytes += cands[id].bytes;
      }
    prev = i;
  }
  gapUntil(eventOps_.size(), std::numeric_limits<int64_t>::max());
  for (int64_t p : profile_.exitPoints)
    best = std::max(best, p);
  return best;
}

int64_t RematPlanner::unconstrainedPeak() const {
  return peak(std::vector<char>(profile_.candidates.size(), 0));
}

std::vector<char> RematPlanner::lowestSet() const {
  size_t n = profile_.candidates.size();
  std::vector<char> none(n, 0);
  // Peak evaluations beyond the greedy descent are budgeted, so a graph
  // with many candidates and ops is planned in bounded time (each
  // evaluation simulates the run).
  int64_t budget = 20000;
  auto eval = [&](const std::vector<char> &plan) {
    --budget;
    return peak(plan);
  };
  // One local move: candidate k to `value` (0 kept, 1 evicted and kept
  // once a nested regeneration brings it back, 2 evicted and given up
  // again after each nested regeneration). Greedy from `plan`: take the
  // move that lowers the peak most, while one does; `moves(k)` lists the
  // values tried for k.
  auto descend = [&](std::vector<char> &plan, int64_t &current, auto moves,
                     bool budgeted) {
    for (;;) {
      int bestK = -1;
      char bestV = 0;
      int64_t bestPeak = current;
      for (size_t k = 0; k < n; ++k)
        for (char v : moves(plan[k])) {
          if (budgeted && budget <= 0)
            break;
          char old = plan[k];
          plan[k] = v;
          int64_t p = budgeted ? eval(plan) : peak(plan);
          plan[k] = old;
          if (p < bestPeak)
            bestK = static_cast<int>(k), bestV = v, bestPeak = p;
        }
      if (bestK < 0)
        return;
      plan[bestK] = bestV;
      current = bestPeak;
    }
  };
  auto evictions = [](char v) {
    return v == 0 ? std::vector<char>{1, 2} : std::vector<char>{};
  };
  auto anyOther = [](char v) {
    std::vector<char> o;
    for (char x : {0, 1, 2})
      if (x != v)
        o.push_back(x);
    return o;
  };
  // Greedy descent from nothing evicted: add the eviction that lowers the
  // peak most, while one does (evicting everything can be worse: the
  // recompute of a candidate regenerated near the peak adds its
  // intermediates there).
  std::vector<char> result = none;
  int64_t resultPeak = peak(result);
  descend(result, resultPeak, evictions, false);
  // Greedy ascent from everything evicted (an eviction whose nested
  // regenerations cost more than it frees goes back), then a local search
  // from the better plan, within the budget.
  std::vector<char> ascent(n, 1);
  int64_t ascentPeak = eval(ascent);
  descend(ascent, ascentPeak, anyOther, true);
  if (ascentPeak < resultPeak)
    result = ascent, resultPeak = ascentPeak;
  descend(result, resultPeak, anyOther, true);
  return resultPeak < peak(none) ? result : none;
}

int64_t RematPlanner::minimumPeak() const {
  plan();
  return peak(witness_);
}

double RematPlanner::score(int id) const {
  const RematProfile::Candidate &c = profile_.candidates[id];
  if (policy_ == RematPolicyKind::LargestFirst)
    return static_cast<double>(c.bytes);
  double staleness = static_cast<double>(
      std::max<int64_t>(1, c.regenerateBefore - c.evictAfter));
  return static_cast<double>(c.bytes) * staleness / std::max(c.flops, 1.0);
}

bool RematPlanner::decideEvict(int id, int64_t liveBytes) {
  // A run at these shapes that has taken the same decisions as the last
  // one, and sees the same live bytes here, is in the same state: its
  // decision (and the state after it) is the one recorded.
  if (replayed_ < memo_.size() && memo_[replayed_].id == id &&
      memo_[replayed_].liveBytes == liveBytes) {
    const Decision &d = memo_[replayed_++];
    next_ = std::max(next_, id + 1);
    if (id >= 0 && id < static_cast<int>(evicted_.size()))
      evicted_[id] = d.value;
    drift_ = d.drift;
    if (d.witnessChanged)
      witness_ = d.witness;
    return d.evict;
  }
  memo_.resize(replayed_);
  std::vector<char> witnessBefore = witness_;
  bool evict = decide(id, liveBytes);
  Decision d;
  d.id = id;
  d.liveBytes = liveBytes;
  d.evict = evict;
  d.value =
      id >= 0 && id < static_cast<int>(evicted_.size()) ? evicted_[id] : 0;
  d.drift = drift_;
  d.witnessChanged = witness_ != witnessBefore;
  if (d.witnessChanged)
    d.witness = witness_;
  memo_.push_back(std::move(d));
  ++replayed_;
  return evict;
}

bool RematPlanner::decide(int id, int64_t liveBytes) {
  int n = static_cast<int>(profile_.candidates.size());
  if (id < 0 || id >= n)
    return false;
  // Decisions come in id order; a skipped id stays kept.
  next_ = std::max(next_, id + 1);
  if (limit_ <= 0)
    return false;
  const auto &cands = profile_.candidates;
  int64_t after = cands[id].evictAfter + 1;
  // Nothing evicted so far and the whole run fits with none evicted (after
  // the drift): keep it, without searching for plans.
  if (std::none_of(evicted_.begin(), evicted_.end(),
                   [](char e) { return e != 0; })) {
    if (unconstrained_ < 0)
      unconstrained_ = unconstrainedPeak();
    if (liveBytes >= 0 &&
        after < static_cast<int64_t>(profile_.liveBefore.size()))
      drift_ = std::max(drift_, liveBytes - profile_.liveBefore[after]);
    if (unconstrained_ <= limit_ - drift_)
      return false;
  }
  plan();
  if (liveBytes >= 0 &&
      after < static_cast<int64_t>(profile_.liveBefore.size())) {
    // Predicted live bytes at this call: before the next op, with the
    // candidates evicted so far away (this one still held).
    std::vector<char> sofar = evicted_;
    for (int k = id; k < n; ++k)
      sofar[k] = 0;
    int64_t awayBytes = 0;
    simulate(sofar, after, &awayBytes);
    int64_t predicted = profile_.liveBefore[after] - awayBytes;
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
  // An eviction keeps the witness's choice for nested regenerations.
  char value = want ? (witness_[id] ? witness_[id] : 1) : 0;
  for (std::vector<char> &c : completions) {
    c[id] = value;
    if (peak(c) <= limit) {
      witness_ = c;
      evicted_[id] = value;
      return want;
    }
  }
  evicted_[id] = witness_[id];
  return witness_[id] != 0;
}

} // namespace disc::runtime
