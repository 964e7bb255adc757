//===- MemoryScheduleGraph.h - ops of a function as a schedule graph -*- C++
//-*-===//
//
// Turns the top-level ops of a function into the abstract graph of
// disc/Analysis/MemorySchedule.h: one node per op (program order), data
// edges (including values used inside an op's regions), ordering edges
// between ops with memory effects, and one allocation per buffer the
// memory model predicts (views share their source's allocation).
//
//===----------------------------------------------------------------------===//
#ifndef DISC_TRANSFORMS_MEMORYSCHEDULEGRAPH_H
#define DISC_TRANSFORMS_MEMORYSCHEDULEGRAPH_H

#include "disc/Analysis/MemorySchedule.h"
#include "disc/Transforms/MemoryModel.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::disc {

struct OpScheduleGraph {
  /// Node id -> op, program order; null for the first step of the next op
  /// (its pre-scratch allocation, glued to it).
  llvm::SmallVector<Operation *> ops;
  ScheduleGraph graph;
};

/// Moves each state update of a training step (InPlaceState.h) after the
/// other readers of its state, with the ops that depend on it, keeping
/// every other op's relative order (a stable topological order of the data
/// dependencies, the order of the ops with memory effects and these
/// edges), so that program order respects the ordering edges of
/// buildOpScheduleGraph. Returns whether an op moved.
bool orderStateUpdatesAfterReaders(func::FuncOp func);

/// Builds the graph of `func`'s single block (terminator excluded) from
/// `model` (MemoryModel.h); sizes are expressions over the symbols of the
/// model's shape analysis (and its solver). With `inPlaceStateUpdates`
/// (the target writes state updates into the state's buffers,
/// disc-mark-in-place-state), the update of findStateUpdates allocates
/// nothing, so that an order that runs it as soon as its state's other
/// readers are done frees the gradient it reads there instead of at the
/// end of the step. With `accumulatingCalls` too (oneDNN MatMul calls
/// that accumulate a scaled product into the state, markLibraryCalls), the
/// weight-gradient MatMul of such an update (scaledGradientDot) allocates
/// nothing either and runs right before it, with the scaling: the call
/// adds its product into the state, and no gradient buffer exists.
OpScheduleGraph buildOpScheduleGraph(func::FuncOp func, MemoryModel &model,
                                     bool inPlaceStateUpdates = false,
                                     bool accumulatingCalls = false);

} // namespace mlir::disc

#endif // DISC_TRANSFORMS_MEMORYSCHEDULEGRAPH_H
