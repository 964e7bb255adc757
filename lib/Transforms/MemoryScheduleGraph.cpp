//===- MemoryScheduleGraph.cpp - ops of a function as a schedule graph ----===//
#include "disc/Transforms/MemoryScheduleGraph.h"
#include "disc/Transforms/Fusion.h"
#include "disc/Transforms/InPlaceState.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/DenseMap.h"

#include <queue>

using namespace mlir;
using namespace mlir::disc;

static bool isZero(AffineExpr e) {
  auto c = dyn_cast_or_null<AffineConstantExpr>(e);
  return !e || (c && c.getValue() == 0);
}

OpScheduleGraph mlir::disc::buildOpScheduleGraph(func::FuncOp func,
                                                 MemoryModel &model,
                                                 bool inPlaceStateUpdates,
                                                 bool accumulatingCalls) {
  OpScheduleGraph sg;
  Block &block = func.getBody().front();
  // One node per op; an op whose lowering makes padded copies of its
  // inputs before allocating its results (MemoryModel: pre-scratch) gets a
  // second node right before it, glued to it, for that first step.
  llvm::DenseMap<Operation *, unsigned> index, preIndex;
  for (Operation &op : block.without_terminator()) {
    if (!isZero(model.getOpMemory(&op).preScratchBytes)) {
      preIndex[&op] = sg.ops.size();
      sg.ops.push_back(nullptr);
    }
    index[&op] = sg.ops.size();
    sg.ops.push_back(&op);
  }
  unsigned n = sg.ops.size();
  sg.graph = ScheduleGraph(n);
  Operation *terminator = block.getTerminator();

  // Data edges, including values captured by regions; ordering edges
  // between ops with memory effects.
  std::optional<unsigned> lastEffect;
  for (unsigned v = 0; v < n; ++v) {
    Operation *op = sg.ops[v];
    if (!op)
      continue;
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
    auto pre = preIndex.find(op);
    for (unsigned p : preds) {
      sg.graph.addEdge(p, v);
      if (pre != preIndex.end())
        sg.graph.addEdge(p, pre->second);
    }
    if (pre != preIndex.end()) {
      sg.graph.addEdge(pre->second, v);
      sg.graph.gluedTo[pre->second] = v;
    }
  }

  // A copy made by disc-recompute-elementwise runs right before its reader
  // (the first step of it, when it has two), unless it is fused into it.
  for (unsigned v = 0; v < n; ++v) {
    Operation *op = sg.ops[v];
    if (!op || !op->hasAttr(kRecomputeCopyAttrName) || isFusedProducer(op) ||
        op->getNumResults() != 1 || !op->getResult(0).hasOneUse())
      continue;
    Operation *user =
        block.findAncestorOpInBlock(**op->getResult(0).getUsers().begin());
    if (!user || user == terminator)
      continue;
    user = getFusionRoot(user);
    auto pre = preIndex.find(user);
    unsigned to = pre != preIndex.end() ? pre->second : index.lookup(user);
    if (sg.graph.gluedTo[v] < 0)
      sg.graph.gluedTo[v] = to;
  }

  // A state update comes after the other readers of the old state, so
  // that it can be written into the state's buffer (InPlaceState.h;
  // findStateUpdates leaves out the updates for which this adds a cycle).
  llvm::DenseSet<Operation *> writesState;
  for (const StateUpdate &u : findStateUpdates(func)) {
    if (inPlaceStateUpdates)
      writesState.insert(u.op);
    unsigned to = index.lookup(u.op);
    // The gradient MatMul and its scaling run right before the update (one
    // accumulating call), writing nothing of their own.
    if (inPlaceStateUpdates && accumulatingCalls && !preIndex.count(u.op))
      if (Operation *dot = scaledGradientDot(u)) {
        // The scaling: the dot's only reader.
        Operation *mul = *dot->getUsers().begin();
        if (!preIndex.count(dot) && sg.graph.gluedTo[index.lookup(dot)] < 0 &&
            sg.graph.gluedTo[index.lookup(mul)] < 0) {
          writesState.insert(dot);
          sg.graph.gluedTo[index.lookup(dot)] = to;
          sg.graph.gluedTo[index.lookup(mul)] = to;
        }
      }
    for (Operation *r : stateReaders(u)) {
      auto it = index.find(r);
      if (it == index.end())
        continue;
      auto pre = preIndex.find(u.op);
      sg.graph.addEdge(it->second, pre != preIndex.end() ? pre->second : to);
    }
  }

  // A node glued to a glued node (a recomputed copy read by another, or
  // by a gradient MatMul glued to its update) runs right before the end of
  // the chain: the scheduler keeps one level, and the nodes glued to one
  // node run in program order (a topological order).
  for (unsigned v = 0; v < n; ++v) {
    int t = sg.graph.gluedTo[v];
    while (t >= 0 && sg.graph.gluedTo[t] >= 0)
      t = sg.graph.gluedTo[t];
    sg.graph.gluedTo[v] = t;
  }

  // Allocations, from the memory model: one per Alloc result, one per
  // scratch (live only while its op runs) and one per pre-scratch (live
  // from the first step of its op to the end of the op); a View or InPlace
  // result shares the buffer of its operand, so its users extend that
  // buffer's live range. Constants, inputs, stack buffers and dead ops'
  // results are never allocated.
  llvm::DenseMap<Value, unsigned> allocOf;
  for (unsigned v = 0; v < n; ++v) {
    Operation *op = sg.ops[v];
    if (!op)
      continue;
    const OpMemory &m = model.getOpMemory(op);
    for (const ResultMemory &r : m.results) {
      switch (r.kind) {
      case BufferKind::Alloc:
        // Written into the state's buffer (an input's: not allocated).
        if (writesState.contains(op))
          break;
        allocOf[r.value] = sg.graph.addAlloc(r.bytes, v, {});
        break;
      case BufferKind::Fused:
        // A fused producer a root writes through in place (Fusion.h).
        if (!writesOperandBuffer(r))
          break;
        [[fallthrough]];
      case BufferKind::View:
      case BufferKind::InPlace: {
        auto it = allocOf.find(op->getOperand(r.operand));
        if (it != allocOf.end())
          allocOf[r.value] = it->second;
        break;
      }
      default:
        break;
      }
    }
    if (!isZero(m.scratchBytes))
      sg.graph.addAlloc(m.scratchBytes, v, {});
    auto pre = preIndex.find(op);
    if (pre != preIndex.end())
      sg.graph.addAlloc(m.preScratchBytes, pre->second, {v});
  }

  // Node that reads an operand: the top-level ancestor of its owner, or its
  // pre-scratch node when the op reads that buffer only through the padded
  // copies; -1 for the terminator.
  auto readerOf = [&](OpOperand &use, unsigned alloc) -> int {
    Operation *top = block.findAncestorOpInBlock(*use.getOwner());
    if (!top || top == terminator)
      return -1;
    // A fused producer's operands are read by the consumer it is fused
    // into (disc-fusion).
    top = getFusionRoot(top);
    if (top == terminator)
      return -1;
    unsigned u = index.lookup(top);
    auto pre = preIndex.find(top);
    if (pre == preIndex.end() || use.getOwner() != top ||
        !llvm::is_contained(model.getOpMemory(top).consumedByPreScratch,
                            use.getOperandNumber()))
      return u;
    bool other = false;
    const OpMemory &m = model.getOpMemory(top);
    top->walk([&](Operation *inner) {
      for (OpOperand &o : inner->getOpOperands()) {
        if (inner == top &&
            llvm::is_contained(m.consumedByPreScratch, o.getOperandNumber()))
          continue;
        auto it = allocOf.find(o.get());
        other |= it != allocOf.end() && it->second == alloc;
      }
    });
    return other ? u : pre->second;
  };
  for (unsigned v = 0; v < n; ++v) {
    if (!sg.ops[v])
      continue;
    for (Value r : sg.ops[v]->getResults()) {
      auto it = allocOf.find(r);
      if (it == allocOf.end())
        continue;
      ScheduleGraph::Alloc &a = sg.graph.allocs[it->second];
      for (OpOperand &use : r.getUses()) {
        int u = readerOf(use, it->second);
        if (u < 0)
          a.liveOut = true;
        else if (static_cast<unsigned>(u) != a.producer)
          a.users.push_back(u);
      }
    }
  }
  return sg;
}

bool mlir::disc::orderStateUpdatesAfterReaders(func::FuncOp func) {
  if (!func.getBody().hasOneBlock())
    return false;
  SmallVector<StateUpdate> updates = findStateUpdates(func);
  if (updates.empty())
    return false;
  Block &block = func.getBody().front();
  SmallVector<Operation *> ops;
  llvm::DenseMap<Operation *, unsigned> index;
  for (Operation &op : block.without_terminator()) {
    index[&op] = ops.size();
    ops.push_back(&op);
  }
  unsigned n = ops.size();
  SmallVector<SmallVector<unsigned>> succs(n);
  SmallVector<unsigned> indegree(n, 0);
  auto edge = [&](unsigned from, unsigned to) {
    succs[from].push_back(to);
    ++indegree[to];
  };
  std::optional<unsigned> lastEffect;
  bool needed = false;
  for (unsigned v = 0; v < n; ++v) {
    ops[v]->walk([&](Operation *inner) {
      for (Value operand : inner->getOperands())
        if (Operation *def = operand.getDefiningOp();
            def && def->getBlock() == &block && index.lookup(def) != v)
          edge(index.lookup(def), v);
    });
    if (!isMemoryEffectFree(ops[v]) && !isPure(ops[v])) {
      if (lastEffect)
        edge(*lastEffect, v);
      lastEffect = v;
    }
  }
  for (const StateUpdate &u : updates)
    for (Operation *r : stateReaders(u)) {
      unsigned from = index.lookup(r), to = index.lookup(u.op);
      edge(from, to);
      needed |= from > to;
    }
  if (!needed)
    return false;
  // Kahn's algorithm, the earliest op in program order first.
  std::priority_queue<unsigned, std::vector<unsigned>, std::greater<unsigned>>
      ready;
  for (unsigned v = 0; v < n; ++v)
    if (indegree[v] == 0)
      ready.push(v);
  SmallVector<unsigned> order;
  while (!ready.empty()) {
    unsigned v = ready.top();
    ready.pop();
    order.push_back(v);
    for (unsigned s : succs[v])
      if (--indegree[s] == 0)
        ready.push(s);
  }
  assert(order.size() == n && "state update edges made a cycle");
  if (order.size() != n)
    return false;
  Operation *terminator = block.getTerminator();
  for (unsigned v : order)
    ops[v]->moveBefore(terminator);
  sinkFusedProducers(block);
  return true;
}
