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
using disc::cuda::collectUses;
using disc::cuda::elementBytes;
using disc::cuda::isSmallStatic;

namespace {

struct SmallDeviceBuffersPass
    : public disc::impl::DiscGpuSmallDeviceBuffersBase<SmallDeviceBuffersPass> {
  using DiscGpuSmallDeviceBuffersBase::DiscGpuSmallDeviceBuffersBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    func::FuncOp scratchFn;
    int64_t site = 0;
    for (auto func : module.getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      Block &entry = func.getBody().front();
      SmallVector<memref::AllocOp> allocs;
      for (Operation &op : entry)
        if (auto alloc = dyn_cast<memref::AllocOp>(op))
          if (isSmallStatic(alloc.getType()) &&
              !collectUses(alloc.getResult()).other)
            allocs.push_back(alloc);
      for (memref::AllocOp alloc : allocs) {
        OpBuilder b(alloc);
        Location loc = alloc.getLoc();
        MemRefType type = alloc.getType();
        Value replacement;
        if (emulate) {
          replacement =
              memref::AllocaOp::create(b, loc, type, alloc.getAlignmentAttr());
        } else {
          if (!scratchFn) {
            OpBuilder mb = OpBuilder::atBlockEnd(module.getBody());
            auto raw = MemRefType::get({ShapedType::kDynamic}, mb.getI8Type());
            scratchFn = func::FuncOp::create(
                mb, module.getLoc(), disc::kDeviceScratchFn,
                mb.getFunctionType({mb.getI64Type(), mb.getI64Type()}, {raw}));
            scratchFn.setPrivate();
            scratchFn->setAttr("llvm.emit_c_interface", mb.getUnitAttr());
          }
          int64_t bytes =
              type.getNumElements() * elementBytes(type.getElementType());
          Value id =
              arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(site++));
          Value size =
              arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(bytes));
          Value raw =
              func::CallOp::create(b, loc, scratchFn, ValueRange{id, size})
                  .getResult(0);
          Value c0 = arith::ConstantIndexOp::create(b, loc, 0);
          replacement =
              memref::ViewOp::create(b, loc, type, raw, c0, ValueRange{});
        }
        SmallVector<Operation *> deallocs;
        for (Operation *user : alloc->getUsers())
          if (isa<memref::DeallocOp>(user))
            deallocs.push_back(user);
        for (Operation *d : deallocs)
          d->erase();
        alloc.replaceAllUsesWith(replacement);
        alloc.erase();
      }
    }
  }
};

} // namespace
