//===- EmulateLaunches.cpp - disc-gpu-emulate-launches --------------------===//
//
// `disc-compile --target=cuda-emulate` (docs/cuda.md, "Emulation"): the
// IR after the GPU mapping (`--emit=gpu`) with every gpu.launch turned into
// host loops over the block ids (z, y, x) and, inside, the thread ids
// (z, y, x): the kernel body runs once per (block, thread), with the ids
// and extents the launch would give it. Threads of a block run one after
// the other, so a kernel that synchronizes its threads (gpu.barrier) or
// uses shared memory cannot be emulated and is refused. Device copies
// become host copies; the device error word of the run-time checks
// (disc-gpu-device-checks) is read after each launch as the runtime does
// after a real one. The result continues with the CPU pipeline's tail.
//
//===----------------------------------------------------------------------===//
#include "disc/Transforms/GPU/Passes.h"

#include "Utils.h"

#include "disc/Target/RuntimeSymbols.h"
#include "mlir/IR/IRMapping.h"

namespace mlir::disc {
#define GEN_PASS_DEF_DISCGPUEMULATELAUNCHES
#include "disc/Transforms/GPU/Passes.h.inc"
} // namespace mlir::disc

using namespace mlir;

/// After a launch: when the kernel recorded a failed check, clear the
/// word and report it as the host-side check would.
static void readErrorWord(OpBuilder &b, Location loc, memref::GlobalOp word,
                          func::FuncOp fail) {
  Value g =
      memref::GetGlobalOp::create(b, loc, word.getType(), word.getSymName());
  auto idx = [&](int64_t i) {
    return arith::ConstantIndexOp::create(b, loc, i).getResult();
  };
  Value code = memref::LoadOp::create(b, loc, g, ValueRange{idx(0)});
  Value zero = arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(0));
  Value failed =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, code, zero);
  scf::IfOp::create(b, loc, failed, [&](OpBuilder &tb, Location tl) {
    SmallVector<Value> args;
    args.push_back(arith::SubIOp::create(
        tb, tl, code,
        arith::ConstantOp::create(tb, tl, tb.getI64IntegerAttr(1))));
    for (int64_t i = 1; i < 5; ++i)
      args.push_back(memref::LoadOp::create(
          tb, tl, g, ValueRange{arith::ConstantIndexOp::create(tb, tl, i)}));
    memref::StoreOp::create(
        tb, tl, arith::ConstantOp::create(tb, tl, tb.getI64IntegerAttr(0)), g,
        ValueRange{arith::ConstantIndexOp::create(tb, tl, 0)});
    func::CallOp::create(tb, tl, fail, args);
    scf::YieldOp::create(tb, tl);
  });
}

/// Replaces `launch` by host loops over its blocks and threads; with a
/// device error word, reads it after the loops.
static LogicalResult emulate(gpu::LaunchOp launch, memref::GlobalOp word,
                             func::FuncOp fail) {
  Region &body = launch.getBody();
  if (!body.hasOneBlock())
    return launch.emitError("cannot emulate a kernel with more than one "
                            "block in its body");
  if (launch.getAsyncToken() || !launch.getAsyncDependencies().empty() ||
      launch.getDynamicSharedMemorySize() || launch.hasClusterSize() ||
      !launch.getWorkgroupAttributions().empty() ||
      !launch.getPrivateAttributions().empty())
    return launch.emitError("cannot emulate an asynchronous launch, a "
                            "cluster, or shared or private memory");
  WalkResult refused = body.walk([&](Operation *op) {
    if (isa<gpu::BarrierOp>(op) ||
        op->getName().getStringRef().starts_with("gpu.shuffle") ||
        op->getName().getStringRef().starts_with("gpu.subgroup")) {
      op->emitError("cannot emulate '")
          << op->getName()
          << "': the threads of a block run one after the other on the CPU";
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  if (refused.wasInterrupted())
    return failure();
  OpBuilder b(launch);
  Location loc = launch.getLoc();
  Value c0 = arith::ConstantIndexOp::create(b, loc, 0);
  Value c1 = arith::ConstantIndexOp::create(b, loc, 1);
  gpu::KernelDim3 grid = launch.getGridSizeOperandValues();
  gpu::KernelDim3 block = launch.getBlockSizeOperandValues();
  gpu::KernelDim3 blockIds = launch.getBlockIds();
  gpu::KernelDim3 threadIds = launch.getThreadIds();
  gpu::KernelDim3 gridArgs = launch.getGridSize();
  gpu::KernelDim3 blockArgs = launch.getBlockSize();
  IRMapping map;
  map.map(gridArgs.x, grid.x);
  map.map(gridArgs.y, grid.y);
  map.map(gridArgs.z, grid.z);
  map.map(blockArgs.x, block.x);
  map.map(blockArgs.y, block.y);
  map.map(blockArgs.z, block.z);
  // Loops outermost first: block z, y, x, then thread z, y, x.
  Value bounds[6] = {grid.z, grid.y, grid.x, block.z, block.y, block.x};
  Value ids[6] = {blockIds.z,  blockIds.y,  blockIds.x,
                  threadIds.z, threadIds.y, threadIds.x};
  OpBuilder inner = b;
  for (int i = 0; i < 6; ++i) {
    auto loop = scf::ForOp::create(inner, loc, c0, bounds[i], c1);
    map.map(ids[i], loop.getInductionVar());
    inner.setInsertionPoint(loop.getBody()->getTerminator());
  }
  Block &kernel = body.front();
  for (Operation &op : kernel.without_terminator())
    inner.clone(op, map);
  // Ids and extents read through ops rather than block arguments.
  Operation *firstLoop = c1.getDefiningOp()->getNextNode();
  WalkResult bad = firstLoop->walk([&](Operation *op) {
    auto dimOf = [](gpu::Dimension d) { return static_cast<int>(d); };
    Value repl;
    if (auto id = dyn_cast<gpu::BlockIdOp>(op))
      repl = map.lookup(ids[2 - dimOf(id.getDimension())]);
    else if (auto id = dyn_cast<gpu::ThreadIdOp>(op))
      repl = map.lookup(ids[5 - dimOf(id.getDimension())]);
    else if (auto d = dyn_cast<gpu::GridDimOp>(op))
      repl = bounds[2 - dimOf(d.getDimension())];
    else if (auto d = dyn_cast<gpu::BlockDimOp>(op))
      repl = bounds[5 - dimOf(d.getDimension())];
    else if (op->getDialect() && op->getDialect()->getNamespace() == "gpu" &&
             !isa<gpu::TerminatorOp>(op)) {
      op->emitError("cannot emulate '") << op->getName() << "'";
      return WalkResult::interrupt();
    }
    if (repl) {
      op->getResult(0).replaceAllUsesWith(repl);
      op->erase();
    }
    return WalkResult::advance();
  });
  if (bad.wasInterrupted())
    return failure();
  if (word) {
    b.setInsertionPointAfter(launch);
    readErrorWord(b, loc, word, fail);
  }
  launch.erase();
  return success();
}

/// The declaration of `disc_check_failed(id, v0, v1, v2, v3)` in `module`.
static func::FuncOp getOrCreateCheckFailedFn(ModuleOp module) {
  if (auto fail = module.lookupSymbol<func::FuncOp>(disc::kCheckFailedFn))
    return fail;
  OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
  SmallVector<Type> args(5, b.getI64Type());
  auto fail = func::FuncOp::create(b, module.getLoc(), disc::kCheckFailedFn,
                                   b.getFunctionType(args, {}));
  fail.setPrivate();
  return fail;
}

/// Device copies become host copies; the stream waits around them vanish.
static void replaceDeviceCopies(ModuleOp module) {
  SmallVector<Operation *> gpuOps;
  module.walk([&](Operation *op) {
    if (isa<gpu::MemcpyOp, gpu::WaitOp>(op))
      gpuOps.push_back(op);
  });
  for (Operation *op : gpuOps) {
    if (auto copy = dyn_cast<gpu::MemcpyOp>(op)) {
      OpBuilder b(copy);
      memref::CopyOp::create(b, copy.getLoc(), copy.getSrc(), copy.getDst());
    }
  }
  // Erase in reverse so token users go before their producers.
  for (Operation *op : llvm::reverse(gpuOps)) {
    for (Value r : op->getResults())
      r.dropAllUses();
    op->erase();
  }
}

namespace {
struct EmulateLaunchesPass
    : public disc::impl::DiscGpuEmulateLaunchesBase<EmulateLaunchesPass> {
  void runOnOperation() override {
    auto word = getOperation().lookupSymbol<memref::GlobalOp>(
        disc::cuda::kCheckErrorGlobal);
    func::FuncOp fail =
        word ? getOrCreateCheckFailedFn(getOperation()) : nullptr;
    for (gpu::LaunchOp launch : disc::cuda::collectLaunches(getOperation()))
      if (failed(emulate(launch, word, fail)))
        return signalPassFailure();
    replaceDeviceCopies(getOperation());
  }
};
} // namespace
