//===- OutlineKernels.cpp - disc-outline-kernels --------------------------===//
//
// Moves every top-level loop nest of the entry function (a linalg op on
// buffers, or an `scf.for`/`scf.if` without results) into its own private
// function `disc_kernel_<n>` and calls it in place (the nests of each
// branch of disc-stitch-rows' run-time choice, kRowVersionsAttr, each in
// their own). Buffers and scalars
// defined above become arguments; constants and globals are cloned in.
// Allocations and deallocations stay in the caller, so what reaches the
// allocator and in which order does not change (docs/memory.md). The
// kernels keep LLVM's optimizer and code generator away from one huge
// function (their cost grows faster than the function's size), and let
// the emitter compile the module in parallel parts (ModelEmitter.cpp).
// They are marked `noinline` when translated to LLVM IR.
//
//===----------------------------------------------------------------------===//
#include "disc/Transforms/CPU/Passes.h"

#include "Utils.h"

#include "disc/Target/RuntimeSymbols.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::disc {
#define GEN_PASS_DEF_DISCOUTLINEKERNELS
#include "disc/Transforms/CPU/Passes.h.inc"
} // namespace mlir::disc

using namespace mlir;

/// Ops cloned into a kernel rather than passed to it.
static bool isClonable(Operation *op) {
  return op->hasTrait<OpTrait::ConstantLike>() || isa<memref::GetGlobalOp>(op);
}

/// Writes `disc.noalias_params` on the kernel: the LLVM parameter index
/// of the aligned pointer of every memref argument whose buffer no other
/// argument views (a memref of rank r becomes 3 + 2r parameters: the
/// allocated and aligned pointers, the offset, sizes and strides). The
/// emitter turns them into `noalias`, so LLVM may keep a reduction's
/// accumulator in a register and vectorize without run-time alias checks.
/// Nothing is marked when some buffer's origin is unknown.
static void setNoAliasParams(func::FuncOp kernel, ArrayRef<Value> inputs) {
  SmallVector<Value> roots;
  for (Value v : inputs) {
    if (!isa<MemRefType>(v.getType())) {
      roots.push_back(Value());
      continue;
    }
    Value root = disc::bufferRoot(v);
    if (!root)
      return;
    roots.push_back(root);
  }
  SmallVector<int32_t> params;
  int32_t param = 0;
  for (auto [i, v] : llvm::enumerate(inputs)) {
    auto type = dyn_cast<MemRefType>(v.getType());
    if (!type) {
      ++param;
      continue;
    }
    if (llvm::count(roots, roots[i]) == 1)
      params.push_back(param + 1);
    param += 3 + 2 * type.getRank();
  }
  if (!params.empty())
    kernel->setAttr("disc.noalias_params",
                    DenseI32ArrayAttr::get(kernel.getContext(), params));
}

/// Whether `op`, a top-level op of the entry function, is a loop nest to
/// outline: a linalg op or an scf.for without results, or an scf.if
/// around one (an scf.if of run-time checks only stays inline).
static bool isLoopNest(Operation &op) {
  if (op.getNumResults() != 0 || op.getNumRegions() == 0)
    return false;
  bool loops = isa<linalg::LinalgOp, scf::ForOp>(op);
  if (isa<scf::IfOp>(op))
    op.walk([&](Operation *inner) {
      loops |= isa<linalg::LinalgOp, scf::ForOp>(inner);
    });
  return loops;
}

/// Moves `op` into a new private function `disc_kernel_<n>` of the module
/// of `symbols` and calls it in place.
static void outline(SymbolTable &symbols, Operation *op, unsigned n) {
  // Values the op reads that are defined outside it.
  llvm::SetVector<Value> inputs;
  auto collect = [&](Value v) {
    Operation *def = v.getDefiningOp();
    if (def && isClonable(def) && def->getNumOperands() == 0)
      return;
    inputs.insert(v);
  };
  for (Value v : op->getOperands())
    collect(v);
  auto outside = [&](Value v) {
    return !op->isAncestor(v.getParentBlock()->getParentOp());
  };
  op->walk([&](Operation *nested) {
    for (Value v : nested->getOperands())
      if (outside(v))
        collect(v);
  });
  auto module = cast<ModuleOp>(symbols.getOp());
  OpBuilder b(module.getContext());
  b.setInsertionPointToEnd(module.getBody());
  SmallVector<Type> types;
  for (Value v : inputs)
    types.push_back(v.getType());
  auto kernel = func::FuncOp::create(
      b, op->getLoc(), disc::kKernelPrefix.str() + std::to_string(n),
      b.getFunctionType(types, {}));
  kernel.setPrivate();
  symbols.insert(kernel);
  Block *body = kernel.addEntryBlock();
  IRMapping map;
  for (auto [v, arg] : llvm::zip(inputs, body->getArguments()))
    map.map(v, arg);
  b.setInsertionPointToStart(body);
  // Constants and globals used by the op are cloned in.
  auto cloneDefs = [&](Value v) {
    if (map.contains(v) || !outside(v))
      return;
    Operation *def = v.getDefiningOp();
    if (def && isClonable(def) && def->getNumOperands() == 0)
      b.clone(*def, map);
  };
  for (Value v : op->getOperands())
    cloneDefs(v);
  op->walk([&](Operation *nested) {
    for (Value v : nested->getOperands())
      cloneDefs(v);
  });
  b.clone(*op, map);
  func::ReturnOp::create(b, op->getLoc());
  setNoAliasParams(kernel, inputs.getArrayRef());
  OpBuilder caller(op);
  func::CallOp::create(caller, op->getLoc(), kernel, inputs.getArrayRef());
  op->erase();
}

namespace {
struct OutlineKernelsPass
    : public disc::impl::DiscOutlineKernelsBase<OutlineKernelsPass> {
  void runOnOperation() override {
    SymbolTable symbols(getOperation());
    unsigned next = 0;
    SmallVector<func::FuncOp> funcs(getOperation().getOps<func::FuncOp>());
    for (func::FuncOp func : funcs) {
      if (func.isExternal() || func.getBody().getBlocks().size() != 1)
        continue;
      SmallVector<Operation *> kernels;
      for (Operation &op : func.getBody().front()) {
        // disc-stitch-rows' choice between its row loop and the separate
        // nests: each branch's nests become kernels of their own.
        if (op.hasAttr(disc::kRowVersionsAttr)) {
          for (Region &r : op.getRegions())
            for (Operation &inner : r.getOps())
              if (isLoopNest(inner))
                kernels.push_back(&inner);
          continue;
        }
        if (isLoopNest(op))
          kernels.push_back(&op);
      }
      for (Operation *op : kernels)
        outline(symbols, op, next++);
    }
  }
};
} // namespace
