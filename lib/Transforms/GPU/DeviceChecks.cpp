//===- DeviceChecks.cpp - disc-gpu-device-checks --------------------------===//
//
// A run-time check (RuntimeChecks.h) inside a kernel cannot stop the run
// as on the host. disc-gpu-device-checks turns
//   scf.if %fail { func.call @disc_check_failed(%id, %v0, %v1, %v2, %v3) }
// inside a gpu.launch into a compare-and-swap of 1 + id into word 0 of the
// device error word `@disc_check_error` (the first failure wins; its thread
// then stores the values into words 1..4), and wraps the rest of the block
// in `scf.if !%fail`, so the thread never performs the access the check
// guards (an out-of-range Gather index reads nothing). After the launch,
// the host reads the word and fails the run with the same message as on
// the CPU (docs/cuda.md, "Run-time checks in kernels").
//
//===----------------------------------------------------------------------===//
#include "disc/Transforms/GPU/Passes.h"

#include "Utils.h"

#include "disc/Target/RuntimeSymbols.h"

namespace mlir::disc {
#define GEN_PASS_DEF_DISCGPUDEVICECHECKS
#include "disc/Transforms/GPU/Passes.h.inc"
} // namespace mlir::disc

using namespace mlir;

namespace {

/// A zero of `type` (the value a skipped block yields; the run fails).
Value zeroOf(OpBuilder &b, Location loc, Type type) {
  if (isa<IndexType>(type))
    return arith::ConstantIndexOp::create(b, loc, 0);
  if (isa<IntegerType, FloatType>(type))
    return arith::ConstantOp::create(b, loc, b.getZeroAttr(type));
  return Value();
}

struct DeviceChecksPass
    : public disc::impl::DiscGpuDeviceChecksBase<DeviceChecksPass> {
  memref::GlobalOp getOrCreateErrorWord(ModuleOp module) {
    if (auto g = module.lookupSymbol<memref::GlobalOp>(
            disc::cuda::kCheckErrorGlobal))
      return g;
    OpBuilder b(module.getContext());
    b.setInsertionPointToStart(module.getBody());
    auto type = MemRefType::get({5}, b.getI64Type());
    auto init = DenseElementsAttr::get(
        RankedTensorType::get({5}, b.getI64Type()), b.getI64IntegerAttr(0));
    return memref::GlobalOp::create(
        b, module.getLoc(), disc::cuda::kCheckErrorGlobal,
        /*sym_visibility=*/StringAttr(), type, init, /*constant=*/false,
        /*alignment=*/b.getI64IntegerAttr(8));
  }

  /// Wraps the ops after `op` in its block (not the terminator) in
  /// `scf.if %cond`; values the terminator uses become results, zero in
  /// the else branch.
  LogicalResult guardRest(Operation *op, Value cond) {
    Block *block = op->getBlock();
    Operation *term = block->getTerminator();
    if (std::next(op->getIterator()) == term->getIterator())
      return success();
    SmallVector<Operation *> rest;
    for (auto it = std::next(op->getIterator()); &*it != term; ++it)
      rest.push_back(&*it);
    llvm::SmallPtrSet<Operation *, 16> restSet(rest.begin(), rest.end());
    SmallVector<Value> escaping;
    for (Value v : term->getOperands())
      if (Operation *def = v.getDefiningOp(); def && restSet.contains(def))
        if (!llvm::is_contained(escaping, v))
          escaping.push_back(v);
    OpBuilder b(term);
    Location loc = op->getLoc();
    SmallVector<Type> types;
    for (Value v : escaping)
      types.push_back(v.getType());
    auto ifOp = scf::IfOp::create(b, loc, types, cond, /*withElse=*/true);
    for (Block *blk : {ifOp.thenBlock(), ifOp.elseBlock()})
      if (blk->empty() || !blk->back().hasTrait<OpTrait::IsTerminator>()) {
        OpBuilder yb = OpBuilder::atBlockEnd(blk);
        scf::YieldOp::create(yb, loc);
      }
    Block *thenBlock = ifOp.thenBlock();
    Operation *thenYield = thenBlock->getTerminator();
    for (Operation *r : rest)
      r->moveBefore(thenYield);
    thenYield->setOperands(escaping);
    OpBuilder eb = OpBuilder::atBlockTerminator(ifOp.elseBlock());
    SmallVector<Value> zeros;
    for (Type t : types) {
      Value z = zeroOf(eb, loc, t);
      if (!z)
        return op->emitError("a run-time check inside a kernel guards a "
                             "value of type ")
               << t << ", which cannot be skipped";
      zeros.push_back(z);
    }
    ifOp.elseBlock()->getTerminator()->setOperands(zeros);
    for (auto [v, r] : llvm::zip(escaping, ifOp.getResults()))
      v.replaceUsesWithIf(
          r, [&](OpOperand &use) { return use.getOwner() == term; });
    return success();
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<func::CallOp> calls;
    module.walk([&](func::CallOp call) {
      if (call.getCallee() == disc::kCheckFailedFn &&
          call->getParentOfType<gpu::LaunchOp>())
        calls.push_back(call);
    });
    if (calls.empty())
      return;
    memref::GlobalOp word = getOrCreateErrorWord(module);
    for (func::CallOp call : calls) {
      auto guard = dyn_cast<scf::IfOp>(call->getParentOp());
      if (!guard || guard.elseBlock() || guard.getNumResults() != 0 ||
          call.getNumOperands() != 5) {
        call.emitError("unexpected form of a run-time check inside a kernel");
        return signalPassFailure();
      }
      Location loc = call.getLoc();
      OpBuilder b(call);
      Value g = memref::GetGlobalOp::create(b, loc, word.getType(),
                                            word.getSymName());
      Value c0 = arith::ConstantIndexOp::create(b, loc, 0);
      Value one = arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(1));
      Value zero = arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(0));
      Value code = arith::AddIOp::create(b, loc, call.getOperand(0), one);
      auto cas = memref::GenericAtomicRMWOp::create(b, loc, g, ValueRange{c0});
      {
        OpBuilder ib = OpBuilder::atBlockEnd(cas.getBody());
        Value cur = cas.getCurrentValue();
        Value free =
            arith::CmpIOp::create(ib, loc, arith::CmpIPredicate::eq, cur, zero);
        Value next = arith::SelectOp::create(ib, loc, free, code, cur);
        memref::AtomicYieldOp::create(ib, loc, next);
      }
      Value won = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                        cas.getResult(), zero);
      scf::IfOp::create(b, loc, won, [&](OpBuilder &tb, Location tl) {
        for (unsigned i = 1; i < 5; ++i)
          memref::StoreOp::create(
              tb, tl, call.getOperand(i), g,
              ValueRange{arith::ConstantIndexOp::create(tb, tl, i)});
        scf::YieldOp::create(tb, tl);
      });
      call.erase();
      // The rest of the block after the check runs only when it held.
      OpBuilder gb(guard->getNextNode());
      Value ok = arith::XOrIOp::create(
          gb, loc, guard.getCondition(),
          arith::ConstantOp::create(gb, loc, gb.getBoolAttr(true)));
      if (failed(guardRest(ok.getDefiningOp(), ok)))
        return signalPassFailure();
    }
  }
};

} // namespace
