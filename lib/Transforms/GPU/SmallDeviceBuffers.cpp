//===- SmallDeviceBuffers.cpp - disc-gpu-small-device-buffers -------------===//
//
// The small static buffers left after the host placement that do not
// escape (the memory model's stack buffers, kMaxStackBufferBytes) get a
// per-session device slot from the runtime (`disc_device_scratch`),
// outside the tracked peak like the CPU's stack; with `emulate`, the host
// stack.
//
//===----------------------------------------------------------------------===//
#include "disc/Transforms/GPU/Passes.h"

#include "Utils.h"

#include "disc/Target/RuntimeSymbols.h"

namespace mlir::disc {
#define GEN_PASS_DEF_DISCGPUSMALLDEVICEBUFFERS
#include "disc/Transforms/GPU/Passes.h.inc"
} // namespace mlir::disc

using namespace mlir;

/// The small static allocations of `func`'s entry block that do not
/// escape.
static SmallVector<memref::AllocOp>
collectLocalSmallBuffers(func::FuncOp func) {
  SmallVector<memref::AllocOp> allocs;
  for (Operation &op : func.getBody().front())
    if (auto alloc = dyn_cast<memref::AllocOp>(op))
      if (disc::cuda::isSmallStatic(alloc.getType()) &&
          !disc::cuda::collectUses(alloc.getResult()).other)
        allocs.push_back(alloc);
  return allocs;
}

/// Declares `disc_device_scratch(i64 site, i64 bytes) -> memref<?xi8>`.
static func::FuncOp createScratchFn(ModuleOp module) {
  OpBuilder mb = OpBuilder::atBlockEnd(module.getBody());
  auto raw = MemRefType::get({ShapedType::kDynamic}, mb.getI8Type());
  auto scratchFn = func::FuncOp::create(
      mb, module.getLoc(), disc::kDeviceScratchFn,
      mb.getFunctionType({mb.getI64Type(), mb.getI64Type()}, {raw}));
  scratchFn.setPrivate();
  scratchFn->setAttr("llvm.emit_c_interface", mb.getUnitAttr());
  return scratchFn;
}

/// A view of `alloc`'s type on the device slot `site` that `scratchFn`
/// returns.
static Value createDeviceSlot(memref::AllocOp alloc, func::FuncOp scratchFn,
                              int64_t site) {
  OpBuilder b(alloc);
  Location loc = alloc.getLoc();
  MemRefType type = alloc.getType();
  int64_t bytes =
      type.getNumElements() * disc::cuda::elementBytes(type.getElementType());
  Value id = arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(site));
  Value size = arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(bytes));
  Value raw = func::CallOp::create(b, loc, scratchFn, ValueRange{id, size})
                  .getResult(0);
  Value c0 = arith::ConstantIndexOp::create(b, loc, 0);
  return memref::ViewOp::create(b, loc, type, raw, c0, ValueRange{});
}

namespace {
struct SmallDeviceBuffersPass
    : public disc::impl::DiscGpuSmallDeviceBuffersBase<SmallDeviceBuffersPass> {
  using DiscGpuSmallDeviceBuffersBase::DiscGpuSmallDeviceBuffersBase;

  void runOnOperation() override {
    int64_t site = 0;
    func::FuncOp scratchFn;
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      for (memref::AllocOp alloc : collectLocalSmallBuffers(func)) {
        if (emulate) {
          OpBuilder b(alloc);
          disc::cuda::replaceAllocation(
              alloc,
              memref::AllocaOp::create(b, alloc.getLoc(), alloc.getType(),
                                       alloc.getAlignmentAttr()));
          continue;
        }
        if (!scratchFn)
          scratchFn = createScratchFn(getOperation());
        disc::cuda::replaceAllocation(
            alloc, createDeviceSlot(alloc, scratchFn, site++));
      }
    }
  }
};
} // namespace
