//===- MemoryModel.cpp - symbolic bytes, liveness and peak of a function --===//
//
// The per-op allocation rules mirror what the CPU pipeline realizes after
// one-shot bufferization, ownership-based deallocation and
// `optimize-allocation-liveness` (docs/memory.md).
//
//===----------------------------------------------------------------------===//
#include "disc/Transforms/MemoryModel.h"

#include "disc/Dialect/Disc/IR/DiscDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/Format.h"

using namespace mlir;
using namespace mlir::disc;

const char *mlir::disc::stringifyBufferKind(BufferKind kind) {
  switch (kind) {
  case BufferKind::Alloc:
    return "alloc";
  case BufferKind::View:
    return "view";
  case BufferKind::InPlace:
    return "in-place";
  case BufferKind::External:
    return "external";
  }
  return "?";
}

static int64_t elementBytes(Type t) {
  if (t.isIntOrFloat())
    return std::max<int64_t>(1, (t.getIntOrFloatBitWidth() + 7) / 8);
  if (t.isIndex())
    return 8;
  return 0;
}

MemoryModel::MemoryModel(func::FuncOp func, ShapeAnalysis &shapes)
    : func(func), shapes(shapes), ctx(func.getContext()) {}

AffineExpr MemoryModel::cst(int64_t c) { return getAffineConstantExpr(c, ctx); }

AffineExpr MemoryModel::payloadBytes(Value v) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  if (!t)
    return cst(0);
  AffineExpr bytes = cst(elementBytes(t.getElementType()));
  SmallVector<AffineExpr> dims = shapes.getDims(v);
  for (int64_t i = 0; i < t.getRank(); ++i) {
    if (!t.isDynamicDim(i)) {
      bytes = bytes * t.getDimSize(i);
      continue;
    }
    assert(i < (int64_t)dims.size() && dims[i] &&
           "the shape analysis gives every dynamic dim an expression");
    bytes = bytes * dims[i];
  }
  return shapes.getSolver().simplify(shapes.normalize(bytes));
}

AffineExpr MemoryModel::allocBytes(Value v) {
  return shapes.getSolver().simplify(payloadBytes(v) + kAllocPaddingBytes);
}

/// True when every step of a slice is a positive constant: the lowering
/// then makes the result a strided view of the operand.
static bool isViewSlice(SliceOp op) {
  DenseElementsAttr steps;
  if (!matchPattern(op.getSteps(), m_Constant(&steps)))
    return false;
  return llvm::all_of(steps.getValues<APInt>(),
                      [](const APInt &s) { return s.isStrictlyPositive(); });
}

OpMemory MemoryModel::describe(Operation *op) {
  OpMemory m;
  m.op = op;
  m.scratchBytes = cst(0);
  auto add = [&](Value r, BufferKind kind, int operand = -1) {
    ResultMemory rm;
    rm.value = r;
    rm.kind = kind;
    rm.operand = operand;
    rm.bytes = kind == BufferKind::Alloc ? allocBytes(r) : cst(0);
    if (kind == BufferKind::Alloc)
      ++m.numAllocs;
    m.results.push_back(rm);
  };
  auto addScratch = [&](AffineExpr payload) {
    m.scratchBytes = shapes.getSolver().simplify(m.scratchBytes + payload +
                                                 kAllocPaddingBytes);
    ++m.numAllocs;
  };

  if (op->hasTrait<OpTrait::ConstantLike>()) {
    for (Value r : op->getResults())
      add(r, BufferKind::External);
    return m;
  }
  if (auto reshape = dyn_cast<DynamicReshapeOp>(op)) {
    // tensor.reshape of a dense buffer is a view; its index shape operand
    // is a small buffer unless every dim is static (then a constant).
    add(reshape.getResult(), BufferKind::View, 0);
    auto t = cast<RankedTensorType>(reshape.getType());
    if (!t.hasStaticShape())
      addScratch(cst(8 * t.getRank()));
    return m;
  }
  if (auto slice = dyn_cast<SliceOp>(op)) {
    add(slice.getResult(),
        isViewSlice(slice) ? BufferKind::View : BufferKind::Alloc, 0);
    return m;
  }
  for (Value r : op->getResults())
    add(r, isa<RankedTensorType>(r.getType()) ? BufferKind::Alloc
                                              : BufferKind::External);
  return m;
}

const OpMemory &MemoryModel::getOpMemory(Operation *op) {
  auto it = cache.find(op);
  if (it != cache.end())
    return it->second;
  return cache.try_emplace(op, describe(op)).first->second;
}

SmallVector<Operation *> MemoryModel::programOrder() {
  SmallVector<Operation *> order;
  for (Operation &op : func.getBody().front().without_terminator())
    order.push_back(&op);
  return order;
}

Value MemoryModel::getBufferRoot(Value v) {
  // Follow views and in-place updates to the allocating result.
  for (int guard = 0; guard < 1 << 20; ++guard) {
    Operation *def = v.getDefiningOp();
    if (!def || def->getParentOp() != func.getOperation())
      return Value();
    const OpMemory &m = getOpMemory(def);
    const ResultMemory &rm = m.results[cast<OpResult>(v).getResultNumber()];
    switch (rm.kind) {
    case BufferKind::Alloc:
      return v;
    case BufferKind::External:
      return Value();
    case BufferKind::View:
    case BufferKind::InPlace:
      v = def->getOperand(rm.operand);
      continue;
    }
  }
  return Value();
}

MemoryProfile MemoryModel::profile(ArrayRef<Operation *> order) {
  MemoryProfile p;
  p.order.assign(order.begin(), order.end());
  ShapeConstraintSolver &solver = shapes.getSolver();
  unsigned n = order.size();
  llvm::DenseMap<Value, unsigned> bufferIndex;
  // Allocations in order; live ranges extended by every use.
  for (auto [i, op] : llvm::enumerate(order)) {
    const OpMemory &m = getOpMemory(op);
    for (const ResultMemory &rm : m.results) {
      if (rm.kind != BufferKind::Alloc)
        continue;
      bufferIndex[rm.value] = p.buffers.size();
      p.buffers.push_back({rm.value, rm.bytes, (unsigned)i, (unsigned)i});
    }
    p.numAllocs += m.numAllocs;
  }
  auto use = [&](Value v, unsigned at) {
    Value root = getBufferRoot(v);
    if (!root)
      return;
    auto it = bufferIndex.find(root);
    assert(it != bufferIndex.end() && "use of a buffer not in the order");
    BufferLiveRange &b = p.buffers[it->second];
    assert(b.def <= at && "order does not respect a dependency");
    b.lastUse = std::max(b.lastUse, at);
  };
  for (auto [i, op] : llvm::enumerate(order)) {
    op->walk([&](Operation *nested) {
      for (Value v : nested->getOperands())
        if (v.getParentRegion() == &func.getBody())
          use(v, i);
    });
  }
  Operation *term = func.getBody().front().getTerminator();
  for (Value v : term->getOperands())
    use(v, n);

  // Live bytes per program point.
  SmallVector<SmallVector<unsigned>> freedAfter(n + 1);
  for (auto [k, b] : llvm::enumerate(p.buffers))
    freedAfter[b.lastUse].push_back(k);
  AffineExpr live = cst(0);
  for (auto [i, op] : llvm::enumerate(order)) {
    p.liveBefore.push_back(live);
    const OpMemory &m = getOpMemory(op);
    AffineExpr at = live + m.scratchBytes;
    for (const ResultMemory &rm : m.results)
      if (rm.kind == BufferKind::Alloc)
        at = at + rm.bytes;
    at = solver.simplify(at);
    p.liveAt.push_back(at);
    live = at - m.scratchBytes;
    for (unsigned k : freedAfter[i])
      live = live - p.buffers[k].bytes;
    live = solver.simplify(live);
  }
  p.liveAtExit = live;

  // Peak candidates: distinct live bytes, minus the ones another candidate
  // provably covers (the difference is a polynomial with non-negative
  // coefficients over non-negative symbols).
  std::function<bool(AffineExpr)> nonNegative = [&](AffineExpr e) -> bool {
    switch (e.getKind()) {
    case AffineExprKind::Constant:
      return cast<AffineConstantExpr>(e).getValue() >= 0;
    case AffineExprKind::SymbolId:
      return true;
    case AffineExprKind::DimId:
      return false;
    case AffineExprKind::Mod:
      return true;
    case AffineExprKind::Add:
    case AffineExprKind::Mul:
    case AffineExprKind::FloorDiv:
    case AffineExprKind::CeilDiv: {
      auto b = cast<AffineBinaryOpExpr>(e);
      return nonNegative(b.getLHS()) && nonNegative(b.getRHS());
    }
    }
    return false;
  };
  auto covers = [&](AffineExpr big, AffineExpr small) {
    return nonNegative(solver.simplify(big - small));
  };
  SmallVector<AffineExpr> kept;
  SmallVector<unsigned> keptAt;
  for (auto [i, e] : llvm::enumerate(p.liveAt)) {
    if (llvm::any_of(kept, [&](AffineExpr k) { return covers(k, e); }))
      continue;
    for (size_t k = kept.size(); k-- > 0;)
      if (covers(e, kept[k])) {
        kept.erase(kept.begin() + k);
        keptAt.erase(keptAt.begin() + k);
      }
    kept.push_back(e);
    keptAt.push_back(i);
  }
  if (kept.empty()) {
    kept.push_back(cst(0));
    keptAt.push_back(0);
  }
  p.peakCandidates = std::move(kept);
  p.peakCandidatePoints = std::move(keptAt);
  return p;
}

//===----------------------------------------------------------------------===//
// Evaluation and predictability
//===----------------------------------------------------------------------===//

static int64_t floorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

static std::optional<int64_t>
evalExpr(AffineExpr e,
         llvm::function_ref<std::optional<int64_t>(unsigned)> sym) {
  switch (e.getKind()) {
  case AffineExprKind::Constant:
    return cast<AffineConstantExpr>(e).getValue();
  case AffineExprKind::SymbolId:
    return sym(cast<AffineSymbolExpr>(e).getPosition());
  case AffineExprKind::DimId:
    return std::nullopt;
  default:
    break;
  }
  auto b = cast<AffineBinaryOpExpr>(e);
  std::optional<int64_t> l = evalExpr(b.getLHS(), sym);
  std::optional<int64_t> r = evalExpr(b.getRHS(), sym);
  if (!l || !r)
    return std::nullopt;
  switch (e.getKind()) {
  case AffineExprKind::Add:
    return *l + *r;
  case AffineExprKind::Mul:
    return *l * *r;
  case AffineExprKind::FloorDiv:
    if (*r == 0)
      return std::nullopt;
    return floorDiv(*l, *r);
  case AffineExprKind::CeilDiv:
    if (*r == 0)
      return std::nullopt;
    return -floorDiv(-*l, *r);
  case AffineExprKind::Mod: {
    if (*r == 0)
      return std::nullopt;
    int64_t m = *l % *r;
    return m < 0 ? m + (*r < 0 ? -*r : *r) : m;
  }
  default:
    return std::nullopt;
  }
}

std::optional<int64_t> MemoryModel::evaluate(AffineExpr e,
                                             ArrayRef<int64_t> bindings) const {
  return evalExpr(e, [&](unsigned i) -> std::optional<int64_t> {
    if (i >= bindings.size())
      return std::nullopt;
    return bindings[i];
  });
}

std::optional<int64_t>
MemoryModel::evaluate(AffineExpr e,
                      const llvm::StringMap<int64_t> &byName) const {
  return evalExpr(e, [&](unsigned i) -> std::optional<int64_t> {
    auto it = byName.find(shapes.getSymbolName(i));
    if (it == byName.end())
      return std::nullopt;
    return it->second;
  });
}

std::optional<int64_t>
MemoryModel::evaluatePeak(const MemoryProfile &p,
                          const llvm::StringMap<int64_t> &byName) {
  std::optional<int64_t> best;
  for (AffineExpr e : p.peakCandidates) {
    std::optional<int64_t> v = evaluate(e, byName);
    if (!v)
      return std::nullopt;
    best = best ? std::max(*best, *v) : *v;
  }
  return best;
}

static void collectSymbols(AffineExpr e, llvm::SetVector<unsigned> &out) {
  e.walk([&](AffineExpr x) {
    if (auto s = dyn_cast<AffineSymbolExpr>(x))
      out.insert(s.getPosition());
  });
}

bool MemoryModel::isPredictable(const MemoryProfile &p, std::string *reason) {
  llvm::DenseSet<unsigned> inputSymbols;
  for (BlockArgument arg : func.getArguments())
    for (AffineExpr d : shapes.getDims(arg))
      if (auto s = dyn_cast_or_null<AffineSymbolExpr>(d))
        inputSymbols.insert(s.getPosition());
  llvm::SetVector<unsigned> used;
  for (AffineExpr e : p.peakCandidates)
    collectSymbols(e, used);
  for (unsigned s : used) {
    if (inputSymbols.contains(s))
      continue;
    if (reason) {
      *reason = "size '" + shapes.getSymbolName(s).str() + "' is not an " +
                "input dim";
      // Name the first op whose buffer depends on it.
      for (const BufferLiveRange &b : p.buffers) {
        llvm::SetVector<unsigned> syms;
        collectSymbols(b.bytes, syms);
        if (!syms.contains(s))
          continue;
        *reason += " (result of '" +
                   b.root.getDefiningOp()->getName().getStringRef().str() +
                   "'" +
                   (shapes.isUnknownSymbol(s) ? ", not derivable by the shape "
                                                "rules"
                                              : ", known only at run time") +
                   ")";
        break;
      }
    }
    return false;
  }
  return true;
}

//===----------------------------------------------------------------------===//
// JSON and printing
//===----------------------------------------------------------------------===//

static llvm::json::Value exprToJson(AffineExpr e, ShapeAnalysis &sa) {
  switch (e.getKind()) {
  case AffineExprKind::Constant:
    return cast<AffineConstantExpr>(e).getValue();
  case AffineExprKind::SymbolId:
    return sa.getSymbolName(cast<AffineSymbolExpr>(e).getPosition()).str();
  case AffineExprKind::DimId:
    return nullptr;
  default:
    break;
  }
  auto b = cast<AffineBinaryOpExpr>(e);
  const char *op = "+";
  switch (e.getKind()) {
  case AffineExprKind::Mul:
    op = "*";
    break;
  case AffineExprKind::FloorDiv:
    op = "floordiv";
    break;
  case AffineExprKind::CeilDiv:
    op = "ceildiv";
    break;
  case AffineExprKind::Mod:
    op = "mod";
    break;
  default:
    break;
  }
  return llvm::json::Array{op, exprToJson(b.getLHS(), sa),
                           exprToJson(b.getRHS(), sa)};
}

llvm::json::Object MemoryModel::toJson(const MemoryProfile &p) {
  std::string reason;
  if (!isPredictable(p, &reason))
    return llvm::json::Object{{"predictable", false}, {"reason", reason}};
  llvm::json::Array exprs, texts;
  for (AffineExpr e : p.peakCandidates) {
    exprs.push_back(exprToJson(e, shapes));
    texts.push_back(render(e));
  }
  return llvm::json::Object{{"predictable", true},
                            {"num_allocs", p.numAllocs},
                            {"peak_bytes", std::move(exprs)},
                            {"peak_bytes_text", std::move(texts)}};
}

/// Value of a symbol for printing: its LIKELY value, else its minimum.
static llvm::StringMap<int64_t> likelyBindings(ShapeAnalysis &sa) {
  llvm::StringMap<int64_t> b;
  ShapeConstraintSolver &solver = sa.getSolver();
  for (unsigned i = 0, e = sa.getNumSymbols(); i < e; ++i) {
    const SymbolInfo &info = solver.getSymbol(i);
    b[sa.getSymbolName(i)] = info.likely ? *info.likely : info.min;
  }
  return b;
}

LogicalResult mlir::disc::printMemory(ModuleOp module, StringRef entry,
                                      llvm::raw_ostream &os) {
  auto func = module.lookupSymbol<func::FuncOp>(entry);
  if (!func)
    return module.emitError("no entry function '") << entry << "'";
  llvm::StringMap<DimRange> ranges = collectDimRanges(module);
  ShapeAnalysis sa(func, ranges);
  sa.run();
  sa.mergeEqualSymbols();
  MemoryModel mm(func, sa);
  MemoryProfile p = mm.profile();
  llvm::StringMap<int64_t> likely = likelyBindings(sa);
  auto value = [&](AffineExpr e) {
    std::optional<int64_t> v = mm.evaluate(e, likely);
    return v ? std::to_string(*v) : std::string("?");
  };
  os << "bindings:";
  for (auto &b : likely)
    if (llvm::any_of(func.getArguments(), [&](BlockArgument a) {
          return llvm::any_of(sa.getDims(a), [&](AffineExpr d) {
            auto s = dyn_cast_or_null<AffineSymbolExpr>(d);
            return s && sa.getSymbolName(s.getPosition()) == b.getKey();
          });
        }))
      os << " " << b.getKey() << "=" << b.getValue();
  os << "\n";
  for (auto [i, op] : llvm::enumerate(p.order)) {
    const OpMemory &m = mm.getOpMemory(op);
    os << "#" << i << " " << op->getName().getStringRef();
    for (const ResultMemory &rm : m.results) {
      if (!isa<RankedTensorType>(rm.value.getType()))
        continue;
      os << "  " << stringifyBufferKind(rm.kind);
      if (rm.kind == BufferKind::Alloc)
        os << "=" << mm.render(rm.bytes);
      else if (rm.operand >= 0)
        os << "(operand " << rm.operand << ")";
    }
    if (!isa<AffineConstantExpr>(m.scratchBytes) ||
        cast<AffineConstantExpr>(m.scratchBytes).getValue() != 0)
      os << "  scratch=" << mm.render(m.scratchBytes);
    os << "\n    live=" << mm.render(p.liveAt[i]) << "  [" << value(p.liveAt[i])
       << "]\n";
  }
  os << "live at exit: " << mm.render(p.liveAtExit) << "  ["
     << value(p.liveAtExit) << "]\n";
  os << "peak = max of " << p.peakCandidates.size() << " candidates:\n";
  for (auto [e, at] : llvm::zip(p.peakCandidates, p.peakCandidatePoints))
    os << "  #" << at << " " << mm.render(e) << "  [" << value(e) << "]\n";
  std::optional<int64_t> peak = mm.evaluatePeak(p, likely);
  std::string reason;
  bool predictable = mm.isPredictable(p, &reason);
  os << "peak: " << (peak ? std::to_string(*peak) : std::string("?"))
     << " bytes at the bindings above, " << p.numAllocs << " allocations"
     << (predictable ? std::string("")
                     : "; not predictable from input shapes: " + reason)
     << "\n";
  return success();
}

FailureOr<llvm::json::Object> mlir::disc::buildMemoryJson(ModuleOp module,
                                                          StringRef entry) {
  auto func = module.lookupSymbol<func::FuncOp>(entry);
  if (!func)
    return module.emitError("no entry function '") << entry << "'";
  llvm::StringMap<DimRange> ranges = collectDimRanges(module);
  ShapeAnalysis sa(func, ranges);
  sa.run();
  sa.mergeEqualSymbols();
  MemoryModel mm(func, sa);
  return mm.toJson(mm.profile());
}
