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

/// Small device buffers of `func`: allocations, and entry arguments (inputs
/// such as a Reshape's shape or TopK's k, copied to the device by the
/// runtime). None in a declaration.
static SmallVector<Value> collectSmallDeviceBuffers(func::FuncOp func) {
  SmallVector<Value> roots;
  if (func.isExternal())
    return roots;
  for (BlockArgument arg : func.getArguments())
    if (auto type = dyn_cast<MemRefType>(arg.getType());
        type && disc::cuda::isSmallStatic(type))
      roots.push_back(arg);
  func.walk([&](memref::AllocOp alloc) {
    if (!disc::cuda::inDeviceCode(alloc) &&
        disc::cuda::isSmallStatic(alloc.getType()))
      roots.push_back(alloc.getResult());
  });
  return roots;
}

/// Gives `root` a host copy on the stack of `entry` when the host reads or
/// writes it and a kernel or the caller sees it too: host accesses go to
/// the copy, and copies on the stream around each launch (and before a
/// return) keep both sides coherent.
static void mirrorOnHost(Value root, Block &entry) {
  disc::cuda::BufferUses uses = disc::cuda::collectUses(root);
  bool isArg = isa<BlockArgument>(root);
  if (uses.host.empty() ||
      (!isArg && uses.launches.empty() && uses.returns.empty()))
    return;
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
  // Device to host: the host reads the copy next, so it waits for it.
  if (isArg)
    disc::cuda::copyOnStream(b, loc, twin, root, /*wait=*/true);
  for (OpOperand *use : uses.host) {
    b.setInsertionPoint(use->getOwner());
    use->set(disc::cuda::retakeViews(b, use->get(), root, twin));
  }
  llvm::SetVector<Operation *> launches(uses.launches.begin(),
                                        uses.launches.end());
  for (Operation *launch : launches) {
    b.setInsertionPoint(launch);
    if (hostWrites)
      disc::cuda::copyOnStream(b, loc, root, twin, /*wait=*/false);
    b.setInsertionPointAfter(launch);
    disc::cuda::copyOnStream(b, loc, twin, root, /*wait=*/true);
  }
  // A returned buffer the host wrote: its device copy before the return.
  if (hostWrites)
    for (Operation *ret : llvm::SetVector<Operation *>(uses.returns.begin(),
                                                       uses.returns.end())) {
      b.setInsertionPoint(ret);
      disc::cuda::copyOnStream(b, loc, root, twin, /*wait=*/false);
    }
}

namespace {
struct MirrorHostBuffersPass
    : public disc::impl::DiscGpuMirrorHostBuffersBase<MirrorHostBuffersPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    for (Value root : collectSmallDeviceBuffers(func))
      mirrorOnHost(root, func.getBody().front());
  }
};
} // namespace
