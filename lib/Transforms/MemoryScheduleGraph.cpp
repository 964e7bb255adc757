//===- MemoryScheduleGraph.cpp - ops of a function as a schedule graph ----===//
#include "disc/Transforms/MemoryScheduleGraph.h"

#include "disc/Dialect/Disc/IR/DiscDialect.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/DenseMap.h"

using namespace mlir;
using namespace mlir::disc;

/// Bytes of one element (i1 takes a byte).
static int64_t elementBytes(Type t) {
  if (auto c = dyn_cast<ComplexType>(t))
    return 2 * elementBytes(c.getElementType());
  if (t.isIntOrIndexOrFloat())
    return t.isIndex() ? 8 : (t.getIntOrFloatBitWidth() + 7) / 8;
  return 8;
}

OpScheduleGraph mlir::disc::buildOpScheduleGraph(func::FuncOp func,
                                                 ShapeAnalysis &analysis) {
  OpScheduleGraph sg;
  Block &block = func.getBody().front();
  llvm::DenseMap<Operation *, unsigned> index;
  for (Operation &op : block.without_terminator()) {
    index[&op] = sg.ops.size();
    sg.ops.push_back(&op);
  }
  unsigned n = sg.ops.size();
  sg.graph = ScheduleGraph(n);
  MLIRContext *ctx = func.getContext();
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

  // Allocations: one per tensor result, except constants (globals) and
  // views (a reshape shares its operand's buffer: its users extend the
  // source's live range).
  llvm::DenseMap<Value, unsigned> allocOf;
  for (unsigned v = 0; v < n; ++v) {
    Operation *op = sg.ops[v];
    if (isa<disc::ConstantOp>(op))
      continue;
    for (Value r : op->getResults()) {
      auto type = dyn_cast<RankedTensorType>(r.getType());
      if (!type)
        continue;
      if (isa<disc::DynamicReshapeOp>(op)) {
        auto it = allocOf.find(op->getOperand(0));
        if (it != allocOf.end()) {
          allocOf[r] = it->second;
          continue;
        }
      }
      AffineExpr bytes =
          getAffineConstantExpr(elementBytes(type.getElementType()), ctx);
      SmallVector<AffineExpr> dims = analysis.getDims(r);
      if (dims.size() == static_cast<size_t>(type.getRank())) {
        for (AffineExpr d : dims)
          bytes = bytes * d;
      } else {
        for (int64_t d : type.getShape())
          bytes = bytes *
                  getAffineConstantExpr(ShapedType::isDynamic(d) ? 1 : d, ctx);
      }
      allocOf[r] = sg.graph.addAlloc(bytes, v, {});
    }
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
