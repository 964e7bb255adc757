//===- ParallelKernels.cpp - Outlined loop nests on the session's threads -===//
//
// Two passes of the CPU pipeline (docs/performance.md, "Threads"):
//
// `disc-parallelize-kernels` (after disc-outline-kernels, on linalg on
// buffers): a kernel `disc_kernel_<n>` whose loop nest is one linalg op
// with a parallel outer loop that indexes every output (so iterations of
// that loop write disjoint elements) runs over a chunk [lo, hi) of that
// loop, or of the first two such loops flattened row-major (a batch of 1
// leaves the second to split), given as two more `index` arguments
// (linalg's TilingInterface: subviews of the operands, linalg.index
// offset). A third new argument, computed at the call from the other
// loops' sizes, is the smallest chunk worth a thread; the one call passes
// [0, n). The kernel is marked `disc.parallel`. Kernels with little static
// work (below kMinParallelIterations), with anything but pure arithmetic
// in their body (run-time checks, calls), or whose inputs may alias an
// output through another view or indexing stay serial.
//
// `disc-lower-parallel-calls` (after the lowering to the LLVM dialect):
// each call of a marked kernel becomes a call of the model's
// `disc_parallel_for(body, env, n, min_chunk)` (ModelEmitter's wrapper,
// forwarding to `disc_ral_context.parallel_for`): the call's arguments
// go into a stack struct `env`, and the body `disc_parallel_body_<n>(env,
// lo, hi)` loads them and calls the kernel on [lo, hi). A chunk computes its
// elements exactly as the whole loop does (same inner loops), so results do
// not depend on the number of threads; nothing is allocated in a chunk.
//
//===----------------------------------------------------------------------===//
#include "disc/Pipelines/CpuPipeline.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/TilingInterface.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "mlir/Pass/Pass.h"

using namespace mlir;

namespace {
/// Kernels with fewer static iterations (all loops) stay serial; a chunk
/// gets at least kMinChunkIterations iterations. A parallel region costs a
/// few microseconds (wake-up and join of the OpenMP team).
constexpr int64_t kMinParallelIterations = 32768;
constexpr int64_t kMinChunkIterations = 16384;

constexpr StringLiteral kParallelAttr = "disc.parallel";

struct ParallelizeKernelsPass
    : public PassWrapper<ParallelizeKernelsPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(ParallelizeKernelsPass)
  StringRef getArgument() const final { return "disc-parallelize-kernels"; }
  StringRef getDescription() const final {
    return "Run the outer parallel loop of outlined kernels in chunks";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry
        .insert<arith::ArithDialect, memref::MemRefDialect, scf::SCFDialect>();
  }

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
        if (in->get() != init.get() || root.getMatchingIndexingMap(in) !=
                                           root.getMatchingIndexingMap(&init))
          return true;
      }
    }
    return false;
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTableCollection tables;
    SymbolUserMap users(tables, module);
    for (auto kernel : llvm::to_vector(module.getOps<func::FuncOp>())) {
      if (kernel.isExternal() || !kernel.getName().starts_with("disc_kernel_"))
        continue;
      ArrayRef<Operation *> calls = users.getUsers(kernel);
      if (calls.size() != 1 || !isa<func::CallOp>(calls[0]))
        continue;
      auto call = cast<func::CallOp>(calls[0]);
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
      tile(kernel, root, call, outArg.getArgNumber(), pos);
    }
  }

  /// Runs `root` over the chunk [lo, hi) (two new arguments of `kernel`)
  /// of its first `pos.size()` loops, flattened row-major; the call passes
  /// [0, n), n = the product of dims `pos` of argument `out`, and a third
  /// new argument that the kernel does not read: the smallest chunk worth a
  /// thread (kMinChunkIterations over the iterations of one chunked step,
  /// at least 1), computed at the call from the sizes of the other loops.
  void tile(func::FuncOp kernel, linalg::LinalgOp root, func::CallOp call,
            unsigned out, ArrayRef<unsigned> pos) {
    MLIRContext *ctx = &getContext();
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
    if (failed(tiled)) {
      root.emitError("disc-parallelize-kernels: tiling failed");
      return signalPassFailure();
    }
    // Sizes of the other loops at the call: constants, or dims of
    // arguments (others, unknown there, count as 1).
    OpBuilder cb(call);
    Value inner = arith::ConstantIndexOp::create(cb, loc, 1);
    for (const Range &r : ArrayRef<Range>(domain).drop_front(pos.size())) {
      Value size;
      if (std::optional<int64_t> c = getConstantIntValue(r.size)) {
        size = arith::ConstantIndexOp::create(cb, loc, *c);
      } else if (auto dim =
                     cast<Value>(r.size).getDefiningOp<memref::DimOp>()) {
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
    kernel->setAttr(kParallelAttr, UnitAttr::get(ctx));
    // [0, n) at the call.
    Value outBuffer = call.getOperand(out);
    Value total;
    for (unsigned p : pos) {
      int64_t size = cast<MemRefType>(outBuffer.getType()).getDimSize(p);
      Value dim =
          ShapedType::isDynamic(size)
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
  }
};

/// The model wrapper's entry (ModelEmitter.cpp) that forwards to
/// `disc_ral_context.parallel_for`.
constexpr StringLiteral kParallelFor = "disc_parallel_for";

struct LowerParallelCallsPass
    : public PassWrapper<LowerParallelCallsPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(LowerParallelCallsPass)
  StringRef getArgument() const final { return "disc-lower-parallel-calls"; }
  StringRef getDescription() const final {
    return "Call marked kernels through the runtime's parallel_for";
  }
  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    auto ptr = LLVM::LLVMPointerType::get(ctx);
    auto i64 = IntegerType::get(ctx, 64);
    auto voidType = LLVM::LLVMVoidType::get(ctx);
    SmallVector<LLVM::LLVMFuncOp> kernels;
    for (auto f : module.getOps<LLVM::LLVMFuncOp>())
      if (f->hasAttr(kParallelAttr) && !f.isExternal())
        kernels.push_back(f);
    if (kernels.empty())
      return;
    OpBuilder mb = OpBuilder::atBlockEnd(module.getBody());
    auto parallelFor = module.lookupSymbol<LLVM::LLVMFuncOp>(kParallelFor);
    if (!parallelFor)
      parallelFor = LLVM::LLVMFuncOp::create(
          mb, module.getLoc(), kParallelFor,
          LLVM::LLVMFunctionType::get(voidType, {ptr, ptr, i64, i64}));
    SymbolTableCollection tables;
    SymbolUserMap users(tables, module);
    for (LLVM::LLVMFuncOp kernel : kernels) {
      Location loc = kernel.getLoc();
      ArrayRef<Type> params = kernel.getFunctionType().getParams();
      assert(params.size() >= 3 &&
             "a parallel kernel takes lo, hi and the smallest chunk last");
      auto envType = LLVM::LLVMStructType::getLiteral(
          ctx, SmallVector<Type>(params.drop_back(3)));
      // The body: loads the arguments, runs the kernel on [lo, hi).
      std::string name =
          "disc_parallel_body_" + kernel.getName().drop_front(12).str();
      auto thunk = LLVM::LLVMFuncOp::create(
          mb, loc, name, LLVM::LLVMFunctionType::get(voidType, {ptr, i64, i64}),
          LLVM::Linkage::Internal);
      {
        Block *entry = thunk.addEntryBlock(mb);
        OpBuilder tb = OpBuilder::atBlockEnd(entry);
        SmallVector<Value> args;
        for (auto [i, t] : llvm::enumerate(params.drop_back(3))) {
          Value field = LLVM::GEPOp::create(
              tb, loc, ptr, envType, entry->getArgument(0),
              ArrayRef<LLVM::GEPArg>{0, static_cast<int32_t>(i)});
          args.push_back(LLVM::LoadOp::create(tb, loc, t, field));
        }
        args.push_back(entry->getArgument(1));
        args.push_back(entry->getArgument(2));
        args.push_back(LLVM::ConstantOp::create(tb, loc, i64, 0)); // unread
        LLVM::CallOp::create(tb, loc, kernel, args);
        LLVM::ReturnOp::create(tb, loc, ValueRange());
      }
      for (Operation *user : llvm::to_vector(users.getUsers(kernel))) {
        auto call = dyn_cast<LLVM::CallOp>(user);
        if (!call)
          continue;
        auto caller = call->getParentOfType<LLVM::LLVMFuncOp>();
        OpBuilder ab = OpBuilder::atBlockBegin(&caller.getBody().front());
        Value one = LLVM::ConstantOp::create(ab, loc, i64, 1);
        Value env = LLVM::AllocaOp::create(ab, loc, ptr, envType, one);
        OpBuilder cb(call);
        ValueRange operands = call.getArgOperands();
        for (auto [i, v] : llvm::enumerate(operands.drop_back(3))) {
          Value field = LLVM::GEPOp::create(
              cb, loc, ptr, envType, env,
              ArrayRef<LLVM::GEPArg>{0, static_cast<int32_t>(i)});
          LLVM::StoreOp::create(cb, loc, v, field);
        }
        Value fn = LLVM::AddressOfOp::create(cb, loc, ptr, thunk.getName());
        Value n = operands[operands.size() - 2];
        LLVM::CallOp::create(cb, loc, parallelFor,
                             ValueRange{fn, env, n, operands.back()});
        call->erase();
      }
    }
  }
};
} // namespace

std::unique_ptr<Pass> mlir::disc::createParallelizeKernelsPass() {
  return std::make_unique<ParallelizeKernelsPass>();
}

std::unique_ptr<Pass> mlir::disc::createLowerParallelCallsPass() {
  return std::make_unique<LowerParallelCallsPass>();
}

void mlir::disc::registerParallelKernelsPasses() {
  PassRegistration<ParallelizeKernelsPass>();
  PassRegistration<LowerParallelCallsPass>();
}
