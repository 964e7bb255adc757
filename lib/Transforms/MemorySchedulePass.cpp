//===- MemorySchedulePass.cpp - disc-memory-schedule ----------------------===//
//
// Builds the scheduling graph of each function's top-level ops from the
// memory model (byte sizes as symbolic expressions, views folded into the
// allocation they share), runs the scheduler of disc/Analysis/
// MemorySchedule.h and moves the ops into the chosen order. Ops with
// memory effects keep their relative order.
//
//===----------------------------------------------------------------------===//
#include "disc/Analysis/MemorySchedule.h"
#include "disc/Transforms/Fusion.h"
#include "disc/Transforms/InPlaceState.h"
#include "disc/Transforms/MemoryScheduleGraph.h"
#include "disc/Transforms/Passes.h"
#include "disc/Transforms/ShapeAnalysis.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/Support/Format.h"

namespace mlir::disc {
#define GEN_PASS_DEF_DISCMEMORYSCHEDULE
#include "disc/Transforms/Passes.h.inc"
} // namespace mlir::disc

using namespace mlir;
using namespace mlir::disc;

/// Moves each training state update that disc-mark-in-place-state may
/// write into its state's buffer (findStateUpdates), with its fused
/// producers, to right after the last op it depends on: the definitions of
/// its operands and the other readers of its state. Written in place it
/// allocates nothing, and the gradient it reads dies there instead of at
/// its old position, so no program point's live bytes grow (an optimizer
/// step applied as soon as each gradient is complete, as PyTorch's
/// optimizer-in-backward hooks do).
static void hoistStateUpdates(func::FuncOp func, bool accumulatingCalls) {
  Block &block = func.getBody().front();
  for (const StateUpdate &u : findStateUpdates(func)) {
    // The update and its fused producers, contiguous (sinkFusedProducers).
    SmallVector<Operation *> group{u.op};
    for (Operation *p = u.op->getPrevNode();
         p && isFusedProducer(p) && getFusionRoot(p) == u.op;
         p = p->getPrevNode())
      group.push_back(p);
    // The weight-gradient MatMul of an accumulating call comes along
    // (scheduled right before the update, buildOpScheduleGraph).
    // So do the recomputed copies only the group reads (glued before it).
    if (Operation *dot = accumulatingCalls ? scaledGradientDot(u) : nullptr) {
      auto previous = [](Operation *op) {
        Operation *prev = op->getPrevNode();
        while (prev && prev->hasTrait<OpTrait::ConstantLike>())
          prev = prev->getPrevNode();
        return prev;
      };
      if (previous(group.back()) == dot) {
        group.push_back(dot);
        for (Operation *p = previous(dot);
             p && p->hasAttr(kRecomputeCopyAttrName) && !isFusedProducer(p) &&
             p->getNumResults() == 1 &&
             llvm::all_of(p->getResult(0).getUsers(),
                          [&](Operation *user) {
                            return llvm::is_contained(group, user);
                          });
             p = previous(p))
          group.push_back(p);
      }
    }
    std::reverse(group.begin(), group.end());
    llvm::DenseSet<Operation *> inGroup(group.begin(), group.end());
    Operation *last = nullptr;
    auto dependsOn = [&](Operation *op) {
      if (op && !inGroup.contains(op) && (!last || last->isBeforeInBlock(op)))
        last = op;
    };
    // Constants (the learning rate) come along: moved when only the group
    // reads them, else copied.
    SmallVector<Operation *> constants;
    for (Operation *g : group)
      g->walk([&](Operation *inner) {
        for (Value v : inner->getOperands()) {
          Operation *def = v.getDefiningOp();
          if (!def)
            continue;
          Operation *top = block.findAncestorOpInBlock(*def);
          if (top && top->hasTrait<OpTrait::ConstantLike>() &&
              top->getNumOperands() == 0) {
            if (!llvm::is_contained(constants, top))
              constants.push_back(top);
            continue;
          }
          dependsOn(top);
        }
      });
    for (Operation *r : stateReaders(u))
      dependsOn(r);
    if (!last || !last->isBeforeInBlock(group.front()))
      continue;
    // Each moved op goes right after the previous one, from `last` on.
    Operation *anchor = last;
    for (Operation *c : constants) {
      if (!last->isBeforeInBlock(c))
        continue;
      if (llvm::all_of(c->getUsers(), [&](Operation *user) {
            return inGroup.contains(block.findAncestorOpInBlock(*user));
          })) {
        c->moveAfter(anchor);
        anchor = c;
        continue;
      }
      OpBuilder b(c->getContext());
      b.setInsertionPointAfter(anchor);
      Operation *copy = b.clone(*c);
      c->getResult(0).replaceUsesWithIf(
          copy->getResult(0), [&](OpOperand &use) {
            return inGroup.contains(
                block.findAncestorOpInBlock(*use.getOwner()));
          });
      anchor = copy;
    }
    for (Operation *g : group) {
      g->moveAfter(anchor);
      anchor = g;
    }
  }
}

namespace {
struct MemorySchedulePass
    : public disc::impl::DiscMemoryScheduleBase<MemorySchedulePass> {
  using DiscMemoryScheduleBase::DiscMemoryScheduleBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    llvm::StringMap<DimRange> ranges = collectDimRanges(module);
    for (auto func : module.getOps<func::FuncOp>()) {
      if (func.isExternal() || !func.getBody().hasOneBlock())
        continue;
      // Program order, the baseline of the scheduler, with the state
      // updates after the other readers of their state (InPlaceState.h).
      orderStateUpdatesAfterReaders(func);
      FunctionMemory fm(func, ranges);
      ShapeAnalysis &analysis = *fm.shapes;
      MemoryModel &model = *fm.model;
      OpScheduleGraph sg =
          buildOpScheduleGraph(func, model, inPlaceState, accumulatingCalls);
      if (sg.ops.size() < 2)
        continue;
      ScheduleResult r = scheduleForMemory(sg.graph, analysis.getSolver());
      Block &block = func.getBody().front();
      Operation *terminator = block.getTerminator();
      for (unsigned id : r.order)
        if (Operation *op = sg.ops[id]) // null: an op's first step
          op->moveBefore(terminator);
      sinkFusedProducers(block);
      if (inPlaceState)
        hoistStateUpdates(func, accumulatingCalls);
      if (remarks) {
        std::string msg;
        llvm::raw_string_ostream os(msg);
        os << "memory schedule: chose '" << r.chosen << "'; peak bytes at "
           << (r.sampleIsLikely ? "the likely dims" : "the sample dims") << ":";
        for (const ScheduleCandidate &c : r.candidates)
          os << " " << c.name << "=" << llvm::format("%.0f", c.peakAtSample)
             << (c.safe ? "" : "(unproven)");
        const SolverStats &st = analysis.getSolver().getStats();
        os << "; solver: " << st.queries << " queries, " << st.z3Calls
           << " Z3 calls, " << llvm::format("%.1f", st.z3TimeMs) << " ms in Z3";
        func.emitRemark(os.str());
      }
    }
  }
};
} // namespace
