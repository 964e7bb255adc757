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
      OpScheduleGraph sg = buildOpScheduleGraph(func, model);
      if (sg.ops.size() < 2)
        continue;
      ScheduleResult r = scheduleForMemory(sg.graph, analysis.getSolver());
      Block &block = func.getBody().front();
      Operation *terminator = block.getTerminator();
      for (unsigned id : r.order)
        if (Operation *op = sg.ops[id]) // null: an op's first step
          op->moveBefore(terminator);
      sinkFusedProducers(block);
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
