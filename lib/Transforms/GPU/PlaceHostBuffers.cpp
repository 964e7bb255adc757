//===- PlaceHostBuffers.cpp - disc-gpu-place-host-buffers -----------------===//
//
// On the CUDA target every runtime allocation is device memory. Shape
// tensors (Shape, shape arithmetic feeding Reshape/Expand/Slice, Range
// bounds) are small buffers the host reads to size allocations and
// launches: disc-gpu-place-host-buffers keeps them on the host stack and
// computes them with host loops. A small buffer that both a kernel and the
// host touch stays a device buffer with a host copy
// (disc-gpu-mirror-host-buffers). Small means static and at most
// disc::kMaxStackBufferBytes, the memory model's stack rule, so the buffers
// moved to the stack are exactly those the model already leaves out of the
// peak (docs/memory.md).
//
//===----------------------------------------------------------------------===//
#include "disc/Transforms/GPU/Passes.h"

#include "Utils.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/MapVector.h"

namespace mlir::disc {
#define GEN_PASS_DEF_DISCGPUPLACEHOSTBUFFERS
#include "disc/Transforms/GPU/Passes.h.inc"
} // namespace mlir::disc

using namespace mlir;
using disc::cuda::BufferUses;
using disc::cuda::collectUses;
using disc::cuda::inDeviceCode;
using disc::cuda::isSmallStatic;
using disc::cuda::viewRoot;

namespace {

struct PlaceHostBuffersPass
    : public disc::impl::DiscGpuPlaceHostBuffersBase<PlaceHostBuffersPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    // Candidates: small static allocations touched only by host accesses
    // and linalg ops. Then, to a fixpoint, drop a candidate one of whose
    // linalg ops also touches a buffer that is neither a candidate nor a
    // constant: that op runs as a kernel, so the buffer is device memory.
    llvm::MapVector<Value, SmallVector<linalg::LinalgOp>> host;
    func.walk([&](memref::AllocOp alloc) {
      if (inDeviceCode(alloc) || !isSmallStatic(alloc.getType()))
        return;
      BufferUses uses = collectUses(alloc.getResult());
      if (!uses.other && uses.launches.empty())
        host[alloc.getResult()] = std::move(uses.linalg);
    });
    auto onHost = [&](Value operand) {
      Value root = viewRoot(operand);
      return host.count(root) || root.getDefiningOp<memref::GetGlobalOp>();
    };
    auto allHost = [&](linalg::LinalgOp op) {
      return llvm::all_of(op->getOperands(), [&](Value v) {
        return !isa<MemRefType>(v.getType()) || onHost(v);
      });
    };
    for (bool changed = true; changed;) {
      changed = false;
      for (auto it = host.begin(); it != host.end(); ++it) {
        if (llvm::all_of(it->second, allHost))
          continue;
        host.erase(it);
        changed = true;
        break;
      }
    }
    // Linalg ops over host buffers only: host loops.
    SmallVector<linalg::LinalgOp> hostOps;
    func.walk([&](linalg::LinalgOp op) {
      if (!inDeviceCode(op) && allHost(op) &&
          llvm::any_of(op->getOperands(), [&](Value v) {
            return isa<MemRefType>(v.getType()) && host.count(viewRoot(v));
          }))
        hostOps.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::LinalgOp op : hostOps) {
      rewriter.setInsertionPoint(op);
      if (failed(linalg::linalgOpToLoops(rewriter, op))) {
        op.emitError("cannot lower a host-side shape computation to loops");
        return signalPassFailure();
      }
      rewriter.eraseOp(op);
    }
    // Host buffers: the stack of the entry block (static sizes, so a buffer
    // allocated in a loop body reuses one slot).
    Block &entry = func.getBody().front();
    for (auto &[value, ops] : host) {
      auto alloc = value.getDefiningOp<memref::AllocOp>();
      OpBuilder b(&entry, entry.begin());
      auto alloca = memref::AllocaOp::create(b, alloc.getLoc(), alloc.getType(),
                                             alloc.getAlignmentAttr());
      SmallVector<Operation *> deallocs;
      for (Operation *user : alloc->getUsers())
        if (isa<memref::DeallocOp>(user))
          deallocs.push_back(user);
      for (Operation *d : deallocs)
        d->erase();
      alloc.replaceAllUsesWith(alloca.getResult());
      alloc.erase();
    }
  }
};

} // namespace
