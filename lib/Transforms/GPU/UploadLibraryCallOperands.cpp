//===- UploadLibraryCallOperands.cpp - Device copies for library calls ----===//
//
// A library call of the CUDA target (`disc_lib_*`: cuBLAS/cuDNN,
// CudaLibraryCalls.h) runs on device memory, so each constant of model.so a
// call reads (Conv weights, a bias) gets one device copy per run, as
// disc-gpu-upload-constants does for kernels: allocated through the runtime
// at the start of the function, filled with gpu.memcpy on the session
// stream, freed before it returns. Their bytes and buffers are added to
// `disc.device_constant_bytes` / `disc.device_constant_allocs` on the
// function (the predicted peak).
//
//===----------------------------------------------------------------------===//
#include "disc/Transforms/GPU/Passes.h"

#include "Utils.h"

#include "disc/Target/RuntimeSymbols.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/MapVector.h"

namespace mlir::disc {
#define GEN_PASS_DEF_DISCGPUUPLOADLIBRARYCALLOPERANDS
#include "disc/Transforms/GPU/Passes.h.inc"
} // namespace mlir::disc

using namespace mlir;

namespace {

struct UploadLibraryCallOperandsPass
    : public disc::impl::DiscGpuUploadLibraryCallOperandsBase<
          UploadLibraryCallOperandsPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    SmallVector<func::CallOp> calls;
    func.walk([&](func::CallOp call) {
      if (call.getCallee().starts_with(disc::kLibraryCallPrefix))
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
