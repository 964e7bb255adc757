//===- Fusion.h - disc-fusion: producers inside their consumer -*- C++ -*-===//
//
// disc-fusion marks each elementwise op whose result is read by exactly
// one elementwise op or reduction, with loop nests that linalg's
// elementwise fusion merges (docs/memory.md, "Fusion"). A marked
// producer never touches memory: the memory model gives its result no
// buffer and counts its operand reads at its consumer, the lowering tags
// its linalg.generic, and the CPU pipeline fuses every tagged generic into
// its consumer (and fails if one is left).
//
//===----------------------------------------------------------------------===//
#ifndef DISC_TRANSFORMS_FUSION_H
#define DISC_TRANSFORMS_FUSION_H

#include "mlir/IR/Operation.h"
#include "mlir/Pass/Pass.h"
#include "llvm/ADT/StringRef.h"

#include <memory>

namespace mlir::disc {

class ShapeAnalysis;

/// Unit attribute on a fused producer (a disc op, then its linalg.generic).
inline constexpr llvm::StringLiteral kFusedAttrName = "disc.fused";

/// Unit attribute on the ops that disc-recompute-elementwise copied to a
/// distant reader: disc-memory-schedule keeps such a copy right before its
/// reader (the copy exists to make its buffer short-lived).
inline constexpr llvm::StringLiteral kRecomputeCopyAttrName =
    "disc.recompute_copy";

/// Unit attribute on a depthwise `disc.conv` that disc-fusion (option
/// `depthwise`) chose to lower as generated loops, with its elementwise
/// producer and consumers fused: no cuDNN call takes it.
inline constexpr llvm::StringLiteral kDepthwiseLoopsAttrName =
    "disc.depthwise_loops";

/// Integer attribute on an elementwise op that writes its result into the
/// buffer of that operand, whose last use it is (disc-fusion's `depthwise`
/// option: the bias and activation after a depthwise convolution lowered
/// as loops). The memory model counts no new buffer,
/// and the lowering makes the operand the loop nest's destination, so the
/// nest and the convolution's are one kernel on the GPU.
inline constexpr llvm::StringLiteral kInPlaceOperandAttrName =
    "disc.in_place_operand";

/// True when `op` is a fused producer (disc-fusion).
inline bool isFusedProducer(Operation *op) {
  return op->hasAttr(kFusedAttrName);
}

/// The op that computes `op`'s result: `op` itself, or for a fused producer
/// the (transitive) consumer it is fused into, in the same block.
Operation *getFusionRoot(Operation *op);

/// Moves every fused producer of `block` to just before its fusion root,
/// keeping the relative order of each group, so that a group is a
/// contiguous run of ops ending at its root. Nothing else moves, and the
/// allocations (made by roots only) keep their order. Passes that place
/// code at an op's reads (disc-remat's regenerate points) rely on it: the
/// memory model counts a fused producer's reads at its root. Run by
/// disc-fusion and again by disc-memory-schedule after it reorders.
void sinkFusedProducers(Block &block);

/// True when elementwise `op` lowers to one linalg.generic writing a fresh
/// destination (not versioned on run-time shapes: every operand dim is
/// proven equal to its result dim, a static 1, or the only possibly non-1
/// source of it), the condition disc-fusion puts on producer and consumer.
bool lowersToOneGeneric(ShapeAnalysis &sa, Operation *op);

/// disc-fusion (module pass): recomputes the marks of every function. The
/// same as createDiscFusion() (disc/Transforms/Passes.h, registered with the
/// other passes there), kept for the existing callers.
std::unique_ptr<Pass> createDiscFusionPass();

} // namespace mlir::disc

#endif // DISC_TRANSFORMS_FUSION_H
