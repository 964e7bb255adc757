//===- SolverBench.cpp - ShapeConstraintSolver query benchmarks -----------===//
//
// Measures isEqual/compare on the expressions shape propagation produces for
// a transformer encoder (batch, seq; reshapes through products; attention
// scores) and a ResNet-style conv stack (N, H, W; conv/pool output sizes),
// plus a set of queries only Z3 decides. Counters are per iteration:
// queries, cache hits, canonical hits, Z3 calls, Z3 ms (BladeDISC++, arXiv
// 2412.16985, section 3.1, on keeping symbolic-shape analysis cheap).
//
//===----------------------------------------------------------------------===//
#include "disc/Analysis/ShapeConstraintSolver.h"

#include "mlir/IR/AffineExpr.h"
#include "mlir/IR/MLIRContext.h"

#include <benchmark/benchmark.h>

#include <vector>

using namespace mlir;
using namespace mlir::disc;

namespace {

AffineExpr addSym(ShapeConstraintSolver &s, const char *name, int64_t min,
                  std::optional<int64_t> max) {
  SymbolInfo info;
  info.name = name;
  info.min = min;
  info.max = max;
  return s.addSymbol(info);
}

/// Transformer encoder: hidden 256, 4 heads of 64, FFN 1024.
void transformerQueries(ShapeConstraintSolver &s, MLIRContext *ctx) {
  AffineExpr batch = addSym(s, "batch", 1, 64);
  AffineExpr seq = addSym(s, "seq", 1, 2048);
  // Data-dependent symbol from a Reshape(-1): tokens == batch * seq.
  AffineExpr tokens = addSym(s, "tokens", 1, std::nullopt);
  s.addEquality(tokens, batch * seq);
  // A second reshape to [tokens2, 256] from [batch, seq, 4, 64].
  AffineExpr tokens2 = addSym(s, "tokens2", 1, std::nullopt);
  s.addEquality(tokens2 * 256, batch * seq * 4 * 64);
  auto k = [&](int64_t v) { return getAffineConstantExpr(v, ctx); };
  for (int layer = 0; layer < 4; ++layer) {
    // Reshape element counts.
    benchmark::DoNotOptimize(s.isEqual(batch * seq * 256, tokens * 256));
    benchmark::DoNotOptimize(s.isEqual(batch * seq * 4 * 64, tokens2 * 256));
    benchmark::DoNotOptimize(s.isEqual(tokens, tokens2));
    // Broadcast of the attention mask [batch, 1, 1, seq] to scores.
    benchmark::DoNotOptimize(
        s.isEqual(batch * 4 * seq * seq, batch * seq * (seq * 4)));
    // Which buffer is bigger: scores vs hidden, FFN vs hidden.
    benchmark::DoNotOptimize(s.compare(batch * 4 * seq * seq, tokens * 256));
    benchmark::DoNotOptimize(s.compare(tokens * 1024, batch * seq * 256));
    benchmark::DoNotOptimize(
        s.compare(batch * seq * 256 + k(256), tokens * 256));
    benchmark::DoNotOptimize(s.compare(seq, k(2048)));
    // Causal mask range: seq - 1 < seq; slice end min(seq, 512) style.
    benchmark::DoNotOptimize(s.compare(seq - 1, seq));
    benchmark::DoNotOptimize(s.compare(seq, k(512)));
    benchmark::DoNotOptimize(s.compare(batch * seq, batch + seq - 1));
  }
}

/// ResNet-18-style stem and four stages on N x 3 x H x W.
void convQueries(ShapeConstraintSolver &s, MLIRContext *ctx) {
  AffineExpr n = addSym(s, "N", 1, 32);
  AffineExpr h = addSym(s, "H", 32, 1024);
  AffineExpr w = addSym(s, "W", 32, 1024);
  auto convOut = [](AffineExpr x, int64_t k, int64_t stride, int64_t pad) {
    return (x + 2 * pad - (k - 1) - 1).floorDiv(stride) + 1;
  };
  std::vector<AffineExpr> hs{h}, ws{w};
  hs.push_back(convOut(hs.back(), 7, 2, 3));
  ws.push_back(convOut(ws.back(), 7, 2, 3));
  hs.push_back(convOut(hs.back(), 3, 2, 1));
  ws.push_back(convOut(ws.back(), 3, 2, 1));
  for (int stage = 0; stage < 3; ++stage) {
    hs.push_back(convOut(hs.back(), 3, 2, 1));
    ws.push_back(convOut(ws.back(), 3, 2, 1));
  }
  for (size_t i = 1; i < hs.size(); ++i) {
    // 3x3 stride-1 pad-1 keeps the size; stride 2 halves it.
    benchmark::DoNotOptimize(s.isEqual(convOut(hs[i], 3, 1, 1), hs[i]));
    benchmark::DoNotOptimize(s.compare(hs[i], hs[i - 1]));
    benchmark::DoNotOptimize(s.compare(ws[i], ws[i - 1]));
    // Downsample branch (1x1, stride 2, pad 0) matches the main branch.
    if (i >= 3)
      benchmark::DoNotOptimize(s.isEqual(convOut(hs[i - 1], 1, 2, 0), hs[i]));
    // Feature-map element counts between stages.
    benchmark::DoNotOptimize(
        s.compare(n * 64 * hs[i] * ws[i], n * 64 * hs[i - 1] * ws[i - 1]));
    benchmark::DoNotOptimize(s.compare(hs[i], ws[i]));
  }
  benchmark::DoNotOptimize(s.compare(hs.back(), getAffineConstantExpr(1, ctx)));
}

/// Harder queries: non-monotone differences; the last three need Z3
/// (integer-only non-linear facts, floordivs under a relation).
void z3Queries(ShapeConstraintSolver &s, MLIRContext *ctx) {
  AffineExpr a = addSym(s, "a", 1, std::nullopt);
  AffineExpr b = addSym(s, "b", 1, std::nullopt);
  AffineExpr h = addSym(s, "h", 1, std::nullopt);
  AffineExpr x = addSym(s, "x", -1, std::nullopt);
  AffineExpr p = addSym(s, "p", 0, std::nullopt);
  AffineExpr q = addSym(s, "q", 0, std::nullopt);
  s.addGreaterOrEqual(p, q);
  benchmark::DoNotOptimize(s.compare(x * x, x));
  benchmark::DoNotOptimize(s.compare(p.floorDiv(2), q.floorDiv(2)));
  benchmark::DoNotOptimize(s.compare(p.ceilDiv(4) * 4, q));
  benchmark::DoNotOptimize(s.compare(a * b, a + b - 1));
  benchmark::DoNotOptimize(s.compare(a * a, a));
  benchmark::DoNotOptimize(s.compare(h, (h - 1).floorDiv(2) + 1));
  benchmark::DoNotOptimize(s.compare(h * 2, (h + 1).floorDiv(2) * 2));
  benchmark::DoNotOptimize(s.compare(a * b * h, a + b + h - 2));
  benchmark::DoNotOptimize(
      s.isEqual(((h + 1).floorDiv(2) + 1).floorDiv(2), (h + 3).floorDiv(4)));
  (void)ctx;
}

void report(benchmark::State &state, const SolverStats &st, int64_t iters) {
  auto avg = [&](double v) {
    return benchmark::Counter(v / static_cast<double>(iters));
  };
  state.counters["queries"] = avg(st.queries);
  state.counters["cache_hits"] = avg(st.cacheHits);
  state.counters["canonical_hits"] = avg(st.canonicalHits);
  state.counters["z3_calls"] = avg(st.z3Calls);
  state.counters["z3_timeouts"] = avg(st.z3Timeouts);
  state.counters["z3_ms"] = avg(st.z3TimeMs);
}

/// Fresh solver per iteration: the cost of one function's analysis.
template <void (*Queries)(ShapeConstraintSolver &, MLIRContext *)>
void BM_Fresh(benchmark::State &state) {
  MLIRContext ctx;
  SolverStats total;
  int64_t iters = 0;
  for (auto _ : state) {
    ShapeConstraintSolver solver(&ctx);
    Queries(solver, &ctx);
    const SolverStats &st = solver.getStats();
    total.queries += st.queries;
    total.cacheHits += st.cacheHits;
    total.canonicalHits += st.canonicalHits;
    total.z3Calls += st.z3Calls;
    total.z3Timeouts += st.z3Timeouts;
    total.z3TimeMs += st.z3TimeMs;
    ++iters;
  }
  report(state, total, iters);
}

BENCHMARK_TEMPLATE(BM_Fresh, transformerQueries)
    ->Name("transformer")
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_TEMPLATE(BM_Fresh, convQueries)
    ->Name("resnet_conv")
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_TEMPLATE(BM_Fresh, z3Queries)
    ->Name("hard")
    ->Unit(benchmark::kMicrosecond);

} // namespace

BENCHMARK_MAIN();
