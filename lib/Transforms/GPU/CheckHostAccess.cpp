//===- CheckHostAccess.cpp - disc-gpu-check-host-access -------------------===//
//
// After the GPU mapping, the host code may only compute sizes and launch
// kernels. An op that still reads or writes device memory on the host, a
// library call, or a call inside a kernel (a run-time check) is not
// supported on the CUDA target yet: the error names the ONNX node.
//
//===----------------------------------------------------------------------===//
#include "disc/Transforms/GPU/Passes.h"

#include "Utils.h"

#include "disc/Conversion/CudaLibraryCalls.h"
#include "disc/Target/RuntimeSymbols.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::disc {
#define GEN_PASS_DEF_DISCGPUCHECKHOSTACCESS
#include "disc/Transforms/GPU/Passes.h.inc"
} // namespace mlir::disc

using namespace mlir;
using disc::describeOnnxNode;

namespace {

/// Host memory in the compiled code: constants and stack buffers. Every
/// other buffer (entry arguments, memref.alloc through the runtime) is
/// device memory on the CUDA target.
bool isHostMemory(Value memref) {
  Operation *def = disc::cuda::viewRoot(memref).getDefiningOp();
  return def && isa<memref::GetGlobalOp, memref::AllocaOp>(def);
}

struct CheckHostAccessPass
    : public disc::impl::DiscGpuCheckHostAccessBase<CheckHostAccessPass> {
  using DiscGpuCheckHostAccessBase::DiscGpuCheckHostAccessBase;

  void runOnOperation() override {
    bool failedAny = false;
    auto reject = [&](Operation *op, const Twine &why) {
      op->emitError() << describeOnnxNode(op)
                      << " is not supported on --target=cuda yet: " << why;
      failedAny = true;
    };
    getOperation().walk([&](func::FuncOp func) {
      func.walk([&](Operation *op) {
        bool inKernel = op->getParentOfType<gpu::LaunchOp>() != nullptr;
        if (inKernel) {
          if (isa<func::CallOp>(op))
            reject(op, "a call inside a kernel (" +
                           cast<func::CallOp>(op).getCallee() +
                           "; run-time checks and library calls run on the "
                           "host)");
          else if (isa<memref::AllocOp>(op))
            reject(op, "an allocation inside a kernel");
          return;
        }
        if (auto launch = dyn_cast<gpu::LaunchOp>(op)) {
          llvm::SetVector<Value> captured;
          getUsedValuesDefinedAbove(launch.getBody(), captured);
          for (Value v : captured) {
            if (!isa<MemRefType>(v.getType()) || !isHostMemory(v))
              continue;
            // Emulated kernels run on the host: host memory is readable.
            if (emulate)
              continue;
            reject(launch, "a kernel reads a host stack buffer");
          }
          return;
        }
        if (auto call = dyn_cast<func::CallOp>(op)) {
          // cuBLAS/cuDNN calls run on the host and launch device work on
          // device buffers (CudaLibraryCalls.h).
          if (call.getCallee().starts_with(disc::kLibraryCallPrefix)) {
            if (llvm::any_of(call.getOperands(), [](Value v) {
                  return isa<MemRefType>(v.getType()) && isHostMemory(v);
                }))
              reject(op, "library call '" + call.getCallee() +
                             "' reads host memory");
            return;
          }
          // Run-time check failures, device copies and slots, and the
          // rematerialization points (evict, regenerate: host-side runtime
          // calls around launches).
          if (call.getCallee() != disc::kCheckFailedFn &&
              call.getCallee() != disc::kDeviceScratchFn &&
              !call.getCallee().starts_with(disc::kDeviceConstantPrefix) &&
              !call.getCallee().starts_with(disc::kRematPrefix))
            reject(op, "a call to '" + call.getCallee() +
                           "' (no CUDA lowering for it)");
          return;
        }
        auto touches = [&](Value m) { return !isHostMemory(m); };
        if (auto load = dyn_cast<memref::LoadOp>(op)) {
          if (touches(load.getMemRef()))
            reject(op, "it reads tensor data on the host (" +
                           op->getName().getStringRef() + ")");
        } else if (auto store = dyn_cast<memref::StoreOp>(op)) {
          if (touches(store.getMemRef()))
            reject(op, "it writes tensor data on the host (" +
                           op->getName().getStringRef() + ")");
        } else if (isa<linalg::LinalgOp, memref::CopyOp>(op)) {
          reject(op, "it was not mapped to a kernel (" +
                         op->getName().getStringRef() + ")");
        }
      });
    });
    if (failedAny) {
      // disc-compile exits 2 (unsupported input) rather than 1.
      getOperation()->setAttr("disc.cuda_unsupported",
                              UnitAttr::get(&getContext()));
      signalPassFailure();
    }
  }
};
} // namespace
