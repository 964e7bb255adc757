//===- FreeAfterLastUse.cpp - disc-free-after-last-use --------------------===//
//
// Moves each dealloc right after the last use of its buffer (and of the
// values the buffer flows into), so the live bytes follow the op order
// (docs/memory.md). The rewrite of upstream `optimize-allocation-liveness`
// in linear time: all last users are found on the unchanged op order
// (each block numbers its ops once), then the frees move.
//
//===----------------------------------------------------------------------===//
#include "disc/Transforms/CPU/Passes.h"

#include "mlir/Dialect/Bufferization/Transforms/BufferViewFlowAnalysis.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::disc {
#define GEN_PASS_DEF_DISCFREEAFTERLASTUSE
#include "disc/Transforms/CPU/Passes.h.inc"
} // namespace mlir::disc

using namespace mlir;

/// The single result of `op` that it allocates; null when none or several.
static OpResult singleAllocation(MemoryEffectOpInterface op) {
  SmallVector<MemoryEffects::EffectInstance, 2> effects;
  op.getEffects(effects);
  OpResult found;
  for (const MemoryEffects::EffectInstance &e : effects) {
    if (!isa<MemoryEffects::Allocate>(e.getEffect()))
      continue;
    auto result = dyn_cast_or_null<OpResult>(e.getValue());
    if (!result || result.getOwner() != op)
      continue;
    if (found && found != result)
      return nullptr;
    found = result;
  }
  return found;
}

/// The only user of `value` that frees memory; null when none or several.
static Operation *singleFreeingUser(Value value) {
  Operation *found = nullptr;
  for (Operation *user : value.getUsers()) {
    if (!mlir::hasEffect<MemoryEffects::Free>(user))
      continue;
    if (found && found != user)
      return nullptr;
    found = user;
  }
  return found;
}

namespace {
struct FreeAfterLastUsePass
    : public disc::impl::DiscFreeAfterLastUseBase<FreeAfterLastUsePass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    BufferViewFlowAnalysis analysis(func);
    // (free, last user) pairs, in walk order; nothing moves while they are
    // collected, so each block's op order is numbered once.
    SmallVector<std::pair<Operation *, Operation *>> moves;
    func.walk([&](MemoryEffectOpInterface op) {
      OpResult buffer = singleAllocation(op);
      if (!buffer)
        return;
      Block *block = op->getBlock();
      Operation *free = singleFreeingUser(buffer);
      if (!free || free->getBlock() != block)
        return;
      Operation *last = nullptr;
      for (Value alias : analysis.resolve(buffer))
        for (Operation *user : alias.getUsers()) {
          if (user == free)
            continue;
          Operation *top = block->findAncestorOpInBlock(*user);
          if (top && (!last || last->isBeforeInBlock(top)))
            last = top;
        }
      // A last user that frees memory itself (another buffer's free
      // reading an alias) moves too: the order the frees were found in
      // would not hold, so this one stays.
      if (last && !mlir::hasEffect<MemoryEffects::Free>(last))
        moves.push_back({free, last});
    });
    for (auto [free, last] : moves)
      free->moveAfter(last);
  }
};
} // namespace
