//===- NameKernels.cpp - disc-gpu-name-kernels ----------------------------===//
//
// gpu-kernel-outlining gives each kernel a gpu.module of its own with a
// unique name (`disc_entry_kernel_3`) but names the gpu.func inside after
// the host function (`disc_entry_kernel`) in every module. This renames
// each module's single kernel to the module's name and updates the
// launches, so the symbol the runtime launches is unique per kernel
// (docs/cuda.md, "Kernel times").
//
//===----------------------------------------------------------------------===//
#include "disc/Transforms/GPU/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::disc {
#define GEN_PASS_DEF_DISCGPUNAMEKERNELS
#include "disc/Transforms/GPU/Passes.h.inc"
} // namespace mlir::disc

using namespace mlir;

namespace {

struct NameKernelsPass
    : public disc::impl::DiscGpuNameKernelsBase<NameKernelsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    // Per module: its kernel's old name, when renamed.
    llvm::DenseMap<StringAttr, std::pair<StringAttr, StringAttr>> renamed;
    for (auto gpuModule : module.getOps<gpu::GPUModuleOp>()) {
      SmallVector<gpu::GPUFuncOp> kernels;
      for (auto fn : gpuModule.getOps<gpu::GPUFuncOp>())
        if (fn.isKernel())
          kernels.push_back(fn);
      if (kernels.size() != 1)
        continue;
      StringAttr want = gpuModule.getSymNameAttr();
      StringAttr old = kernels[0].getNameAttr();
      if (old == want)
        continue;
      if (SymbolTable::lookupSymbolIn(gpuModule, want)) {
        gpuModule.emitError("disc-gpu-name-kernels: the name '")
            << want.getValue() << "' is taken in the module";
        return signalPassFailure();
      }
      SymbolTable::setSymbolName(kernels[0], want);
      renamed[want] = {old, want};
    }
    if (renamed.empty())
      return;
    module.walk([&](gpu::LaunchFuncOp launch) {
      auto it = renamed.find(launch.getKernelModuleName());
      if (it == renamed.end() || launch.getKernelName() != it->second.first)
        return;
      launch.setKernelAttr(SymbolRefAttr::get(
          it->first, {FlatSymbolRefAttr::get(it->second.second)}));
    });
  }
};

} // namespace
