//===- RematPlanner.h - run-time rematerialization decisions ---*- C++ -*-===//
//
// The runtime half of rematerialization (docs/memory.md,
// "Rematerialization"): the compiler's live-byte expressions of every
// program point and its candidates, evaluated at the actual input shapes,
// give the live bytes of a run for any set of evicted candidates. The
// planner computes the unconstrained and the minimum peak before the run
// and decides at each evict point whether the candidate goes. Internal to
// the runtime library (hidden); the unit tests build their own copy.
//
//===----------------------------------------------------------------------===//
#ifndef DISC_RUNTIME_CORE_REMATPLANNER_H
#define DISC_RUNTIME_CORE_REMATPLANNER_H

#include "disc/runtime/Signature.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#pragma GCC visibility push(hidden)
namespace disc::runtime {

/// The memory profile of one run at actual shapes, in bytes.
struct RematProfile {
  /// Live bytes just before op i runs (nothing evicted).
  std::vector<int64_t> liveBefore;
  /// Live bytes at each program point inside op i (nothing evicted).
  std::vector<std::vector<int64_t>> points;
  /// Live bytes at the points of the return (the clones of its results).
  std::vector<int64_t> exitPoints;
  struct Candidate {
    /// Allocator bytes of the candidate's buffer.
    int64_t bytes = 0;
    /// Its last use before the gap and its next use (op indices): evicted,
    /// it is not live while ops evictAfter+1 .. regenerateBefore-1 run.
    int64_t evictAfter = 0;
    int64_t regenerateBefore = 0;
    /// Position among the regenerations: of two at the same op, the lower
    /// runs first (the other is still away while it recomputes). -1: the
    /// candidate's id.
    int64_t regenerateOrder = -1;
    /// Bytes on top of liveBefore[regenerateBefore] while recomputing.
    int64_t recomputePeak = 0;
    /// Estimated recompute cost (FLOPs).
    double flops = 0;
    /// Candidates the recompute reads (ids, definition order); one away at
    /// the regenerate point is regenerated first (nested regeneration).
    std::vector<int> reads;
  };
  /// In evict order (the order of their evict points).
  std::vector<Candidate> candidates;
};

/// Evaluates the signature's "remat" entry at the bound input dims. False,
/// with `error` naming the expression, when one cannot be evaluated.
bool evaluateRematProfile(const RematSpec &spec,
                          const std::map<std::string, int64_t> &dims,
                          RematProfile *out, std::string *error);

enum class RematPolicyKind {
  /// Evict the candidate that frees the most bytes.
  LargestFirst,
  /// DTR-style score: bytes * staleness / cost, where staleness is the
  /// length of the gap in ops (Kirisame et al., "Dynamic Tensor
  /// Rematerialization", ICLR 2021, h(t) = cost / (memory * staleness)).
  DtrScore,
};

class RematPlanner {
public:
  /// `limitBytes` 0: no limit (nothing is ever evicted).
  RematPlanner(RematProfile profile, int64_t limitBytes,
               RematPolicyKind policy);

  /// Peak bytes of a run that evicts exactly the candidates marked in
  /// `plan` (one entry per candidate): 0 kept, 1 evicted, 2 evicted and
  /// given up again after each nested regeneration (a candidate evicted
  /// with 1 that a nested regeneration brings back stays back until its
  /// own regenerate point). The run is simulated op by op.
  int64_t peak(const std::vector<char> &plan) const;
  /// Peak with nothing evicted.
  int64_t unconstrainedPeak() const;
  /// The lowest peak the planner can guarantee: the lowest of evicting
  /// nothing, everything, and a greedy descent (add the eviction that
  /// lowers the peak most while one does). A limit below it is refused.
  int64_t minimumPeak() const;
  /// The plan behind minimumPeak() (as in peak()). A search (simulated
  /// runs, quadratic in the candidates), so the planner runs it on first
  /// need: minimumPeak(), or a decision under a limit; a run without a
  /// limit never pays for it.
  std::vector<char> lowestSet() const;

  /// Decision at the evict point of candidate `id`; candidates are decided
  /// in id order. Returns true to evict. The policy proposes (a greedy plan
  /// by its score when the run would not fit otherwise); the proposal is
  /// taken only when a completion of it still fits, so with a limit no
  /// lower than minimumPeak() every point of the run stays within it.
  ///
  /// `liveBytes`, when >= 0, is what the allocator holds at the evict call;
  /// more than the profile predicts there (memory the compiler does not
  /// model) lowers the limit the rest of the run plans against by that much.
  bool decideEvict(int id, int64_t liveBytes = -1);
  /// Bytes the allocator held above the prediction at an evict point (the
  /// largest such excess so far, 0 when the prediction was exact).
  int64_t drift() const { return drift_; }
  /// Decisions so far (as in peak(): 0 kept, 1 or 2 evicted), one per
  /// candidate.
  const std::vector<char> &decisions() const { return evicted_; }
  /// Whether candidate `id`, brought back by a nested regeneration, is
  /// given up again after the recompute that read it (else kept until its
  /// own regenerate point).
  bool givesBackAfterNested(int id) const {
    return id >= 0 && id < static_cast<int>(evicted_.size()) &&
           evicted_[id] == 2;
  }
  /// Forgets the decisions of a run, for the next run at the same shapes:
  /// the state of a planner just constructed (the lowest set is kept, not
  /// searched again). The decisions of the last run are kept too: a run
  /// that meets the same evict calls with the same live bytes takes them
  /// without planning again (a steady run pays no search).
  void reset();
  const RematProfile &profile() const { return profile_; }

private:
  /// decideEvict() without the recorded decisions.
  bool decide(int id, int64_t liveBytes);
  /// One decision of a run and the state it left.
  struct Decision {
    int id = 0;
    int64_t liveBytes = 0;
    bool evict = false;
    char value = 0;
    int64_t drift = 0;
    bool witnessChanged = false;
    std::vector<char> witness;
  };
  /// The decisions of the last run (the prefix a run has replayed, then
  /// its own), and how many of them this run has replayed.
  std::vector<Decision> memo_;
  size_t replayed_ = 0;
  double score(int id) const;
  /// Simulates a run that evicts `evicted` op by op (docs/memory.md,
  /// "Decision") and returns its peak; `*awayAtStop` (when not null)
  /// receives the bytes away just before op `stopAt` (after its
  /// regenerations).
  int64_t simulate(const std::vector<char> &plan, int64_t stopAt,
                   int64_t *awayAtStop) const;
  /// Candidates regenerated before each op, in regeneration order, and
  /// evicted after each op.
  std::vector<std::vector<int>> regenerateAt_, evictAfter_;
  /// The ops with a regenerate or an evict point, ascending, and the
  /// highest point of the ops before each of them since the previous one
  /// (gapMax_[k], INT64_MIN when none; gapMax_.back() for the ops after the
  /// last): between two such ops nothing changes what is away, so a
  /// simulation visits only these (a few per candidate, not every op).
  std::vector<int64_t> eventOps_, gapMax_;
  /// simulate()'s candidates away, kept to save an allocation per run.
  mutable std::vector<char> away_;
  RematProfile profile_;
  int64_t limit_;
  RematPolicyKind policy_;
  std::vector<char> evicted_;
  /// Runs lowestSet() once, setting lowest_ and witness_.
  void plan() const;
  /// A set that fits the limit and agrees with the decisions so far (once
  /// planned).
  mutable std::vector<char> witness_;
  /// lowestSet(), the witness of a fresh run (once planned).
  mutable std::vector<char> lowest_;
  mutable bool planned_ = false;
  /// unconstrainedPeak(), once needed (-1 before).
  int64_t unconstrained_ = -1;
  int next_ = 0;
  int64_t drift_ = 0;
};

} // namespace disc::runtime
#pragma GCC visibility pop

#endif // DISC_RUNTIME_CORE_REMATPLANNER_H
