//===- CudaLibraryCallOperands.cpp - device copies for library calls -----===//
//
// See CudaLibraryCallOperands.h.
//
//===----------------------------------------------------------------------===//
#include "CudaLibraryCallOperands.h"
#include "CudaPasses.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/ADT/MapVector.h"

using namespace mlir;

Value mlir::disc::cuda::viewRoot(Value v, SmallVectorImpl<Operation *> *chain) {
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

namespace {

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
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    SmallVector<func::CallOp> calls;
    func.walk([&](func::CallOp call) {
      if (call.getCallee().starts_with("disc_lib_"))
        calls.push_back(call);
    });
    if (calls.empty())
      return;
    Block &entry = func.getBody().front();
    OpBuilder top = OpBuilder::atBlockBegin(&entry);
    llvm::MapVector<StringRef, Value> uploaded; // global name -> device copy
    int64_t bytes = 0;
    for (func::CallOp call : calls) {
      OpBuilder b(call);
      for (OpOperand &operand : call->getOpOperands()) {
        Value v = operand.get();
        if (!isa<MemRefType>(v.getType()))
          continue;
        SmallVector<Operation *> chain;
        Value root = disc::cuda::viewRoot(v, &chain);
        auto global = root.getDefiningOp<memref::GetGlobalOp>();
        if (!global)
          continue;
        Value &dev = uploaded[global.getName()];
        if (!dev) {
          Location loc = global.getLoc();
          auto type = cast<MemRefType>(root.getType());
          Value host =
              memref::GetGlobalOp::create(top, loc, type, global.getName());
          dev = memref::AllocOp::create(top, loc, type);
          Value token =
              gpu::WaitOp::create(top, loc, top.getType<gpu::AsyncTokenType>(),
                                  ValueRange{})
                  .getAsyncToken();
          token = gpu::MemcpyOp::create(top, loc,
                                        top.getType<gpu::AsyncTokenType>(),
                                        ValueRange{token}, dev, host)
                      .getAsyncToken();
          gpu::WaitOp::create(top, loc, Type(), ValueRange{token});
          bytes += type.getNumElements() *
                   llvm::divideCeil(type.getElementTypeBitWidth(), 8);
        }
        // Re-take the view chain on the device copy.
        IRMapping map;
        map.map(root, dev);
        Value mapped = dev;
        for (Operation *def : llvm::reverse(chain))
          mapped = b.clone(*def, map)->getResult(0);
        operand.set(mapped);
      }
    }
    func.walk([&](func::ReturnOp ret) {
      OpBuilder b(ret);
      for (auto &[name, dev] : uploaded)
        memref::DeallocOp::create(b, ret.getLoc(), dev);
    });
    if (uploaded.empty())
      return;
    // Live through the whole run, like the kernels' constants
    // (disc-gpu-upload-constants): added to the bytes and buffers the
    // predicted peak counts.
    auto i64 = IntegerType::get(&getContext(), 64);
    auto add = [&](StringRef name, int64_t v) {
      if (auto old = func->getAttrOfType<IntegerAttr>(name))
        v += old.getInt();
      func->setAttr(name, IntegerAttr::get(i64, v));
    };
    add("disc.device_constant_bytes", bytes);
    add("disc.device_constant_allocs", static_cast<int64_t>(uploaded.size()));
  }
};

} // namespace

std::unique_ptr<Pass> mlir::disc::createUploadLibraryCallOperandsPass() {
  return std::make_unique<UploadLibraryCallOperandsPass>();
}

void mlir::disc::registerUploadLibraryCallOperandsPass() {
  PassRegistration<UploadLibraryCallOperandsPass>();
}
