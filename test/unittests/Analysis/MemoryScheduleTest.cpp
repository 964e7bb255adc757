//===- MemoryScheduleTest.cpp - op scheduling on hand-built graphs --------===//
//
// The scheduler on small graphs whose best order is known by hand: branch
// heads emitted before their reductions, orders decided by a range proof,
// by LIKELY values, or kept because the sizes are incomparable; and a
// property check on random graphs that the chosen order's peak is never
// above program order's at any sampled shape.
//
//===----------------------------------------------------------------------===//
#include "disc/Analysis/MemorySchedule.h"

#include "mlir/IR/AffineExpr.h"
#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

#include <random>

using namespace mlir;
using namespace mlir::disc;

namespace {

class ScheduleTest : public ::testing::Test {
protected:
  AffineExpr sym(int64_t min, std::optional<int64_t> max = std::nullopt,
                 std::optional<int64_t> likely = std::nullopt) {
    SymbolInfo info;
    info.min = min;
    info.max = max;
    info.likely = likely;
    return solver.addSymbol(info);
  }
  AffineExpr c(int64_t v) { return getAffineConstantExpr(v, &ctx); }

  /// Peak bytes of `order` with the symbols bound to `vals`.
  int64_t peakAt(const ScheduleGraph &g, ArrayRef<unsigned> order,
                 ArrayRef<int64_t> vals) {
    int64_t peak = 0;
    for (AffineExpr e : liveBytesPerStep(g, order))
      peak = std::max(peak, *solver.evaluate(e, vals));
    return peak;
  }

  MLIRContext ctx;
  ShapeConstraintSolver solver{&ctx};
};

/// Two branches x -> headA (a bytes) -> redA (r) and headB (b) -> redB (r),
/// joined by an add (r, returned). Program order emits both heads first:
/// 0 headA, 1 headB, 2 redA, 3 redB, 4 add.
ScheduleGraph headsFirst(AffineExpr a, AffineExpr b, AffineExpr r) {
  ScheduleGraph g(5);
  g.addEdge(0, 2);
  g.addEdge(1, 3);
  g.addEdge(2, 4);
  g.addEdge(3, 4);
  g.addAlloc(a, 0, {2});
  g.addAlloc(b, 1, {3});
  g.addAlloc(r, 2, {4});
  g.addAlloc(r, 3, {4});
  g.addAlloc(r, 4, {}, /*liveOut=*/true);
  return g;
}

const SmallVector<unsigned> kAFirst = {0, 2, 1, 3, 4};
const SmallVector<unsigned> kBFirst = {1, 3, 0, 2, 4};

TEST_F(ScheduleTest, RangeProofOrdersBranches) {
  AffineExpr s0 = sym(1), s1 = sym(128, 4096);
  // a = 4*S0*S1 > b = 256*S0 for every S1 in [128, 4096]: running A first
  // (peak 4*S0*S1 + 4*S0) beats B first (4*S0*S1 + 8*S0).
  ScheduleGraph g = headsFirst(s0 * s1 * 4, s0 * 256, s0 * 4);
  ScheduleResult r = scheduleForMemory(g, solver);
  EXPECT_EQ(r.order, kAFirst) << r.chosen;
  EXPECT_EQ(comparePeaks(g, r.order, kBFirst, solver), PeakOrder::LE);
  EXPECT_EQ(comparePeaks(g, r.order, {0, 1, 2, 3, 4}, solver), PeakOrder::LE);
}

TEST_F(ScheduleTest, LikelyValuesDecideWithoutRange) {
  AffineExpr s0 = sym(1), s1 = sym(1, std::nullopt, /*likely=*/16);
  // Without a range, A-first and B-first are incomparable (264*S0 against
  // 4*S0*S1 + 8*S0); at S1 = 16 B-first has the lower peak.
  ScheduleGraph g = headsFirst(s0 * s1 * 4, s0 * 256, s0 * 4);
  EXPECT_EQ(comparePeaks(g, kAFirst, kBFirst, solver), PeakOrder::UNKNOWN);
  ScheduleResult r = scheduleForMemory(g, solver);
  EXPECT_EQ(r.order, kBFirst) << r.chosen;
}

TEST_F(ScheduleTest, LikelyValuesDecideTheOtherWay) {
  AffineExpr s0 = sym(1), s1 = sym(1, std::nullopt, /*likely=*/1000);
  ScheduleGraph g = headsFirst(s0 * s1 * 4, s0 * 256, s0 * 4);
  ScheduleResult r = scheduleForMemory(g, solver);
  EXPECT_EQ(r.order, kAFirst) << r.chosen;
}

TEST_F(ScheduleTest, IncomparableKeepsProgramOrder) {
  AffineExpr s0 = sym(1), s1 = sym(1);
  // Program order already runs B first; A-first (a = 8*S0*S1) is better
  // only when S1 >= 32, and there is neither a range nor a LIKELY value.
  // The size-ordered DFS proposes A-first (heavier at its sample point),
  // but it cannot be proven safe.
  ScheduleGraph g(5);
  g.addEdge(0, 1);
  g.addEdge(2, 3);
  g.addEdge(1, 4);
  g.addEdge(3, 4);
  g.addAlloc(s0 * 256, 0, {1});
  g.addAlloc(s0 * 4, 1, {4});
  g.addAlloc(s0 * s1 * 8, 2, {3});
  g.addAlloc(s0 * 4, 3, {4});
  g.addAlloc(s0 * 4, 4, {}, true);
  ScheduleResult r = scheduleForMemory(g, solver);
  EXPECT_EQ(r.order, (SmallVector<unsigned>{0, 1, 2, 3, 4})) << r.chosen;
  EXPECT_EQ(r.chosen, "program");
  bool sawUnsafe = false;
  for (const ScheduleCandidate &cand : r.candidates)
    sawUnsafe |= !cand.safe;
  EXPECT_TRUE(sawUnsafe) << "the A-first candidate cannot be proven safe";
}

TEST_F(ScheduleTest, IncomparableBranchesKeepTheirProgramOrder) {
  AffineExpr s0 = sym(1), s1 = sym(1);
  // Heads first: both sequential orders are proven better than program
  // order, but not comparable with each other, and nothing breaks the tie:
  // the branches stay in program order (A, then B).
  ScheduleGraph g = headsFirst(s0 * s1 * 4, s0 * 256, s0 * 4);
  ScheduleResult r = scheduleForMemory(g, solver);
  EXPECT_EQ(r.order, kAFirst) << r.chosen;
}

TEST_F(ScheduleTest, ChainKeepsProgramOrder) {
  AffineExpr s0 = sym(1);
  ScheduleGraph g(4);
  for (unsigned i = 0; i + 1 < 4; ++i) {
    g.addEdge(i, i + 1);
    g.addAlloc(s0 * 4, i, {i + 1});
  }
  g.addAlloc(s0 * 4, 3, {}, true);
  ScheduleResult r = scheduleForMemory(g, solver);
  EXPECT_EQ(r.order, (SmallVector<unsigned>{0, 1, 2, 3}));
  EXPECT_EQ(r.chosen, "program");
}

TEST_F(ScheduleTest, LiveBytesPerStep) {
  AffineExpr s0 = sym(1);
  ScheduleGraph g = headsFirst(s0 * 8, s0 * 16, c(4));
  SmallVector<AffineExpr> live = liveBytesPerStep(g, {0, 1, 2, 3, 4});
  ASSERT_EQ(live.size(), 5u);
  // Step 2 (redA): headA, headB and redA's result are live.
  EXPECT_EQ(*solver.evaluate(live[2], {10}), 80 + 160 + 4);
  // Step 4 (add): the two reductions and the result.
  EXPECT_EQ(*solver.evaluate(live[4], {10}), 12);
}

TEST_F(ScheduleTest, NeverAboveProgramOrderOnRandomGraphs) {
  AffineExpr s0 = sym(1, 64), s1 = sym(1, 512);
  std::mt19937 rng(7);
  AffineExpr sizes[] = {s0 * 4,  s1 * 4,  s0 * s1 * 4,
                        s0 * 64, c(1024), s1 * s1 * 2};
  for (int trial = 0; trial < 20; ++trial) {
    unsigned n = 8 + rng() % 24;
    ScheduleGraph g(n);
    SmallVector<SmallVector<unsigned>> users(n);
    for (unsigned v = 1; v < n; ++v) {
      unsigned k = 1 + rng() % 2;
      for (unsigned j = 0; j < k; ++j) {
        unsigned p = rng() % v;
        g.addEdge(p, v);
        users[p].push_back(v);
      }
    }
    for (unsigned v = 0; v < n; ++v)
      g.addAlloc(sizes[rng() % 6], v, users[v], users[v].empty());
    ScheduleResult r = scheduleForMemory(g, solver);
    // Topological.
    SmallVector<unsigned> pos(n);
    for (unsigned i = 0; i < n; ++i)
      pos[r.order[i]] = i;
    for (unsigned v = 0; v < n; ++v)
      for (unsigned p : g.preds[v])
        ASSERT_LT(pos[p], pos[v]);
    SmallVector<unsigned> prog;
    for (unsigned i = 0; i < n; ++i)
      prog.push_back(i);
    for (int64_t a : {1, 2, 17, 64})
      for (int64_t b : {1, 3, 100, 512})
        EXPECT_LE(peakAt(g, r.order, {a, b}), peakAt(g, prog, {a, b}))
            << "trial " << trial << " chosen " << r.chosen;
    // Deterministic.
    EXPECT_EQ(scheduleForMemory(g, solver).order, r.order);
  }
}

} // namespace
