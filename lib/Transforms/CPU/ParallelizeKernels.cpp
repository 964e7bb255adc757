//===- ParallelizeKernels.cpp - disc-parallelize-kernels ------------------===//
//
// Outlined loop nests on the session's threads (docs/performance.md,
// "Threads"), after disc-outline-kernels, on linalg on buffers: a kernel
// `disc_kernel_<n>` whose loop nest is one linalg op with a parallel outer
// loop that indexes every output (so iterations of that loop write disjoint
// elements) runs over a chunk [lo, hi) of that loop, or of the first two
// such loops flattened row-major (a batch of 1 leaves the second to split),
// given as two more `index` arguments (linalg's TilingInterface: subviews
// of the operands, linalg.index offset). A third new argument, computed at
// the call from the other loops' sizes, is the smallest chunk worth a
// thread; the one call passes [0, n). The kernel is marked `disc.parallel`
// (disc-lower-parallel-calls calls it through the runtime's parallel_for).
// Kernels with little static work (below kMinParallelIterations), with
// anything but pure arithmetic in their body (run-time checks, calls), or
// whose inputs may alias an output through another view or indexing stay
// serial. The row loop of disc-stitch-rows (kRowLoopAttr, rows independent
// by construction) runs in chunks of its rows.
//
//===----------------------------------------------------------------------===
#include "disc/Transforms/CPU/Passes.h"

#include "Utils.h"

#include "disc/Target/RuntimeSymbols.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/TilingInterface.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::disc {
#define GEN_PASS_DEF_DISCPARALLELIZEKERNELS
#include "disc/Transforms/CPU/Passes.h.inc"
} // namespace mlir::disc

using namespace mlir;

/// Kernels with fewer static iterations (all loops) stay serial; a chunk
/// gets at least kMinChunkIterations iterations. A parallel region costs a
/// few microseconds (wake-up and join of the OpenMP team).
static constexpr int64_t kMinParallelIterations = 32768;
static constexpr int64_t kMinChunkIterations = 16384;

/// Whether loop `d` of `root` is parallel and indexes every output as a
/// plain dim (so different values of it write disjoint elements).
static bool isChunkable(linalg::LinalgOp root, unsigned d) {
  if (d >= root.getNumLoops() ||
      root.getIteratorTypesArray()[d] != utils::IteratorType::parallel)
    return false;
  return llvm::all_of(root.getDpsInitsMutable(), [&](OpOperand &init) {
    return llvm::any_of(root.getMatchingIndexingMap(&init).getResults(),
                        [&](AffineExpr e) {
                          auto dim = dyn_cast<AffineDimExpr>(e);
                          return dim && dim.getPosition() == d;
                        });
  });
}

/// The kernel's loop nest when it can run in chunks of its outer loop.
static linalg::LinalgOp parallelRoot(func::FuncOp kernel) {
  linalg::LinalgOp root;
  for (Operation &op : kernel.getBody().front()) {
    if (isa<func::ReturnOp>(op) ||
        (op.getNumRegions() == 0 && isMemoryEffectFree(&op)) ||
        isa<memref::GetGlobalOp>(op))
      continue;
    auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
    if (!linalgOp || root)
      return {};
    root = linalgOp;
  }
  if (!root || !root.hasPureBufferSemantics() || root.getNumLoops() == 0 ||
      !isa<TilingInterface>(root.getOperation()) || !isChunkable(root, 0))
    return {};
  // Only pure arithmetic in the body: no calls (run-time checks report
  // through the context and unwind, which a worker thread must not).
  bool pure = true;
  root->walk([&](Operation *inner) {
    if (inner != root.getOperation() &&
        !isa<linalg::YieldOp, linalg::IndexOp>(inner) &&
        !isMemoryEffectFree(inner))
      pure = false;
  });
  return pure ? root : linalg::LinalgOp();
}

/// Whether an input of `root` may alias an output under another indexing
/// (another chunk's writes would then reach this chunk's reads).
static bool mayConflict(linalg::LinalgOp root, func::CallOp call) {
  auto outside = [&](Value v) -> Value {
    auto arg = dyn_cast<BlockArgument>(v);
    if (!arg || arg.getOwner()->getParentOp() != root->getParentOp())
      return Value();
    return disc::bufferRoot(call.getOperand(arg.getArgNumber()));
  };
  for (OpOperand &init : root.getDpsInitsMutable()) {
    Value out = outside(init.get());
    for (OpOperand *in : root.getDpsInputOperands()) {
      if (!isa<MemRefType>(in->get().getType()))
        continue;
      if (in->get().getDefiningOp<memref::GetGlobalOp>())
        continue; // constants are never written
      Value src = outside(in->get());
      if (out && src && out != src)
        continue;
      // Same buffer (or unknown): only the very same view read at the
      // element it writes (an in-place elementwise op) is safe.
      if (in->get() != init.get() ||
          root.getMatchingIndexingMap(in) != root.getMatchingIndexingMap(&init))
        return true;
    }
  }
  return false;
}

/// Runs `root` over the chunk [lo, hi) (two new arguments of `kernel`)
/// of its first `pos.size()` loops, flattened row-major; the call passes
/// [0, n), n = the product of dims `pos` of argument `out`, and a third
/// new argument that the kernel does not read: the smallest chunk worth a
/// thread (kMinChunkIterations over the iterations of one chunked step,
/// at least 1), computed at the call from the sizes of the other loops.
static LogicalResult tile(func::FuncOp kernel, linalg::LinalgOp root,
                          func::CallOp call, unsigned out,
                          ArrayRef<unsigned> pos) {
  MLIRContext *ctx = kernel.getContext();
  Block &body = kernel.getBody().front();
  Type indexType = IndexType::get(ctx);
  Location loc = root.getLoc();
  OpBuilder b(root);
  auto tiling = cast<TilingInterface>(root.getOperation());
  SmallVector<Range> domain = tiling.getIterationDomain(b);
  Value lo = body.addArgument(indexType, loc);
  Value hi = body.addArgument(indexType, loc);
  body.addArgument(indexType, loc); // the smallest chunk
  kernel.setType(FunctionType::get(ctx, body.getArgumentTypes(), {}));
  SmallVector<OpFoldResult> offsets, sizes;
  for (Range &r : domain) {
    offsets.push_back(r.offset);
    sizes.push_back(r.size);
  }
  if (pos.size() == 1) {
    offsets[0] = lo;
    sizes[0] = arith::SubIOp::create(b, loc, hi, lo).getResult();
  } else {
    // Rows r of loop 0 that [lo, hi) touches, and in each the columns
    // [max(lo - r*m, 0), min(hi - r*m, m)) of loop 1 (m its trip count).
    Value m = getValueOrCreateConstantIndexOp(b, loc, domain[1].size);
    Value one = arith::ConstantIndexOp::create(b, loc, 1);
    Value zero = arith::ConstantIndexOp::create(b, loc, 0);
    Value first = arith::DivUIOp::create(b, loc, lo, m);
    Value last = arith::CeilDivUIOp::create(b, loc, hi, m);
    auto rows = scf::ForOp::create(b, loc, first, last, one);
    b.setInsertionPoint(rows.getBody()->getTerminator());
    Value r = rows.getInductionVar();
    Value base = arith::MulIOp::create(b, loc, r, m);
    Value begin = arith::MaxSIOp::create(
        b, loc, arith::SubIOp::create(b, loc, lo, base), zero);
    Value end = arith::MinSIOp::create(
        b, loc, arith::SubIOp::create(b, loc, hi, base), m);
    offsets[0] = r;
    sizes[0] = b.getIndexAttr(1);
    offsets[1] = begin;
    sizes[1] = arith::SubIOp::create(b, loc, end, begin).getResult();
  }
  FailureOr<TilingResult> tiled =
      tiling.getTiledImplementation(b, offsets, sizes);
  if (failed(tiled))
    return root.emitError("disc-parallelize-kernels: tiling failed");
  // Sizes of the other loops at the call: constants, or dims of
  // arguments (others, unknown there, count as 1).
  OpBuilder cb(call);
  Value inner = arith::ConstantIndexOp::create(cb, loc, 1);
  for (const Range &r : ArrayRef<Range>(domain).drop_front(pos.size())) {
    Value size;
    if (std::optional<int64_t> c = getConstantIntValue(r.size)) {
      size = arith::ConstantIndexOp::create(cb, loc, *c);
    } else if (auto dim = cast<Value>(r.size).getDefiningOp<memref::DimOp>()) {
      auto arg = dyn_cast<BlockArgument>(dim.getSource());
      std::optional<int64_t> index = dim.getConstantIndex();
      if (arg && arg.getOwner() == &body && index)
        size = memref::DimOp::create(
            cb, loc, call.getOperand(arg.getArgNumber()), *index);
    }
    if (size)
      inner = arith::MulIOp::create(cb, loc, inner, size);
  }
  Value one = arith::ConstantIndexOp::create(cb, loc, 1);
  Value chunk = arith::CeilDivUIOp::create(
      cb, loc, arith::ConstantIndexOp::create(cb, loc, kMinChunkIterations),
      arith::MaxUIOp::create(cb, loc, inner, one));
  root->erase();
  kernel->setAttr(disc::kParallelAttr, UnitAttr::get(ctx));
  // [0, n) at the call.
  Value outBuffer = call.getOperand(out);
  Value total;
  for (unsigned p : pos) {
    int64_t size = cast<MemRefType>(outBuffer.getType()).getDimSize(p);
    Value dim = ShapedType::isDynamic(size)
                    ? memref::DimOp::create(cb, loc, outBuffer, p).getResult()
                    : arith::ConstantIndexOp::create(cb, loc, size).getResult();
    total =
        total ? arith::MulIOp::create(cb, loc, total, dim).getResult() : dim;
  }
  SmallVector<Value> operands(call.getOperands());
  operands.push_back(arith::ConstantIndexOp::create(cb, loc, 0));
  operands.push_back(total);
  operands.push_back(chunk);
  func::CallOp::create(cb, call.getLoc(), kernel, operands);
  call->erase();
  return success();
}

/// The kernel's loop over rows (disc-stitch-rows, kRowLoopAttr) when it
/// can run in chunks: the body holds pure ops and that one loop, from 0 by
/// 1, whose body holds views and linalg nests of pure arithmetic only.
static scf::ForOp rowLoopRoot(func::FuncOp kernel) {
  scf::ForOp root;
  for (Operation &op : kernel.getBody().front()) {
    if (isa<func::ReturnOp>(op) ||
        (op.getNumRegions() == 0 && isMemoryEffectFree(&op)) ||
        isa<memref::GetGlobalOp>(op))
      continue;
    auto loop = dyn_cast<scf::ForOp>(op);
    if (!loop || root || !loop->hasAttr(disc::kRowLoopAttr))
      return {};
    root = loop;
  }
  if (!root || root.getNumResults() != 0 ||
      !isConstantIntValue(root.getLowerBound(), 0) ||
      !isConstantIntValue(root.getStep(), 1))
    return {};
  bool pure = true;
  root->walk([&](Operation *inner) {
    if (inner != root.getOperation() &&
        !isa<linalg::LinalgOp, linalg::YieldOp, scf::YieldOp>(inner) &&
        !isMemoryEffectFree(inner))
      pure = false;
  });
  return pure ? root : scf::ForOp();
}

/// Runs the row loop `root` of `kernel` over a chunk [lo, hi) of its rows
/// (two new arguments, and a third: the smallest chunk worth a thread,
/// kMinChunkIterations over the most elements per row of a buffer the loop
/// reads or writes); the call passes [0, rows). The rows are independent
/// (disc-stitch-rows writes only the row's own elements of allocations).
/// Returns false, changing nothing, when the row count or the buffers are
/// unknown at the call, or the work is statically small.
static bool chunkRows(func::FuncOp kernel, scf::ForOp root, func::CallOp call) {
  Block &body = kernel.getBody().front();
  // The row count at the call: an argument or a constant.
  Value ub = root.getUpperBound();
  std::optional<int64_t> staticRows = getConstantIntValue(ub);
  auto ubArg = dyn_cast<BlockArgument>(ub);
  if (!staticRows && (!ubArg || ubArg.getOwner() != &body))
    return false;
  // The buffers the loop reads or writes (their elements per row size a
  // chunk: a row kernel may write only one value per row).
  llvm::SetVector<BlockArgument> buffers;
  root->walk([&](linalg::LinalgOp nest) {
    for (OpOperand &operand : nest->getOpOperands()) {
      Value v = operand.get();
      if (!isa<MemRefType>(v.getType()))
        continue;
      while (Operation *def = v.getDefiningOp()) {
        if (auto view = dyn_cast<ViewLikeOpInterface>(def))
          v = view.getViewSource();
        else if (isa<memref::CollapseShapeOp, memref::ExpandShapeOp>(def))
          v = def->getOperand(0);
        else
          break;
      }
      if (auto arg = dyn_cast<BlockArgument>(v); arg && arg.getOwner() == &body)
        buffers.insert(arg);
    }
  });
  if (buffers.empty())
    return false;
  if (staticRows &&
      (*staticRows < 2 || llvm::all_of(buffers, [](BlockArgument a) {
        auto t = cast<MemRefType>(a.getType());
        return t.hasStaticShape() &&
               t.getNumElements() < kMinParallelIterations;
      })))
    return false;
  MLIRContext *ctx = kernel.getContext();
  Location loc = root.getLoc();
  Type indexType = IndexType::get(ctx);
  Value lo = body.addArgument(indexType, loc);
  Value hi = body.addArgument(indexType, loc);
  body.addArgument(indexType, loc); // the smallest chunk
  kernel.setType(FunctionType::get(ctx, body.getArgumentTypes(), {}));
  root.setLowerBound(lo);
  root.setUpperBound(hi);
  kernel->setAttr(disc::kParallelAttr, UnitAttr::get(ctx));
  OpBuilder cb(call);
  Value rows = staticRows ? arith::ConstantIndexOp::create(cb, loc, *staticRows)
                          : call.getOperand(ubArg.getArgNumber());
  // Elements per row: the most of any buffer.
  Value one = arith::ConstantIndexOp::create(cb, loc, 1);
  Value perRow = one;
  for (BlockArgument arg : buffers) {
    Value buffer = call.getOperand(arg.getArgNumber());
    Value total = one;
    for (int64_t d = 0; d < cast<MemRefType>(arg.getType()).getRank(); ++d)
      total = arith::MulIOp::create(cb, loc, total,
                                    memref::DimOp::create(cb, loc, buffer, d));
    perRow = arith::MaxUIOp::create(
        cb, loc, perRow,
        arith::DivUIOp::create(cb, loc, total,
                               arith::MaxUIOp::create(cb, loc, rows, one)));
  }
  Value chunk = arith::CeilDivUIOp::create(
      cb, loc, arith::ConstantIndexOp::create(cb, loc, kMinChunkIterations),
      perRow);
  SmallVector<Value> operands(call.getOperands());
  operands.push_back(arith::ConstantIndexOp::create(cb, loc, 0));
  operands.push_back(rows);
  operands.push_back(chunk);
  func::CallOp::create(cb, call.getLoc(), kernel, operands);
  call->erase();
  return true;
}

namespace {
struct ParallelizeKernelsPass
    : public disc::impl::DiscParallelizeKernelsBase<ParallelizeKernelsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTableCollection tables;
    SymbolUserMap users(tables, module);
    for (auto kernel : llvm::to_vector(module.getOps<func::FuncOp>())) {
      if (kernel.isExternal() ||
          !kernel.getName().starts_with(disc::kKernelPrefix))
        continue;
      ArrayRef<Operation *> calls = users.getUsers(kernel);
      if (calls.size() != 1 || !isa<func::CallOp>(calls[0]))
        continue;
      auto call = cast<func::CallOp>(calls[0]);
      if (scf::ForOp rows = rowLoopRoot(kernel)) {
        chunkRows(kernel, rows, call);
        continue;
      }
      linalg::LinalgOp root = parallelRoot(kernel);
      if (!root || mayConflict(root, call))
        continue;
      // The trip counts come from the dims of an output (an argument).
      OpOperand &init = *root.getDpsInitsMutable().begin();
      auto outArg = dyn_cast<BlockArgument>(init.get());
      if (!outArg || outArg.getOwner() != &kernel.getBody().front())
        continue;
      // The chunked range: loop 0, or loops 0 and 1 flattened when both
      // can be chunked (a batch of 1 leaves the second to split).
      unsigned flat = isChunkable(root, 1) ? 2 : 1;
      SmallVector<unsigned> pos;
      for (unsigned d = 0; d < flat; ++d)
        for (auto [i, e] :
             llvm::enumerate(root.getMatchingIndexingMap(&init).getResults()))
          if (auto dim = dyn_cast<AffineDimExpr>(e);
              dim && dim.getPosition() == d) {
            pos.push_back(i);
            break;
          }
      SmallVector<int64_t> ranges = root.getStaticLoopRanges();
      // Static work, and the iterations of one chunked step when known.
      int64_t outer = 1, inner = 1;
      bool outerStatic = true, innerStatic = true;
      for (auto [d, r] : llvm::enumerate(ranges)) {
        bool isOuter = d < flat;
        if (ShapedType::isDynamic(r))
          (isOuter ? outerStatic : innerStatic) = false;
        else
          (isOuter ? outer : inner) *= std::max<int64_t>(r, 1);
      }
      if (outerStatic && innerStatic && outer * inner < kMinParallelIterations)
        continue;
      if (outerStatic && innerStatic &&
          outer < 2 * ((kMinChunkIterations + inner - 1) / inner))
        continue;
      if (failed(tile(kernel, root, call, outArg.getArgNumber(), pos)))
        signalPassFailure();
    }
  }
};
} // namespace
