//===- DedupeKernels.cpp - disc-dedupe-kernels ----------------------------===//
//
// After disc-outline-kernels: kernels `disc_kernel_<n>` with structurally
// identical bodies (OperationEquivalence, locations ignored), the same
// function type and the same discardable attributes become one function;
// the calls of every duplicate call the kernel with the lowest number and
// keep their own locations (trace points and reports name each call's
// node). Repeated blocks of a network lower to the same loop nests, which
// LLVM then optimizes and compiles once (docs/performance.md, "Compile
// time").
//
//===----------------------------------------------------------------------===//
#include "disc/Transforms/CPU/Passes.h"

#include "disc/Target/RuntimeSymbols.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

namespace mlir::disc {
#define GEN_PASS_DEF_DISCDEDUPEKERNELS
#include "disc/Transforms/CPU/Passes.h.inc"
} // namespace mlir::disc

using namespace mlir;

/// A hash of everything `sameKernel` compares: the function type, the
/// discardable attributes and every op of the body (name, attributes,
/// properties, result types, and which earlier value each operand is, by
/// the order in which values are first seen; locations ignored).
static llvm::hash_code kernelHash(func::FuncOp kernel) {
  llvm::hash_code hash = llvm::hash_combine(
      kernel.getFunctionType(), kernel->getDiscardableAttrDictionary(),
      kernel.getArgAttrsAttr(), kernel.getResAttrsAttr());
  llvm::DenseMap<Value, unsigned> numbers;
  for (BlockArgument arg : kernel.getArguments())
    numbers.try_emplace(arg, numbers.size());
  auto number = [&](Value v) -> llvm::hash_code {
    return numbers.try_emplace(v, numbers.size()).first->second;
  };
  kernel.getBody().walk<WalkOrder::PreOrder>([&](Operation *op) {
    hash = llvm::hash_combine(hash, OperationEquivalence::computeHash(
                                        op, number,
                                        OperationEquivalence::ignoreHashValue,
                                        OperationEquivalence::IgnoreLocations));
  });
  return hash;
}

/// Whether a call of `b` may be replaced by a call of `a`: same function
/// type, argument/result and discardable attributes, and bodies equivalent
/// up to locations (arguments mapped in order).
static bool sameKernel(func::FuncOp a, func::FuncOp b) {
  return a.getFunctionType() == b.getFunctionType() &&
         a->getDiscardableAttrDictionary() ==
             b->getDiscardableAttrDictionary() &&
         a.getArgAttrsAttr() == b.getArgAttrsAttr() &&
         a.getResAttrsAttr() == b.getResAttrsAttr() &&
         OperationEquivalence::isRegionEquivalentTo(
             &a.getBody(), &b.getBody(), OperationEquivalence::IgnoreLocations);
}

namespace {
struct DedupeKernelsPass
    : public disc::impl::DiscDedupeKernelsBase<DedupeKernelsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    // Kernels in module order (outlining numbers them in program order),
    // grouped by hash; each group keeps its distinct kernels, first seen
    // first.
    // A kernel referenced other than by a func.call (outlining and
    // parallelization create nothing else) keeps its own function.
    llvm::StringSet<> pinned;
    module.walk([&](Operation *op) {
      if (isa<func::CallOp>(op))
        return;
      for (NamedAttribute attr : op->getAttrs())
        if (auto ref = dyn_cast<FlatSymbolRefAttr>(attr.getValue()))
          pinned.insert(ref.getValue());
    });
    llvm::DenseMap<llvm::hash_code, SmallVector<func::FuncOp, 1>> groups;
    llvm::StringMap<func::FuncOp> replacement;
    SmallVector<func::FuncOp> duplicates;
    for (auto kernel : module.getOps<func::FuncOp>()) {
      if (kernel.isExternal() || !kernel.isPrivate() ||
          !kernel.getName().starts_with(disc::kKernelPrefix) ||
          pinned.contains(kernel.getName()))
        continue;
      ++numKernels;
      SmallVector<func::FuncOp, 1> &distinct = groups[kernelHash(kernel)];
      auto same = llvm::find_if(
          distinct, [&](func::FuncOp k) { return sameKernel(k, kernel); });
      if (same == distinct.end()) {
        ++numDistinct;
        distinct.push_back(kernel);
        continue;
      }
      replacement[kernel.getName()] = *same;
      duplicates.push_back(kernel);
    }
    if (duplicates.empty())
      return;
    module.walk([&](func::CallOp call) {
      auto it = replacement.find(call.getCallee());
      if (it != replacement.end())
        call.setCallee(it->second.getName());
    });
    // The kept kernel's location names every node it now runs for
    // (`--report-codegen`).
    llvm::DenseMap<Operation *, SmallVector<Location>> locs;
    for (func::FuncOp kernel : duplicates) {
      func::FuncOp kept = replacement[kernel.getName()];
      SmallVector<Location> &l = locs[kept];
      if (l.empty())
        l.push_back(kept.getLoc());
      l.push_back(kernel.getLoc());
    }
    for (auto &[kept, l] : locs)
      kept->setLoc(FusedLoc::get(&getContext(), l));
    for (func::FuncOp kernel : duplicates)
      kernel.erase();
  }
};
} // namespace
