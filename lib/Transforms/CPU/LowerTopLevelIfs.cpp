//===- LowerTopLevelIfs.cpp - disc-lower-top-level-ifs --------------------===//
//
// The scf.if ops without results directly in a function body (the model's
// inline run-time checks) become cf.cond_br to their then/else blocks,
// which branch to the rest of the block, as convert-scf-to-cf lowers them.
// The ifs of a block are lowered from the last to the first, so each split
// moves only the ops up to the previous split: linear in the function's
// size. convert-scf-to-cf splits through the dialect conversion, which
// moves every later op one by one and records each move for a rollback:
// quadratic time and memory in the number of checks of a large graph.
//
//===----------------------------------------------------------------------===//
#include "disc/Transforms/CPU/Passes.h"

namespace mlir::disc {
#define GEN_PASS_DEF_DISCLOWERTOPLEVELIFS
#include "disc/Transforms/CPU/Passes.h.inc"
} // namespace mlir::disc

using namespace mlir;

/// Lowers `op` (no results, its block in a function body): the block is
/// split after it, its regions' blocks go before the continuation, their
/// scf.yield becomes a branch to it.
static void lowerIf(scf::IfOp op) {
  Block *cond = op->getBlock();
  Region *region = cond->getParent();
  Block *cont = cond->splitBlock(std::next(op->getIterator()));
  auto inlineBranch = [&](Region &branch) -> Block * {
    if (branch.empty())
      return cont;
    Block *first = &branch.front();
    Operation *yield = branch.back().getTerminator();
    OpBuilder b(yield);
    cf::BranchOp::create(b, yield->getLoc(), cont);
    yield->erase();
    region->getBlocks().splice(cont->getIterator(), branch.getBlocks());
    return first;
  };
  Block *thenBlock = inlineBranch(op.getThenRegion());
  Block *elseBlock = inlineBranch(op.getElseRegion());
  OpBuilder b(op);
  cf::CondBranchOp::create(b, op.getLoc(), op.getCondition(), thenBlock,
                           ValueRange(), elseBlock, ValueRange());
  op->erase();
}

namespace {
struct LowerTopLevelIfsPass
    : public disc::impl::DiscLowerTopLevelIfsBase<LowerTopLevelIfsPass> {
  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      // The original blocks; lowering appends new ones.
      SmallVector<Block *> blocks;
      for (Block &block : func.getBody())
        blocks.push_back(&block);
      for (Block *block : blocks) {
        SmallVector<scf::IfOp> ifs;
        for (Operation &op : *block)
          if (auto ifOp = dyn_cast<scf::IfOp>(op);
              ifOp && ifOp->getNumResults() == 0)
            ifs.push_back(ifOp);
        // Last first: each split moves the ops up to the previous one.
        for (scf::IfOp ifOp : llvm::reverse(ifs))
          lowerIf(ifOp);
      }
    }
  }
};
} // namespace
