//===- MemoryScheduleGraph.cpp - ops of a function as a schedule graph ----===//
#include "disc/Transforms/MemoryScheduleGraph.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/DenseMap.h"

using namespace mlir;
using namespace mlir::disc;

OpScheduleGraph mlir::disc::buildOpScheduleGraph(func::FuncOp func,
                                                 MemoryModel &model) {
  OpScheduleGraph sg;
  Block &block = func.getBody().front();
  llvm::DenseMap<Operation *, unsigned> index;
  for (Operation &op : block.without_terminator()) {
    index[&op] = sg.ops.size();
    sg.ops.push_back(&op);
  }
  unsigned n = sg.ops.size();
  sg.graph = ScheduleGraph(n);
  Operation *terminator = block.getTerminator();

  // Node that reads a use (the top-level ancestor of its owner), or -1 for
  // the terminator.
  auto nodeOf = [&](Operation *user) -> int {
    Operation *top = block.findAncestorOpInBlock(*user);
    if (!top || top == terminator)
      return -1;
    return index.lookup(top);
  };

  // Data edges, including values captured by regions; ordering edges
  // between ops with memory effects.
  std::optional<unsigned> lastEffect;
  for (unsigned v = 0; v < n; ++v) {
    Operation *op = sg.ops[v];
    llvm::SmallVector<unsigned> preds;
    op->walk([&](Operation *inner) {
      for (Value operand : inner->getOperands()) {
        Operation *def = operand.getDefiningOp();
        if (!def || def->getBlock() != &block)
          continue;
        unsigned d = index.lookup(def);
        if (d != v)
          preds.push_back(d);
      }
    });
    if (!isMemoryEffectFree(op) && !isPure(op)) {
      if (lastEffect)
        preds.push_back(*lastEffect);
      lastEffect = v;
    }
    llvm::sort(preds);
    preds.erase(std::unique(preds.begin(), preds.end()), preds.end());
    for (unsigned p : preds)
      sg.graph.addEdge(p, v);
  }

  // Allocations, from the memory model: one per Alloc result and one per
  // op scratch (live only while its op runs); a View or InPlace result
  // shares the buffer of its operand, so its users extend that buffer's
  // live range. Constants and inputs are never allocated.
  llvm::DenseMap<Value, unsigned> allocOf;
  for (unsigned v = 0; v < n; ++v) {
    const OpMemory &m = model.getOpMemory(sg.ops[v]);
    for (const ResultMemory &r : m.results) {
      switch (r.kind) {
      case BufferKind::Alloc:
        allocOf[r.value] = sg.graph.addAlloc(r.bytes, v, {});
        break;
      case BufferKind::View:
      case BufferKind::InPlace: {
        auto it = allocOf.find(sg.ops[v]->getOperand(r.operand));
        if (it != allocOf.end())
          allocOf[r.value] = it->second;
        break;
      }
      case BufferKind::External:
        break;
      }
    }
    if (m.scratchBytes && !(isa<AffineConstantExpr>(m.scratchBytes) &&
                            cast<AffineConstantExpr>(m.scratchBytes)
                                    .getValue() == 0))
      sg.graph.addAlloc(m.scratchBytes, v, {});
  }
  for (unsigned v = 0; v < n; ++v)
    for (Value r : sg.ops[v]->getResults()) {
      auto it = allocOf.find(r);
      if (it == allocOf.end())
        continue;
      ScheduleGraph::Alloc &a = sg.graph.allocs[it->second];
      for (OpOperand &use : r.getUses()) {
        int u = nodeOf(use.getOwner());
        if (u < 0)
          a.liveOut = true;
        else if (static_cast<unsigned>(u) != a.producer)
          a.users.push_back(u);
      }
    }
  return sg;
}
