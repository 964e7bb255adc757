//===- ScheduleBench.cpp - op scheduling time on synthetic 5,000-op graphs ===//
//
// Times scheduleForMemory (disc/Analysis/MemorySchedule.h: every heuristic
// plus the solver-backed judge) on synthetic graphs of about 5,000 ops with
// symbolic sizes over N, H, W (ranges as a user would give them):
//   - inception: Inception-style blocks, each a fan-out of four branches
//     (1x1, 3x3, 5x5 and pool-like chains of different widths) joined by a
//     concat, with the exporter's order emitting every branch head first;
//   - transformer: attention blocks (batch*seq*seq scores, FFN 4x widening,
//     residual adds);
//   - random: a random DAG with sizes drawn from a small set.
// The budget is 2 s per graph (docs/memory.md, "Op scheduling").
//
//===----------------------------------------------------------------------===//
#include "disc/Analysis/MemorySchedule.h"

#include "mlir/IR/AffineExpr.h"
#include "mlir/IR/MLIRContext.h"

#include <benchmark/benchmark.h>

#include <random>

using namespace mlir;
using namespace mlir::disc;

namespace {

struct Builder {
  ScheduleGraph g;
  SmallVector<SmallVector<unsigned>> users;
  SmallVector<AffineExpr> bytes;

  unsigned node(AffineExpr b, ArrayRef<unsigned> preds) {
    unsigned id = bytes.size();
    bytes.push_back(b);
    users.emplace_back();
    for (unsigned p : preds)
      users[p].push_back(id);
    g.preds.emplace_back(preds.begin(), preds.end());
    return id;
  }
  ScheduleGraph finish() {
    g.numNodes = bytes.size();
    for (unsigned v = 0; v < g.numNodes; ++v)
      g.addAlloc(bytes[v], v, users[v], users[v].empty());
    return std::move(g);
  }
};

AffineExpr sym(ShapeConstraintSolver &s, const char *name, int64_t min,
               int64_t max, int64_t likely) {
  SymbolInfo info;
  info.name = name;
  info.min = min;
  info.max = max;
  info.likely = likely;
  return s.addSymbol(info);
}

/// Inception-style blocks in "heads first" exporter order: ~5,000 ops.
ScheduleGraph inception(ShapeConstraintSolver &s) {
  AffineExpr n = sym(s, "N", 1, 64, 8), h = sym(s, "H", 8, 512, 64),
             w = sym(s, "W", 8, 512, 64);
  AffineExpr px = n * h * w * 4;
  Builder b;
  unsigned x = b.node(px * 64, {});
  // Wide branch heads (a 1x1 expansion), narrow branch outputs.
  int widths[4][3] = {{192, 64, 0}, {256, 128, 32}, {128, 64, 32}, {96, 32, 0}};
  while (b.bytes.size() < 5000) {
    // Heads of the four branches first, then the rest of each branch.
    SmallVector<unsigned> last;
    for (auto &br : widths)
      last.push_back(b.node(px * br[0], {x}));
    for (unsigned k = 1; k < 3; ++k)
      for (unsigned i = 0; i < 4; ++i)
        if (widths[i][k])
          last[i] = b.node(px * widths[i][k], {last[i]});
    x = b.node(px * 160, last);
    x = b.node(px * 64, {x});
  }
  return b.finish();
}

/// Transformer blocks: ~5,000 ops.
ScheduleGraph transformer(ShapeConstraintSolver &s) {
  AffineExpr batch = sym(s, "batch", 1, 32, 4),
             seq = sym(s, "seq", 1, 4096, 512);
  AffineExpr tok = batch * seq * 4;
  Builder b;
  unsigned x = b.node(tok * 512, {});
  while (b.bytes.size() < 5000) {
    unsigned q = b.node(tok * 512, {x}), k = b.node(tok * 512, {x}),
             v = b.node(tok * 512, {x});
    unsigned sc = b.node(batch * seq * seq * 32, {q, k});
    unsigned sm = b.node(batch * seq * seq * 32, {sc});
    unsigned at = b.node(tok * 512, {sm, v});
    unsigned o = b.node(tok * 512, {at});
    unsigned r = b.node(tok * 512, {o, x});
    unsigned f1 = b.node(tok * 2048, {r});
    unsigned f2 = b.node(tok * 2048, {f1});
    unsigned f3 = b.node(tok * 512, {f2});
    x = b.node(tok * 512, {f3, r});
  }
  return b.finish();
}

/// Random DAG of 5,000 ops.
ScheduleGraph randomDag(ShapeConstraintSolver &s) {
  AffineExpr n = sym(s, "N", 1, 64, 8), m = sym(s, "M", 1, 4096, 256);
  AffineExpr sizes[] = {n * 4,
                        m * 4,
                        n * m * 4,
                        n * 256,
                        getAffineConstantExpr(4096, n.getContext()),
                        m * m * 2};
  std::mt19937 rng(1);
  Builder b;
  b.node(sizes[0], {});
  for (unsigned v = 1; v < 5000; ++v) {
    SmallVector<unsigned> preds;
    unsigned k = 1 + rng() % 3;
    for (unsigned j = 0; j < k; ++j) {
      // Mostly local edges, some long ones.
      unsigned span = rng() % 8 == 0 ? v : std::min(v, 16u);
      preds.push_back(v - 1 - rng() % span);
    }
    llvm::sort(preds);
    preds.erase(std::unique(preds.begin(), preds.end()), preds.end());
    b.node(sizes[rng() % 6], preds);
  }
  return b.finish();
}

template <ScheduleGraph (*Make)(ShapeConstraintSolver &)>
void BM_Schedule(benchmark::State &state) {
  for (auto _ : state) {
    state.PauseTiming();
    MLIRContext ctx;
    ShapeConstraintSolver solver(&ctx);
    ScheduleGraph g = Make(solver);
    state.ResumeTiming();
    ScheduleResult r = scheduleForMemory(g, solver);
    state.PauseTiming();
    state.counters["ops"] = g.numNodes;
    double prog = r.candidates.empty() ? 0 : r.candidates[0].peakAtSample;
    double chosen = prog;
    for (const ScheduleCandidate &c : r.candidates)
      if (c.name == r.chosen)
        chosen = c.peakAtSample;
    state.counters["peak_ratio"] = prog > 0 ? chosen / prog : 1;
    state.counters["z3_calls"] = solver.getStats().z3Calls;
    state.ResumeTiming();
  }
}

BENCHMARK_TEMPLATE(BM_Schedule, inception)
    ->Name("schedule/inception_5000")
    ->Unit(benchmark::kMillisecond)
    ->Iterations(3);
BENCHMARK_TEMPLATE(BM_Schedule, transformer)
    ->Name("schedule/transformer_5000")
    ->Unit(benchmark::kMillisecond)
    ->Iterations(3);
BENCHMARK_TEMPLATE(BM_Schedule, randomDag)
    ->Name("schedule/random_5000")
    ->Unit(benchmark::kMillisecond)
    ->Iterations(3);

} // namespace

BENCHMARK_MAIN();
