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
#include "llvm/ADT/MapVector.h"

namespace mlir::disc {
#define GEN_PASS_DEF_DISCGPUUPLOADLIBRARYCALLOPERANDS
#include "disc/Transforms/GPU/Passes.h.inc"
} // namespace mlir::disc

using namespace mlir;

/// A device buffer filled with the constant `global` at `top`.
static Value createDeviceCopy(OpBuilder &top, memref::GetGlobalOp global) {
  Location loc = global.getLoc();
  auto type = cast<MemRefType>(global.getType());
  Value host = memref::GetGlobalOp::create(top, loc, type, global.getName());
  Value dev = memref::AllocOp::create(top, loc, type);
  disc::cuda::copyOnStream(top, loc, dev, host, /*wait=*/false);
  return dev;
}

/// Adds `v` to the integer attribute `name` of `func` (0 when absent).
static void addToAttr(func::FuncOp func, StringRef name, int64_t v) {
  if (auto old = func->getAttrOfType<IntegerAttr>(name))
    v += old.getInt();
  func->setAttr(name,
                IntegerAttr::get(IntegerType::get(func.getContext(), 64), v));
}

namespace {
struct UploadLibraryCallOperandsPass
    : public disc::impl::DiscGpuUploadLibraryCallOperandsBase<
          UploadLibraryCallOperandsPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    SmallVector<func::CallOp> calls;
    func.walk([&](func::CallOp call) {
      if (call.getCallee().starts_with(disc::kLibraryCallPrefix))
        calls.push_back(call);
    });
    if (calls.empty())
      return;
    OpBuilder top = OpBuilder::atBlockBegin(&func.getBody().front());
    llvm::MapVector<StringRef, Value> uploaded; // global name -> device copy
    int64_t bytes = 0;
    for (func::CallOp call : calls) {
      OpBuilder b(call);
      for (OpOperand &operand : call->getOpOperands()) {
        Value v = operand.get();
        auto global = disc::cuda::viewedConstant(v);
        if (!global)
          continue;
        Value root = global.getResult();
        Value &dev = uploaded[global.getName()];
        if (!dev) {
          dev = createDeviceCopy(top, global);
          auto type = cast<MemRefType>(root.getType());
          bytes += type.getNumElements() *
                   llvm::divideCeil(type.getElementTypeBitWidth(), 8);
        }
        // Re-take the view chain on the device copy.
        operand.set(disc::cuda::retakeViews(b, v, root, dev));
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
    addToAttr(func, "disc.device_constant_bytes", bytes);
    addToAttr(func, "disc.device_constant_allocs",
              static_cast<int64_t>(uploaded.size()));
  }
};
} // namespace
