//===- CudaLibraryCallOperands.cpp - device copies for library calls -----===//
//
// See CudaLibraryCallOperands.h.
//
//===----------------------------------------------------------------------===//
#include "CudaLibraryCallOperands.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "mlir/Pass/PassRegistry.h"

using namespace mlir;

namespace {

/// The buffer a view is taken of, and the view ops from it to `v`
/// (outermost last).
Value viewRoot(Value v, SmallVectorImpl<Operation *> *chain) {
  while (Operation *def = v.getDefiningOp()) {
    auto view = dyn_cast<ViewLikeOpInterface>(def);
    if (!view)
      break;
    if (chain)
      chain->push_back(def);
    v = view.getViewSource();
  }
  return v;
}

struct UploadLibraryCallOperandsPass
    : public PassWrapper<UploadLibraryCallOperandsPass,
                         OperationPass<func::FuncOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(UploadLibraryCallOperandsPass)
  StringRef getArgument() const final {
    return "disc-gpu-upload-library-call-operands";
  }
  StringRef getDescription() const final {
    return "Copy the host constants a cuBLAS/cuDNN library call reads to "
           "device buffers";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<gpu::GPUDialect, memref::MemRefDialect>();
  }
  void runOnOperation() override {
    SmallVector<func::CallOp> calls;
    getOperation().walk([&](func::CallOp call) {
      if (call.getCallee().starts_with("disc_lib_"))
        calls.push_back(call);
    });
    for (func::CallOp call : calls) {
      OpBuilder b(call);
      Location loc = call.getLoc();
      llvm::DenseMap<Value, Value> uploaded; // global -> device copy
      SmallVector<Value> toFree;
      for (OpOperand &operand : call->getOpOperands()) {
        Value v = operand.get();
        if (!isa<MemRefType>(v.getType()))
          continue;
        SmallVector<Operation *> chain;
        Value root = viewRoot(v, &chain);
        if (!root.getDefiningOp<memref::GetGlobalOp>())
          continue;
        Value dev = uploaded.lookup(root);
        if (!dev) {
          dev =
              memref::AllocOp::create(b, loc, cast<MemRefType>(root.getType()));
          Value token =
              gpu::WaitOp::create(b, loc, b.getType<gpu::AsyncTokenType>(),
                                  ValueRange{})
                  .getAsyncToken();
          token =
              gpu::MemcpyOp::create(b, loc, b.getType<gpu::AsyncTokenType>(),
                                    ValueRange{token}, dev, root)
                  .getAsyncToken();
          gpu::WaitOp::create(b, loc, Type(), ValueRange{token});
          uploaded[root] = dev;
          toFree.push_back(dev);
        }
        // Re-take the view chain on the device copy.
        IRMapping map;
        map.map(root, dev);
        Value mapped = dev;
        for (Operation *def : llvm::reverse(chain))
          mapped = b.clone(*def, map)->getResult(0);
        operand.set(mapped);
      }
      b.setInsertionPointAfter(call);
      for (Value dev : toFree)
        memref::DeallocOp::create(b, loc, dev);
    }
  }
};

} // namespace

std::unique_ptr<Pass> mlir::disc::createUploadLibraryCallOperandsPass() {
  return std::make_unique<UploadLibraryCallOperandsPass>();
}

void mlir::disc::registerUploadLibraryCallOperandsPass() {
  PassRegistration<UploadLibraryCallOperandsPass>();
}
