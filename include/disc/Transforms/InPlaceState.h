//===- InPlaceState.h - state updates written into the state ---*- C++ -*-===//
//
// A training step reads each parameter (a state input, TrainingStep.h) and
// returns its new value as an output. The new value can be written into the
// parameter's own buffer, as PyTorch's optimizers update in place, when the
// update is one elementwise loop nest over the parameter's (static) shape
// and nothing reads the old value after it: then the step's peak holds no
// second copy of the parameters. disc-memory-schedule orders every update
// after the other readers of its state (ordering edges, when they add no
// cycle); disc-mark-in-place-state marks the updates the final order allows,
// for the memory model (no allocation, no copy at the return) and the CPU
// lowering (disc-write-state-in-place). docs/training.md, "State".
//
//===----------------------------------------------------------------------===//
#ifndef DISC_TRANSFORMS_INPLACESTATE_H
#define DISC_TRANSFORMS_INPLACESTATE_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

namespace mlir::disc {

/// Discardable attribute of a disc op whose result is a state update
/// written into the state input's buffer: the input's index (an i64
/// IntegerAttr). Set by disc-mark-in-place-state.
inline constexpr llvm::StringLiteral kInPlaceStateAttrName =
    "disc.in_place_state";
/// Result attribute of an output written into the buffer of the state
/// input it updates: the input's index (an i64 IntegerAttr). The function
/// returns that input's buffer, and the runtime keeps it as the state.
inline constexpr llvm::StringLiteral kInPlaceResultAttrName = "disc.in_place";

/// A state update that may be written in place: the function's result
/// `result` (the update of state input `arg`) is computed by `op`.
struct StateUpdate {
  Operation *op;
  unsigned result;
  BlockArgument arg;
};

/// The MatMul library call whose scaled product `op` adds to or subtracts
/// from state input `arg`, when `op` is the last post-op of such a call
/// (markLibraryCalls: "scale" then "add"/"sub" with `arg` as the
/// residual), else null. Such an update is written in place by the call
/// itself, accumulating into the state's buffer (kMatmulAccumulateFlag).
Operation *accumulatingCall(Operation *op, BlockArgument arg);

/// The MatMul that computes the gradient of an SGD-like update `u`
/// (`arg - c * dot` or `arg + c * dot`, `c` a splat f32 constant, the dot
/// and the product each read once), which markLibraryCalls can fuse into
/// one call accumulating into the state's buffer (accumulatingCall);
/// null for any other update. Structure only: whether the dot becomes a
/// library call is decided when calls are marked.
Operation *scaledGradientDot(const StateUpdate &u);

/// The state updates of `func` whose op could write the state's buffer:
/// a top-level elementwise op (not fused into another op, nor into a
/// library call unless it is the end of an accumulating call's chain)
/// with the state's static type, the state input read by no op that
/// depends on the update, and neither returned as it is nor updated twice.
/// The op order is not checked (see readsStateAfter).
SmallVector<StateUpdate> findStateUpdates(func::FuncOp func);

/// The top-level ops of `func`'s body that read `u.arg`'s buffer other
/// than `u.op` itself (its fused producers included): readers of the
/// state and of its views (reshape, expand, slice), by their fusion root.
SmallVector<Operation *> stateReaders(const StateUpdate &u);

} // namespace mlir::disc

#endif // DISC_TRANSFORMS_INPLACESTATE_H
