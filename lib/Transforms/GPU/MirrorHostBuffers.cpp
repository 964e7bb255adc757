//===- MirrorHostBuffers.cpp - disc-gpu-mirror-host-buffers ---------------===//
//
// A small static device buffer that the host also reads or writes (a
// buffer disc-gpu-place-host-buffers could not keep on the host, or an
// entry argument) gets a host copy; kernels and host code stay coherent
// through copies on the stream around each launch that uses the buffer.
//
//===----------------------------------------------------------------------===//
#include "disc/Transforms/GPU/Passes.h"

#include "Utils.h"

#include "llvm/ADT/SetVector.h"

namespace mlir::disc {
#define GEN_PASS_DEF_DISCGPUMIRRORHOSTBUFFERS
#include "disc/Transforms/GPU/Passes.h.inc"
} // namespace mlir::disc

using namespace mlir;
using disc::cuda::BufferUses;
using disc::cuda::collectUses;
using disc::cuda::inDeviceCode;
using disc::cuda::isSmallStatic;
using disc::cuda::retakeViews;

namespace {

void copyOnStream(OpBuilder &b, Location loc, Value dst, Value src) {
  Value token = gpu::WaitOp::create(b, loc, b.getType<gpu::AsyncTokenType>(),
                                    ValueRange{})
                    .getAsyncToken();
  token = gpu::MemcpyOp::create(b, loc, b.getType<gpu::AsyncTokenType>(),
                                ValueRange{token}, dst, src)
              .getAsyncToken();
  gpu::WaitOp::create(b, loc, Type(), ValueRange{token});
}

struct MirrorHostBuffersPass
    : public disc::impl::DiscGpuMirrorHostBuffersBase<MirrorHostBuffersPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    // Small device buffers: allocations, and entry arguments (inputs such
    // as a Reshape's shape or TopK's k, copied to the device by the
    // runtime).
    SmallVector<Value> roots;
    Block &entry = func.getBody().front();
    for (BlockArgument arg : entry.getArguments())
      if (auto type = dyn_cast<MemRefType>(arg.getType());
          type && isSmallStatic(type))
        roots.push_back(arg);
    func.walk([&](memref::AllocOp alloc) {
      if (!inDeviceCode(alloc) && isSmallStatic(alloc.getType()))
        roots.push_back(alloc.getResult());
    });
    for (Value root : roots) {
      BufferUses uses = collectUses(root);
      bool isArg = isa<BlockArgument>(root);
      if (uses.host.empty() ||
          (!isArg && uses.launches.empty() && uses.returns.empty()))
        continue;
      bool hostWrites = llvm::any_of(uses.host, [](OpOperand *use) {
        return isa<memref::StoreOp>(use->getOwner());
      });
      OpBuilder b(&entry, entry.begin());
      Location loc = root.getLoc();
      auto type = cast<MemRefType>(root.getType());
      IntegerAttr align;
      if (auto alloc = root.getDefiningOp<memref::AllocOp>())
        align = alloc.getAlignmentAttr();
      Value twin = memref::AllocaOp::create(b, loc, type, align);
      if (isArg)
        copyOnStream(b, loc, twin, root);
      for (OpOperand *use : uses.host) {
        b.setInsertionPoint(use->getOwner());
        use->set(retakeViews(b, use->get(), root, twin));
      }
      llvm::SetVector<Operation *> launches(uses.launches.begin(),
                                            uses.launches.end());
      for (Operation *launch : launches) {
        b.setInsertionPoint(launch);
        if (hostWrites)
          copyOnStream(b, loc, root, twin);
        b.setInsertionPointAfter(launch);
        copyOnStream(b, loc, twin, root);
      }
      // A returned buffer the host wrote: its device copy before the return.
      if (hostWrites)
        for (Operation *ret : llvm::SetVector<Operation *>(
                 uses.returns.begin(), uses.returns.end())) {
          b.setInsertionPoint(ret);
          copyOnStream(b, loc, root, twin);
        }
    }
  }
};

} // namespace
