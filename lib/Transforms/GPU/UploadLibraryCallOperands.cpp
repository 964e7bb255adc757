//===- UploadLibraryCallOperands.cpp - Device copies for library calls ----===//
//
// A library call of the CUDA target (`disc_lib_*`: cuBLAS/cuDNN,
// CudaLibraryCalls.h) runs on device memory, so each constant of model.so a
// call reads (Conv weights, a bias) is read from the session's device copy,
// as disc-gpu-upload-constants does for kernels: requested once per run at
// the start of the function, uploaded by the runtime on the session's first
// request and kept (outside the tracked peak, like model.so's constants on
// the CPU, docs/memory.md).
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

namespace {
struct UploadLibraryCallOperandsPass
    : public disc::impl::DiscGpuUploadLibraryCallOperandsBase<
          UploadLibraryCallOperandsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<func::FuncOp> funcs(module.getOps<func::FuncOp>());
    for (func::FuncOp func : funcs)
      if (failed(runOn(module, func)))
        return signalPassFailure();
  }

  LogicalResult runOn(ModuleOp module, func::FuncOp func) {
    SmallVector<func::CallOp> calls;
    func.walk([&](func::CallOp call) {
      if (call.getCallee().starts_with(disc::kLibraryCallPrefix))
        calls.push_back(call);
    });
    if (calls.empty())
      return success();
    OpBuilder top = OpBuilder::atBlockBegin(&func.getBody().front());
    llvm::MapVector<StringRef, Value> uploaded; // global name -> device copy
    for (func::CallOp call : calls) {
      OpBuilder b(call);
      for (OpOperand &operand : call->getOpOperands()) {
        Value v = operand.get();
        auto global = disc::cuda::viewedConstant(v);
        if (!global)
          continue;
        Value &dev = uploaded[global.getName()];
        if (!dev) {
          auto type = cast<MemRefType>(global.getType());
          if (!type.hasStaticShape() || !type.getLayout().isIdentity())
            return call.emitError("a library call reads a constant of type ")
                   << type << " that has no device copy";
          Location loc = global.getLoc();
          Value host =
              memref::GetGlobalOp::create(top, loc, type, global.getName());
          Value bytes = arith::ConstantOp::create(
              top, loc,
              top.getI64IntegerAttr(
                  disc::cuda::elementBytes(type.getElementType()) *
                  type.getNumElements()));
          dev = func::CallOp::create(
                    top, loc,
                    disc::cuda::getOrCreateConstantUploadFn(module, type),
                    ValueRange{host, bytes})
                    .getResult(0);
        }
        // Re-take the view chain on the device copy.
        operand.set(disc::cuda::retakeViews(b, v, global.getResult(), dev));
      }
    }
    return success();
  }
};
} // namespace
