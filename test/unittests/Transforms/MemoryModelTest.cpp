//===- MemoryModelTest.cpp - memory model on hand-built disc functions ----===//
//
// Byte expressions, views, stack buffers, dead ops, scratch buffers, live
// ranges under different orders, multiple results, the peak and its
// evaluation (docs/memory.md). The expected numbers are worked out by hand
// from the allocation rules, independently of the implementation.
//
//===----------------------------------------------------------------------===//
#include "disc/Transforms/MemoryModel.h"
#include "disc/InitAll.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

using namespace mlir;
using namespace mlir::disc;

namespace {

class MemoryModelTest : public ::testing::Test {
protected:
  MemoryModelTest() {
    DialectRegistry registry;
    registry.insert<func::FuncDialect, arith::ArithDialect, scf::SCFDialect>();
    registerAllDiscDialects(registry);
    ctx.appendDialectRegistry(registry);
    ctx.loadAllAvailableDialects();
  }

  /// Parses `body` as module text and builds the analyses of its first
  /// function.
  void load(StringRef text) {
    module = parseSourceString<ModuleOp>(text, ParserConfig(&ctx));
    ASSERT_TRUE(module);
    func = *module->getOps<func::FuncOp>().begin();
    ranges = collectDimRanges(*module);
    sa = std::make_unique<ShapeAnalysis>(func, ranges);
    sa->run();
    sa->mergeEqualSymbols();
    mm = std::make_unique<MemoryModel>(func, *sa);
  }

  /// The i-th top-level op in program order.
  Operation *op(unsigned i) { return mm->programOrder()[i]; }

  int64_t eval(AffineExpr e, llvm::StringMap<int64_t> dims) {
    std::optional<int64_t> v = mm->evaluate(e, dims);
    EXPECT_TRUE(v.has_value());
    return v.value_or(-1);
  }

  int64_t peak(const MemoryProfile &p, llvm::StringMap<int64_t> dims) {
    std::optional<int64_t> v = mm->evaluatePeak(p, dims);
    EXPECT_TRUE(v.has_value());
    return v.value_or(-1);
  }

  MLIRContext ctx;
  OwningOpRef<ModuleOp> module;
  func::FuncOp func;
  llvm::StringMap<DimRange> ranges;
  std::unique_ptr<ShapeAnalysis> sa;
  std::unique_ptr<MemoryModel> mm;
};

// exp, neg, add over [a, b] f32: three fresh buffers of a*b*4 (+64 padding).
constexpr const char *kChain = R"mlir(
func.func @f(%x: tensor<?x?xf32> {disc.dims = ["a", "b"]}) -> tensor<?x?xf32> {
  %e = disc.exp %x : tensor<?x?xf32>
  %n = disc.neg %e : tensor<?x?xf32>
  %y = disc.add %n, %e : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  return %y : tensor<?x?xf32>
}
)mlir";

TEST_F(MemoryModelTest, ElementwiseChainBytesAndLiveness) {
  load(kChain);
  llvm::StringMap<int64_t> dims{{"a", 3}, {"b", 5}};
  for (unsigned i = 0; i < 3; ++i) {
    const OpMemory &m = mm->getOpMemory(op(i));
    ASSERT_EQ(m.results.size(), 1u);
    EXPECT_EQ(m.results[0].kind, BufferKind::Alloc);
    EXPECT_EQ(eval(m.results[0].bytes, dims), 3 * 5 * 4 + 64);
    EXPECT_EQ(m.numAllocs, 1);
  }
  MemoryProfile p = mm->profile();
  ASSERT_EQ(p.liveAt.size(), 3u);
  // %e lives until the add (its last use); %n too; the result never dies.
  EXPECT_EQ(eval(p.liveAt[0], dims), 124);
  EXPECT_EQ(eval(p.liveAt[1], dims), 248);
  EXPECT_EQ(eval(p.liveAt[2], dims), 372);
  EXPECT_EQ(eval(p.liveAtExit, dims), 124);
  ASSERT_EQ(p.peakCandidates.size(), 1u);
  EXPECT_EQ(peak(p, dims), 372);
  EXPECT_EQ(p.numAllocs, 3);
  ASSERT_EQ(p.buffers.size(), 3u);
  EXPECT_EQ(p.buffers[0].def, 0u);
  EXPECT_EQ(p.buffers[0].lastUse, 2u);
  EXPECT_EQ(p.buffers[2].lastUse, 4u); // returned as itself: never freed
  // Symbolic: 3 * (a*b*4 + 64) for every a, b.
  AffineExpr a = getAffineSymbolExpr(0, &ctx), b = getAffineSymbolExpr(1, &ctx);
  EXPECT_TRUE(sa->getSolver().isEqual(p.peakCandidates[0], a * b * 12 + 192));
  std::string reason;
  EXPECT_TRUE(mm->isPredictable(p, &reason)) << reason;
}

TEST_F(MemoryModelTest, NoInPlaceReuseAtLastUse) {
  // The neg is the last use of %e, yet today's lowering gives the neg a
  // fresh buffer (no in-place reuse): both are live while it runs.
  load(R"mlir(
func.func @f(%x: tensor<?xf32> {disc.dims = ["n"]}) -> tensor<?xf32> {
  %e = disc.exp %x : tensor<?xf32>
  %y = disc.neg %e : tensor<?xf32>
  return %y : tensor<?xf32>
}
)mlir");
  const OpMemory &m = mm->getOpMemory(op(1));
  EXPECT_EQ(m.results[0].kind, BufferKind::Alloc);
  MemoryProfile p = mm->profile();
  EXPECT_EQ(peak(p, {{"n", 10}}), 2 * (40 + 64));
  EXPECT_EQ(eval(p.liveAtExit, {{"n", 10}}), 40 + 64);
}

TEST_F(MemoryModelTest, ViewsKeepTheirBufferAlive) {
  // %r is a view of %e: %e's buffer lives until %r's last use (the add),
  // and the reshape allocates nothing (its index shape is a stack buffer).
  load(R"mlir(
func.func @f(%x: tensor<?x4xf32> {disc.dims = ["n", 4]}) -> tensor<?xf32> {
  %e = disc.exp %x : tensor<?x4xf32>
  %s = disc.constant dense<[-1]> : tensor<1xi64>
  %r = disc.dynamic_reshape %e, %s : (tensor<?x4xf32>, tensor<1xi64>) -> tensor<?xf32>
  %t = disc.neg %r : tensor<?xf32>
  %y = disc.add %t, %r : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  return %y : tensor<?xf32>
}
)mlir");
  const OpMemory &view = mm->getOpMemory(op(2));
  EXPECT_EQ(view.results[0].kind, BufferKind::View);
  EXPECT_EQ(view.results[0].operand, 0);
  EXPECT_EQ(view.numAllocs, 0);
  EXPECT_EQ(mm->getBufferRoot(op(2)->getResult(0)), op(0)->getResult(0));
  EXPECT_FALSE(mm->getBufferRoot(func.getArgument(0)));
  EXPECT_EQ(mm->getOpMemory(op(1)).results[0].kind, BufferKind::External);
  MemoryProfile p = mm->profile();
  llvm::StringMap<int64_t> dims{{"n", 2}};
  int64_t buf = 2 * 4 * 4 + 64;
  EXPECT_EQ(p.buffers[0].lastUse, 4u);         // the add uses the view
  EXPECT_EQ(eval(p.liveAt[3], dims), 2 * buf); // %e (via %r) and %t
  EXPECT_EQ(eval(p.liveAt[4], dims), 3 * buf);
  EXPECT_EQ(eval(p.liveAtExit, dims), buf);
}

TEST_F(MemoryModelTest, ReshapeOfASliceCopies) {
  // A slice with constant positive steps is a strided view; reshaping it
  // needs a dense buffer, so the reshape allocates.
  load(R"mlir(
func.func @f(%x: tensor<?x8xf32> {disc.dims = ["n", 8]}) -> tensor<?xf32> {
  %e = disc.exp %x : tensor<?x8xf32>
  %st = disc.constant dense<0> : tensor<1xi64>
  %en = disc.constant dense<4> : tensor<1xi64>
  %one = disc.constant dense<1> : tensor<1xi64>
  %sl = disc.slice %e, %st, %en, %one {axes = array<i64: 1>} : (tensor<?x8xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x4xf32>
  %s = disc.constant dense<[-1]> : tensor<1xi64>
  %r = disc.dynamic_reshape %sl, %s : (tensor<?x4xf32>, tensor<1xi64>) -> tensor<?xf32>
  return %r : tensor<?xf32>
}
)mlir");
  EXPECT_EQ(mm->getOpMemory(op(4)).results[0].kind, BufferKind::View);
  EXPECT_FALSE(mm->isIdentityLayout(op(4)->getResult(0)));
  const OpMemory &r = mm->getOpMemory(op(6));
  EXPECT_EQ(r.results[0].kind, BufferKind::Alloc);
  llvm::StringMap<int64_t> dims{{"n", 3}};
  EXPECT_EQ(eval(r.results[0].bytes, dims), 3 * 4 * 4 + 64);
  MemoryProfile p = mm->profile();
  // %e (n*8 floats) is freed after the copy. The returned value is a
  // reshape (a view) of the copy: cloned at the return (48 payload bytes),
  // then the copy dies.
  EXPECT_EQ(peak(p, dims), (3 * 8 * 4 + 64) + (3 * 4 * 4 + 64));
  ASSERT_EQ(p.exitPoints.size(), 1u);
  EXPECT_EQ(eval(p.exitPoints[0], dims), (3 * 4 * 4 + 64) + 48);
  EXPECT_EQ(eval(p.liveAtExit, dims), 48);
}

TEST_F(MemoryModelTest, SplitReshapeOfASliceIsAView) {
  // A reshape that only splits a dim ([n, 4] -> [n, 2, 2]) is a
  // tensor.expand_shape of the strided slice: a view, no allocation; the
  // result keeps the slice's strided layout. The same reshape returned
  // (the return needs a dense buffer) copies.
  load(R"mlir(
func.func @f(%x: tensor<?x8xf32> {disc.dims = ["n", 8]}) -> (tensor<?x2x2xf32>, tensor<?x2x2xf32>) {
  %e = disc.exp %x : tensor<?x8xf32>
  %st = disc.constant dense<0> : tensor<1xi64>
  %en = disc.constant dense<4> : tensor<1xi64>
  %one = disc.constant dense<1> : tensor<1xi64>
  %sl = disc.slice %e, %st, %en, %one {axes = array<i64: 1>} : (tensor<?x8xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<?x4xf32>
  %s = disc.constant dense<[0, 2, 2]> : tensor<3xi64>
  %r = disc.dynamic_reshape %sl, %s : (tensor<?x4xf32>, tensor<3xi64>) -> tensor<?x2x2xf32>
  %n = disc.neg %r : tensor<?x2x2xf32>
  %r2 = disc.dynamic_reshape %sl, %s : (tensor<?x4xf32>, tensor<3xi64>) -> tensor<?x2x2xf32>
  return %n, %r2 : tensor<?x2x2xf32>, tensor<?x2x2xf32>
}
)mlir");
  EXPECT_EQ(mm->getOpMemory(op(6)).results[0].kind, BufferKind::View);
  EXPECT_FALSE(mm->isIdentityLayout(op(6)->getResult(0)));
  EXPECT_EQ(mm->getOpMemory(op(7)).results[0].kind, BufferKind::Alloc);
  EXPECT_EQ(mm->getOpMemory(op(8)).results[0].kind, BufferKind::Alloc);
}

TEST_F(MemoryModelTest, ReturnedViewsInputsAndConstantsAreCloned) {
  // The function owns its results: a returned view, input or constant is
  // copied into an allocation of exactly its payload at the return; the
  // buffer behind a returned view dies after its clone.
  load(R"mlir(
func.func @f(%x: tensor<?x4xf32> {disc.dims = ["n", 4]}) -> (tensor<?xf32>, tensor<?x4xf32>, tensor<2x300xf32>, tensor<?xf32>) {
  %s = disc.constant dense<[-1]> : tensor<1xi64>
  %r = disc.dynamic_reshape %x, %s : (tensor<?x4xf32>, tensor<1xi64>) -> tensor<?xf32>
  %c = disc.constant dense<1.5> : tensor<2x300xf32>
  %e = disc.exp %x : tensor<?x4xf32>
  %v = disc.dynamic_reshape %e, %s : (tensor<?x4xf32>, tensor<1xi64>) -> tensor<?xf32>
  return %r, %x, %c, %v : tensor<?xf32>, tensor<?x4xf32>, tensor<2x300xf32>, tensor<?xf32>
}
)mlir");
  llvm::StringMap<int64_t> dims{{"n", 3}};
  int64_t e = 48 + 64;
  MemoryProfile p = mm->profile();
  ASSERT_EQ(p.exitPoints.size(), 4u);
  EXPECT_EQ(eval(p.exitPoints[0], dims), e + 48);
  EXPECT_EQ(eval(p.exitPoints[1], dims), e + 96);
  EXPECT_EQ(eval(p.exitPoints[2], dims), e + 96 + 2400);
  EXPECT_EQ(eval(p.exitPoints[3], dims), e + 96 + 2400 + 48);
  EXPECT_EQ(eval(p.liveAtExit, dims), 96 + 2400 + 48); // %e freed
  EXPECT_EQ(peak(p, dims), e + 96 + 2400 + 48);
  EXPECT_EQ(p.numAllocs, 5);
}

TEST_F(MemoryModelTest, MultipleResultsAndSmallStaticBuffers) {
  // Two function results, one a view of an intermediate: both stay live
  // to the end. The static 2x2 exp result is small and not returned: on
  // the stack; the returned static one is allocated.
  load(R"mlir(
func.func @f(%x: tensor<?x4xf32> {disc.dims = ["n", 4]}, %w: tensor<2x2xf32>) -> (tensor<?x4xf32>, tensor<?xf32>, tensor<2x2xf32>) {
  %small = disc.exp %w : tensor<2x2xf32>
  %ret = disc.neg %small : tensor<2x2xf32>
  %e = disc.exp %x : tensor<?x4xf32>
  %s = disc.constant dense<[-1]> : tensor<1xi64>
  %r = disc.dynamic_reshape %e, %s : (tensor<?x4xf32>, tensor<1xi64>) -> tensor<?xf32>
  %t = disc.neg %x : tensor<?x4xf32>
  %u = disc.exp %t : tensor<?x4xf32>
  return %u, %r, %ret : tensor<?x4xf32>, tensor<?xf32>, tensor<2x2xf32>
}
)mlir");
  EXPECT_EQ(mm->getOpMemory(op(0)).results[0].kind, BufferKind::Stack);
  EXPECT_EQ(mm->getOpMemory(op(1)).results[0].kind, BufferKind::Alloc);
  MemoryProfile p = mm->profile();
  llvm::StringMap<int64_t> dims{{"n", 5}};
  int64_t big = 5 * 4 * 4 + 64, ret = 16 + 64;
  // While %u is computed: %ret, %e (returned through %r), %t and %u.
  EXPECT_EQ(eval(p.liveAt[6], dims), ret + 3 * big);
  // The view %r is cloned at the return (80 payload bytes), then %e dies.
  ASSERT_EQ(p.exitPoints.size(), 1u);
  EXPECT_EQ(eval(p.exitPoints[0], dims), ret + 2 * big + 80);
  EXPECT_EQ(eval(p.liveAtExit, dims), ret + big + 80);
  EXPECT_EQ(peak(p, dims), ret + 3 * big);
  EXPECT_EQ(p.numAllocs, 5);
}

TEST_F(MemoryModelTest, OrderChangesLiveRangesAndPeak) {
  // Two independent branches reduced to small results: computing each
  // branch to its end before starting the other keeps fewer big buffers.
  load(R"mlir(
func.func @f(%x: tensor<?x?xf32> {disc.dims = ["a", "b"]}) -> tensor<?xf32> {
  %p = disc.exp %x : tensor<?x?xf32>
  %q = disc.neg %x : tensor<?x?xf32>
  %rp = disc.reduce sum, %p {dimensions = array<i64: 1>, keep_dims = false} : (tensor<?x?xf32>) -> tensor<?xf32>
  %rq = disc.reduce sum, %q {dimensions = array<i64: 1>, keep_dims = false} : (tensor<?x?xf32>) -> tensor<?xf32>
  %y = disc.add %rp, %rq : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  return %y : tensor<?xf32>
}
)mlir");
  llvm::StringMap<int64_t> dims{{"a", 4}, {"b", 100}};
  int64_t big = 4 * 100 * 4 + 64, small = 4 * 4 + 64;
  MemoryProfile program = mm->profile();
  EXPECT_EQ(peak(program, dims), 2 * big + small);
  SmallVector<Operation *> order = {op(0), op(2), op(1), op(3), op(4)};
  MemoryProfile better = mm->profile(order);
  EXPECT_EQ(peak(better, dims), big + 2 * small);
  EXPECT_EQ(better.buffers[0].lastUse, 1u); // %p dies at its reduce
}

TEST_F(MemoryModelTest, DeadOpsAllocateNothing) {
  load(R"mlir(
func.func @f(%x: tensor<?xf32> {disc.dims = ["n"]}) -> tensor<?xf32> {
  %dead = disc.exp %x : tensor<?xf32>
  %dead2 = disc.neg %dead : tensor<?xf32>
  %y = disc.neg %x : tensor<?xf32>
  return %y : tensor<?xf32>
}
)mlir");
  EXPECT_TRUE(mm->isDead(op(0)));
  EXPECT_TRUE(mm->isDead(op(1)));
  EXPECT_FALSE(mm->isDead(op(2)));
  MemoryProfile p = mm->profile();
  EXPECT_EQ(p.numAllocs, 1);
  EXPECT_EQ(peak(p, {{"n", 7}}), 28 + 64);
}

TEST_F(MemoryModelTest, PaddedConvFreesItsInputEarly) {
  // conv with pad 1: a padded copy [n, 3, h+2, w+2] is made first; the
  // input (an intermediate used only here) is freed after the copy, then
  // the result [n, 8, h, w] is allocated.
  load(R"mlir(
func.func @f(%x: tensor<?x3x?x?xf32> {disc.dims = ["n", 3, "h", "w"]}) -> tensor<?x8x?x?xf32> {
  %e = disc.exp %x : tensor<?x3x?x?xf32>
  %w = disc.constant dense<1.0> : tensor<8x3x3x3xf32>
  %c = disc.conv %e, %w {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, feature_group_count = 1 : i64} : (tensor<?x3x?x?xf32>, tensor<8x3x3x3xf32>) -> tensor<?x8x?x?xf32>
  return %c : tensor<?x8x?x?xf32>
}
)mlir");
  llvm::StringMap<int64_t> dims{{"n", 1}, {"h", 10}, {"w", 12}};
  const OpMemory &m = mm->getOpMemory(op(2));
  EXPECT_EQ(eval(m.preScratchBytes, dims), 3 * 12 * 14 * 4 + 64);
  EXPECT_EQ(m.numAllocs, 2);
  int64_t in = 3 * 10 * 12 * 4 + 64, padded = 3 * 12 * 14 * 4 + 64,
          out = 8 * 10 * 12 * 4 + 64;
  MemoryProfile p = mm->profile();
  ASSERT_EQ(p.livePoints[2].size(), 2u);
  EXPECT_EQ(eval(p.livePoints[2][0], dims), in + padded);
  EXPECT_EQ(eval(p.livePoints[2][1], dims), padded + out);
  EXPECT_EQ(peak(p, dims), std::max(in + padded, padded + out));
  EXPECT_EQ(eval(p.liveAtExit, dims), out);
}

TEST_F(MemoryModelTest, DataDependentSizeIsNotPredictable) {
  // The length of a range with a run-time limit is known only at run time.
  load(R"mlir(
func.func @f(%n: tensor<i64>) -> tensor<?xf32> {
  %z = disc.constant dense<0> : tensor<i64>
  %d = disc.constant dense<1> : tensor<i64>
  %r = disc.range %z, %n, %d : (tensor<i64>, tensor<i64>, tensor<i64>) -> tensor<?xi64>
  %f = disc.convert %r : (tensor<?xi64>) -> tensor<?xf32>
  return %f : tensor<?xf32>
}
)mlir");
  MemoryProfile p = mm->profile();
  std::string reason;
  EXPECT_FALSE(mm->isPredictable(p, &reason));
  EXPECT_NE(reason.find("disc.range"), std::string::npos) << reason;
  llvm::json::Object j = mm->toJson(p);
  EXPECT_EQ(j.getBoolean("predictable"), false);
  EXPECT_TRUE(j.getString("reason").has_value());
}

TEST_F(MemoryModelTest, LoopsGiveAnUpperBound) {
  // A recurrent layer as the importer builds it: the loop body allocates
  // a state per iteration. The loop's point counts the result twice (the
  // carried value and the init copy bufferization may make) and one
  // iteration's allocations on top: an upper bound (docs/memory.md).
  load(R"mlir(
func.func @f(%x: tensor<?x4xf32> {disc.dims = ["b", 4]}, %n: index) -> tensor<?x4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%h = %x) -> (tensor<?x4xf32>) {
    %t = disc.tanh %h : tensor<?x4xf32>
    scf.yield %t : tensor<?x4xf32>
  }
  return %r : tensor<?x4xf32>
}
)mlir");
  MemoryProfile p = mm->profile();
  std::string reason, why;
  ASSERT_TRUE(mm->isPredictable(p, &reason)) << reason;
  EXPECT_TRUE(mm->isUpperBound(p, &why));
  EXPECT_NE(why.find("scf.for"), std::string::npos) << why;
  // 2 * (b*16 + 64) + (b*16 + 64) at b = 3.
  EXPECT_EQ(peak(p, {{"b", 3}}), 3 * (3 * 16 + 64));
}

TEST_F(MemoryModelTest, BranchesTakeTheLargerOne) {
  // Each branch of an scf.if is a point of its own: the peak is the larger
  // branch's (two buffers in `then`, one in `else`), not their sum.
  load(R"mlir(
func.func @f(%x: tensor<?x4xf32> {disc.dims = ["b", 4]}, %c: i1) -> tensor<?x4xf32> {
  %r = scf.if %c -> (tensor<?x4xf32>) {
    %t = disc.tanh %x : tensor<?x4xf32>
    %u = disc.tanh %t : tensor<?x4xf32>
    scf.yield %u : tensor<?x4xf32>
  } else {
    %t = disc.tanh %x : tensor<?x4xf32>
    scf.yield %t : tensor<?x4xf32>
  }
  return %r : tensor<?x4xf32>
}
)mlir");
  MemoryProfile p = mm->profile();
  std::string reason;
  ASSERT_TRUE(mm->isPredictable(p, &reason)) << reason;
  EXPECT_TRUE(mm->isUpperBound(p));
  // The result plus the then-branch's two buffers.
  EXPECT_EQ(peak(p, {{"b", 3}}), 3 * (3 * 16 + 64));
}

} // namespace
