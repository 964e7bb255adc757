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

/// Host buffers and the linalg ops that touch each.
using HostBuffers = llvm::MapVector<Value, SmallVector<linalg::LinalgOp>>;

/// Whether every buffer operand of `op` is a host buffer or a constant.
static bool allOnHost(linalg::LinalgOp op, const HostBuffers &host) {
  return llvm::all_of(op->getOperands(), [&](Value v) {
    if (!isa<MemRefType>(v.getType()))
      return true;
    Value root = disc::cuda::viewRoot(v);
    return host.count(root) || root.getDefiningOp<memref::GetGlobalOp>();
  });
}

/// Candidates: small static allocations touched only by host accesses
/// and linalg ops. Then, to a fixpoint, drop a candidate one of whose
/// linalg ops also touches a buffer that is neither a candidate nor a
/// constant: that op runs as a kernel, so the buffer is device memory.
static HostBuffers collectHostBuffers(func::FuncOp func) {
  HostBuffers host;
  func.walk([&](memref::AllocOp alloc) {
    if (disc::cuda::inDeviceCode(alloc) ||
        !disc::cuda::isSmallStatic(alloc.getType()))
      return;
    disc::cuda::BufferUses uses = disc::cuda::collectUses(alloc.getResult());
    if (!uses.other && uses.launches.empty())
      host[alloc.getResult()] = std::move(uses.linalg);
  });
  auto allHost = [&](linalg::LinalgOp op) { return allOnHost(op, host); };
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
  return host;
}

/// Lowers the linalg ops of `func` over host buffers only to host loops.
static LogicalResult lowerToHostLoops(func::FuncOp func,
                                      const HostBuffers &host) {
  SmallVector<linalg::LinalgOp> hostOps;
  func.walk([&](linalg::LinalgOp op) {
    if (!disc::cuda::inDeviceCode(op) && allOnHost(op, host) &&
        llvm::any_of(op->getOperands(), [&](Value v) {
          return isa<MemRefType>(v.getType()) &&
                 host.count(disc::cuda::viewRoot(v));
        }))
      hostOps.push_back(op);
  });
  IRRewriter rewriter(func.getContext());
  for (linalg::LinalgOp op : hostOps) {
    rewriter.setInsertionPoint(op);
    if (failed(linalg::linalgOpToLoops(rewriter, op)))
      return op.emitError(
          "cannot lower a host-side shape computation to loops");
    rewriter.eraseOp(op);
  }
  return success();
}

/// Moves the host buffers to the stack of `func`'s entry block (static
/// sizes, so a buffer allocated in a loop body reuses one slot).
static void moveToEntryStack(func::FuncOp func, const HostBuffers &host) {
  for (Value buffer : llvm::make_first_range(host)) {
    auto alloc = buffer.getDefiningOp<memref::AllocOp>();
    OpBuilder b = OpBuilder::atBlockBegin(&func.getBody().front());
    disc::cuda::replaceAllocation(
        alloc, memref::AllocaOp::create(b, alloc.getLoc(), alloc.getType(),
                                        alloc.getAlignmentAttr()));
  }
}

namespace {
struct PlaceHostBuffersPass
    : public disc::impl::DiscGpuPlaceHostBuffersBase<PlaceHostBuffersPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    HostBuffers host = collectHostBuffers(func);
    if (failed(lowerToHostLoops(func, host)))
      return signalPassFailure();
    moveToEntryStack(func, host);
  }
};
} // namespace
