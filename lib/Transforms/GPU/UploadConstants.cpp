//===- UploadConstants.cpp - disc-gpu-upload-constants --------------------===//
//
// Constants live in model.so's host memory. A kernel that reads one gets
// the runtime's device copy of it: `func.call @disc_device_constant_<rank>_<k>
// (%global, %bytes)` (a C-interface function of the model wrapper over
// `disc_ral_context.device_constant`), which uploads the constant on the
// session's first request and keeps it, outside the tracked peak, like
// model.so's constants on the CPU (docs/memory.md).
//
//===----------------------------------------------------------------------===//
#include "disc/Transforms/GPU/Passes.h"

#include "Utils.h"

#include "disc/Target/RuntimeSymbols.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::disc {
#define GEN_PASS_DEF_DISCGPUUPLOADCONSTANTS
#include "disc/Transforms/GPU/Passes.h.inc"
} // namespace mlir::disc

using namespace mlir;

/// Makes the kernel `launch` read the runtime's device copy of each
/// constant it captures, requested once before the launch (the upload
/// functions are declared in `module`).
static LogicalResult readDeviceCopies(ModuleOp module, gpu::LaunchOp launch) {
  llvm::SetVector<Value> captured;
  getUsedValuesDefinedAbove(launch.getBody(), captured);
  OpBuilder b(launch);
  Location loc = launch.getLoc();
  llvm::DenseMap<Value, Value> uploaded; // global -> device copy
  for (Value v : captured) {
    auto global = disc::cuda::viewedConstant(v);
    if (!global)
      continue;
    Value root = global.getResult();
    Value dev = uploaded.lookup(root);
    if (!dev) {
      auto type = cast<MemRefType>(root.getType());
      int64_t eltBits =
          type.getElementType().isIndex() ? 64 : type.getElementTypeBitWidth();
      if (!type.hasStaticShape() || !type.getLayout().isIdentity())
        return launch.emitError("a kernel reads a constant of type ")
               << type << " that has no device copy";
      Value bytes = arith::ConstantOp::create(
          b, loc,
          b.getI64IntegerAttr(type.getNumElements() *
                              std::max<int64_t>(1, (eltBits + 7) / 8)));
      dev = func::CallOp::create(
                b, loc, disc::cuda::getOrCreateConstantUploadFn(module, type),
                ValueRange{root, bytes})
                .getResult(0);
      uploaded[root] = dev;
    }
    // Re-take the view chain on the device copy.
    Value mapped = disc::cuda::retakeViews(b, v, root, dev);
    v.replaceUsesWithIf(mapped, [&](OpOperand &use) {
      return launch->isProperAncestor(use.getOwner());
    });
  }
  return success();
}

namespace {
struct UploadConstantsPass
    : public disc::impl::DiscGpuUploadConstantsBase<UploadConstantsPass> {
  void runOnOperation() override {
    for (gpu::LaunchOp launch : disc::cuda::collectLaunches(getOperation()))
      if (failed(readDeviceCopies(getOperation(), launch)))
        return signalPassFailure();
  }
};
} // namespace
